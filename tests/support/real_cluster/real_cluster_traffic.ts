/**
 * Traffic through the real cluster's load balancers, from the host: one request to agnhost's `/hostname` behind a
 * published address, a steady stream of them with the failures counted, and the simulator's view of a load balancer's
 * members (health and connections, `/_simulator/state`).
 *
 * @module
 */

/** A member as `/_simulator/state` shows it (data plane fields included). */
export interface MemberView {
  /** The member's address (a node IP). */
  address: string;
  /** Its port (the NodePort). */
  port: number;
  /** `up`, `down`, or null while nothing checks it. */
  health: "up" | "down" | null;
  /** Its weight (0 while it drains; absent where the document leaves it out, meaning the default). */
  weight?: number;
  /** Connections the data plane forwarded to it. */
  connections_total: number;
}

/** A load balancer as `/_simulator/state` shows it (the fields read here). */
export interface LoadBalancerDoc {
  /** Its name. */
  name?: string;
  /** Its labels (`ccm.ankra.cloud/service` = `<namespace>/<name>`). */
  labels?: Record<string, string>;
  /** Its backends with their members. */
  backends?: { members: MemberView[] }[];
}

/** Every member of every backend of `lb`. */
export function memberStates(lb: LoadBalancerDoc): MemberView[] {
  return (lb.backends ?? []).flatMap((b) => b.members);
}

/** The load balancer of Service `namespace/name` in a `/_simulator/state` document, if any. */
export function loadBalancerOf(state: { load_balancers?: LoadBalancerDoc[] }, namespace: string, name: string) {
  return (state.load_balancers ?? []).find((lb) => lb.labels?.["ccm.ankra.cloud/service"] === `${namespace}/${name}`);
}

/** The URL of `path` on `address:port` (IPv6 in brackets). */
export function urlOf(address: string, port: number, path: string): string {
  return `http://${address.includes(":") ? `[${address}]` : address}:${port}${path}`;
}

/** What one request saw: the pod's name when answered, else what went wrong; and how long it took. */
export interface RequestOutcome {
  /** The pod's name (the answer's body), when answered with 200. */
  name?: string;
  /** What went wrong otherwise: the HTTP status, or the error's name and message. */
  problem?: string;
  /** Milliseconds from sending to the answer or the failure. */
  ms: number;
}

/** One GET of `/hostname` on `address:port` on a fresh connection, giving up after `timeoutMs`. */
export async function requestOnce(address: string, port: number, timeoutMs: number): Promise<RequestOutcome> {
  const client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    const response = await fetch(urlOf(address, port, "/hostname"), {
      client,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = (await response.text()).trim();
    return response.ok ? { name: text, ms: ms() } : { problem: `HTTP ${response.status}`, ms: ms() };
  } catch (error) {
    const { name, message } = error as Error;
    return { problem: `${name}: ${message}`, ms: ms() };
  } finally {
    client.close();
  }
}

/**
 * One GET of `/hostname` on `address:port` on a fresh connection; the answer (the pod's name), or undefined when the
 * request failed or timed out (`timeoutMs`).
 */
export async function requestHostname(address: string, port: number, timeoutMs = 3_000): Promise<string | undefined> {
  return (await requestOnce(address, port, timeoutMs)).name;
}

/** A running stream of requests. */
export interface RequestStream {
  /** Requests sent so far. */
  sent(): number;
  /** The failures so far: when each was sent, and what was wrong. */
  failures(): { at: number; detail: string }[];
  /** The answers that took longer than {@linkcode SLOW_ANSWER_MS} so far: when each was sent, and how long it took. */
  slow(): { at: number; ms: number; name: string }[];
  /** Stops it; resolves with the totals once the last request has finished. */
  stop(): Promise<{ sent: number; failed: number; answeredBy: Map<string, number>; slowestMs: number }>;
}

/** An answer slower than this (a member connect that timed out and was sent to another member) is counted as slow. */
export const SLOW_ANSWER_MS = 1_000;

/** How long a request of a stream may take: longer than a member connect (5 s) and one redispatch after it. */
export const STREAM_REQUEST_TIMEOUT_MS = 12_000;

/**
 * Sends a request to `/hostname` every `1000 / perSecond` ms (each on a fresh connection, each allowed
 * {@linkcode STREAM_REQUEST_TIMEOUT_MS}) until stopped. A failure keeps the request's number, when it was sent, how
 * long it took and what went wrong; the slowest answer is reported with the totals.
 */
export function startRequestStream(address: string, port: number, perSecond: number): RequestStream {
  let sent = 0;
  let slowestMs = 0;
  const slow: { at: number; ms: number; name: string }[] = [];
  const failures: { at: number; detail: string }[] = [];
  const answeredBy = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  const timer = setInterval(() => {
    const number = ++sent;
    const at = performance.now();
    const sentAt = new Date().toISOString();
    const request = requestOnce(address, port, STREAM_REQUEST_TIMEOUT_MS).then(({ name, problem, ms }) => {
      if (name) {
        answeredBy.set(name, (answeredBy.get(name) ?? 0) + 1);
        slowestMs = Math.max(slowestMs, ms);
        if (ms > SLOW_ANSWER_MS) slow.push({ at, ms, name });
      } else {
        failures.push({
          at,
          detail: `request ${number} to ${address}:${port}, sent at ${sentAt}, failed after ${ms} ms: ${problem}`,
        });
      }
    });
    inFlight.add(request);
    request.finally(() => inFlight.delete(request));
  }, 1000 / perSecond);
  return {
    sent: () => sent,
    failures: () => [...failures],
    slow: () => [...slow],
    async stop() {
      clearInterval(timer);
      await Promise.all([...inFlight]);
      return { sent, failed: failures.length, answeredBy, slowestMs };
    },
  };
}
