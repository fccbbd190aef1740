/**
 * The burst benchmark's own apiserver access (bench/burst_bench.ts): one HTTP client to the test control plane,
 * bounded concurrency, and a list-then-watch tracker instead of polling.
 *
 * @module
 */
import { testControlPlane } from "../tests/support/control_plane/control_plane.ts";
import { eventually } from "../tests/support/wait/eventually.ts";
import { progress, sleep } from "./burst_settings.ts";

/** The test control plane the benchmark runs against. */
export const plane = testControlPlane();

/** The one HTTP client of the harness (closed at the end of the run). */
export const http = Deno.createHttpClient({ caCerts: [plane.caCert] });

/** The fields of a Service or Node the benchmark reads. */
export interface KubeObject {
  metadata: {
    name: string;
    resourceVersion?: string;
    finalizers?: string[];
  };
  spec?: { providerID?: string; taints?: { key: string }[] };
  status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } };
}

/**
 * One apiserver request as the admin, the body as JSON (a merge patch for PATCH); waits and tries again on 429 (the
 * apiserver shedding load), up to 20 times; throws when `accept` refuses the status.
 */
export async function kube<T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
  accept: (status: number) => boolean = (s) => s >= 200 && s < 300,
): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${plane.token}`, accept: "application/json" };
  if (body !== undefined) {
    headers["content-type"] = method === "PATCH" ? "application/merge-patch+json" : "application/json";
  }
  for (let attempt = 0;; attempt++) {
    const response = await fetch(`${plane.url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      client: http,
    });
    const text = await response.text();
    // The apiserver sheds load with 429 (max-requests-inflight); the harness waits and tries again.
    if (response.status === 429 && attempt < 20) {
      await sleep(200 * (attempt + 1));
      continue;
    }
    if (!accept(response.status)) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return (text ? JSON.parse(text) : {}) as T;
  }
}

/** Runs `work` over `items` with at most `concurrency` in flight. */
export async function pool<T>(items: T[], concurrency: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/**
 * Lists `path` once and then watches it (re-listing when a watch ends or its resourceVersion expired), handing every
 * object seen to `seen` with the moment it arrived. Resolves once the first list is done and the watch is open.
 */
export async function track(
  path: string,
  query: string,
  seen: (object: KubeObject, atMs: number) => void,
  signal: AbortSignal,
): Promise<{ done: Promise<void> }> {
  const sep = query ? `${query}&` : "";
  const relist = async (): Promise<string> => {
    const answer = await kube<{ metadata: { resourceVersion: string }; items: KubeObject[] }>(
      "GET",
      `${path}?${query}`,
    );
    const at = Date.now();
    for (const item of answer.items) seen(item, at);
    return answer.metadata.resourceVersion;
  };
  const open = async (rv: string): Promise<Response | undefined> => {
    const response = await fetch(
      `${plane.url}${path}?${sep}watch=1&allowWatchBookmarks=true&timeoutSeconds=240&resourceVersion=${rv}`,
      { headers: { authorization: `Bearer ${plane.token}`, accept: "application/json" }, client: http, signal },
    );
    if (response.ok && response.body) return response;
    await response.body?.cancel();
    return undefined;
  };
  /** Lists again, retrying until it works or tracking stops. */
  const relistSoon = async (): Promise<string> => {
    for (;;) {
      try {
        return await relist();
      } catch (error) {
        if (signal.aborted) return "";
        progress(`listing ${path} failed (${(error as Error).message}); trying again`);
        await sleep(500);
      }
    }
  };
  let rv = await relist();
  let response = await open(rv);
  const done = (async () => {
    while (!signal.aborted) {
      if (response) {
        let relistNeeded = false;
        try {
          let buffer = "";
          for await (const chunk of response.body!.pipeThrough(new TextDecoderStream())) {
            buffer += chunk;
            let newline: number;
            while ((newline = buffer.indexOf("\n")) >= 0) {
              const line = buffer.slice(0, newline).trim();
              buffer = buffer.slice(newline + 1);
              if (!line) continue;
              const event = JSON.parse(line) as { type: string; object: KubeObject & { code?: number } };
              if (event.type === "ERROR") {
                relistNeeded = true;
                continue;
              }
              if (event.object.metadata?.resourceVersion) rv = event.object.metadata.resourceVersion;
              if (event.type === "ADDED" || event.type === "MODIFIED") seen(event.object, Date.now());
            }
          }
        } catch (error) {
          if (signal.aborted) return;
          progress(`watch of ${path} broke (${(error as Error).message}); listing again`);
          relistNeeded = true;
        }
        if (relistNeeded) rv = await relistSoon();
      } else {
        rv = await relistSoon();
      }
      if (signal.aborted) return;
      response = await open(rv).catch(() => undefined);
    }
  })();
  return { done: done.catch((error) => progress(`tracking ${path} ended: ${(error as Error).message}`)) };
}

/**
 * {@linkcode eventually} looking every 250 ms, in the argument order of the benchmark's scenarios: resolves once
 * `check` holds; throws naming `what` after `timeoutMs`.
 */
export function waitUntil(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean> | boolean,
): Promise<void> {
  return eventually(check, { timeoutMs, intervalMs: 250, what });
}
