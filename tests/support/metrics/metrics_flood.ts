/**
 * A flood of `/metrics` requests, each with a new random bearer token, against the controller process leading on the
 * test control plane, with what it cost: the TokenReviews the API server answered (counted by the API server itself,
 * `apiserver_request_total` on its own `/metrics`), the Lease as read from the API server throughout, and every
 * answer's status and time. Shared by tests/integration/metrics_auth_test.ts (the behaviour) and
 * bench/metrics_flood_bench.ts (the timings).
 *
 * @module
 */
import { selfSignedServingCertificate } from "../../../lib/server/self_signed_certificate.ts";
import { freePort, type SharedControlPlane, testControlPlane, uniqueName } from "../control_plane/control_plane.ts";
import { kubeOk } from "../http/kube_http.ts";
import { eventually } from "../wait/eventually.ts";
import { type Replica, startReplica, stop } from "../controller/controller_process.ts";
import { CONTROLLER_LEASE } from "../controller/controller_identity.ts";

/** Options of {@linkcode runMetricsFlood}. */
export interface MetricsFloodOptions {
  /** Requests in all (default 10,000). */
  requests?: number;
  /** Requests in flight at once (default 200). */
  concurrency?: number;
  /** The controller's Lease duration, seconds (default 6; renew deadline 4 s, retry period 1 s). */
  leaseSeconds?: number;
}

/** One answer of the flood. */
export interface FloodAnswer {
  /** HTTP status (0: no answer within 15 s). */
  status: number;
  /** From sending to the whole answer, milliseconds. */
  ms: number;
  /** The worker's first request, which also opened its TLS connection. */
  first: boolean;
}

/** What the flood cost. */
export interface MetricsFloodResult {
  /** Every answer. */
  answers: FloodAnswer[];
  /** Duration of the flood, seconds. */
  seconds: number;
  /** TokenReviews the API server answered during the flood. */
  tokenReviews: number;
  /** Lease renewals seen during the flood. */
  renewals: number;
  /** Longest time the Lease went without a renewal, milliseconds. */
  longestRenewalGapMs: number;
  /** Set when the Lease changed holder or went unrenewed for a lease duration (the flood then stops early). */
  leaseProblem?: string;
  /** The controller's log lines. */
  log: string[];
  /** Whether a scraper allowed to read `/metrics` was served right after the flood. */
  scraperServedAfter: boolean;
}

/** TokenReviews the API server has answered so far (every code), from its own metrics. */
async function tokenReviews(plane: SharedControlPlane, client: Deno.HttpClient): Promise<number> {
  const response = await fetch(`${plane.url}/metrics`, { client, headers: { authorization: `Bearer ${plane.token}` } });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`the API server's /metrics answered ${response.status}`);
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("apiserver_request_total{") && line.includes('resource="tokenreviews"')) {
      total += Number(line.slice(line.lastIndexOf(" ") + 1));
    }
  }
  return total;
}

/** Reads the Lease every 200 ms; `problem` is set once another holder or a renewal older than `leaseMs` is seen. */
function leaseWatch(plane: SharedControlPlane, client: Deno.HttpClient, leaseMs: number) {
  const state = { renewals: 0, longestGapMs: 0, problem: undefined as string | undefined, stopped: false };
  const running = (async () => {
    let holder: string | undefined;
    let lastRenew = "";
    let lastChangeAt = performance.now();
    while (!state.stopped) {
      const response = await fetch(
        `${plane.url}/apis/coordination.k8s.io/v1/namespaces/${CONTROLLER_LEASE.namespace}/leases/${CONTROLLER_LEASE.name}`,
        {
          client,
          headers: { authorization: `Bearer ${plane.token}` },
        },
      );
      const spec = ((await response.json()) as { spec?: { holderIdentity?: string; renewTime?: string } }).spec;
      const now = performance.now();
      if (spec?.renewTime && spec.renewTime !== lastRenew) {
        if (lastRenew) state.renewals++;
        lastRenew = spec.renewTime;
        lastChangeAt = now;
      }
      state.longestGapMs = Math.max(state.longestGapMs, now - lastChangeAt);
      holder ??= spec?.holderIdentity;
      if (spec?.holderIdentity !== holder) state.problem ??= `the Lease went to "${spec?.holderIdentity}"`;
      if (now - lastChangeAt > leaseMs) {
        state.problem ??= `the Lease was not renewed for ${((now - lastChangeAt) / 1000).toFixed(1)} s`;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return { state, stop: () => (state.stopped = true, running) };
}

/** A service account allowed to `get /metrics`, and a token of it. */
async function scraperToken(plane: SharedControlPlane): Promise<string> {
  const name = uniqueName("metrics-reader");
  await kubeOk(plane, "POST", "/api/v1/namespaces/kube-system/serviceaccounts", {
    body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name } },
  });
  await kubeOk(plane, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
    body: { metadata: { name }, rules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }] },
  });
  await kubeOk(plane, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    body: {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [{ kind: "ServiceAccount", name, namespace: "kube-system" }],
    },
  });
  return (await kubeOk<{ status: { token: string } }>(
    plane,
    "POST",
    `/api/v1/namespaces/kube-system/serviceaccounts/${name}/token`,
    { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 600 } } },
  )).status.token;
}

/**
 * Starts the controller (leading, short Lease periods, a small `--kube-api-qps` budget: 5/s, burst 10) with its
 * HTTPS server on 127.0.0.1, lets a scraper in, floods `/metrics`, and reports.
 */
export async function runMetricsFlood(options: MetricsFloodOptions = {}): Promise<MetricsFloodResult> {
  const requests = options.requests ?? 10_000;
  const concurrency = options.concurrency ?? 200;
  const leaseSeconds = options.leaseSeconds ?? 6;
  const plane = testControlPlane();
  const dir = await Deno.makeTempDir();
  const tls = await selfSignedServingCertificate("localhost");
  await Deno.writeTextFile(`${dir}/tls.crt`, tls.cert);
  await Deno.writeTextFile(`${dir}/tls.key`, tls.key);
  const port = freePort();
  const kube = Deno.createHttpClient({ caCerts: [plane.caCert] });
  const flood = Deno.createHttpClient({ caCerts: [tls.ca], http2: false, poolMaxIdlePerHost: concurrency });
  let replica: Replica | undefined;
  let watch: ReturnType<typeof leaseWatch> | undefined;
  try {
    replica = await startReplica([
      `--leader-elect-lease-duration=${leaseSeconds}s`,
      "--leader-elect-renew-deadline=4s",
      "--leader-elect-retry-period=1s",
      "--kube-api-qps=5",
      "--kube-api-burst=10",
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
      `--tls-cert-file=${dir}/tls.crt`,
      `--tls-private-key-file=${dir}/tls.key`,
    ]);
    await replica.waitFor(/became leader/);
    await replica.waitFor(/serving health and metrics/);
    const scraper = await scraperToken(plane);
    const scrape = () =>
      fetch(`https://127.0.0.1:${port}/metrics`, { client: flood, headers: { authorization: `Bearer ${scraper}` } })
        .then(async (response) => (await response.arrayBuffer(), response.status));
    await eventually(async () => (await scrape()) === 200, 20_000, "the scraper is allowed");

    watch = leaseWatch(plane, kube, leaseSeconds * 1000);
    const reviewsBefore = await tokenReviews(plane, kube);
    const answers: FloodAnswer[] = [];
    let sent = 0;
    const started = performance.now();
    const worker = async () => {
      for (let first = true; sent < requests && !watch!.state.problem; first = false) {
        sent++;
        const token = `${crypto.randomUUID()}.${crypto.randomUUID()}`;
        const at = performance.now();
        try {
          const response = await fetch(`https://127.0.0.1:${port}/metrics`, {
            client: flood,
            headers: { authorization: `Bearer ${token}` },
            signal: AbortSignal.timeout(15_000),
          });
          await response.arrayBuffer();
          answers.push({ status: response.status, ms: performance.now() - at, first });
        } catch {
          answers.push({ status: 0, ms: performance.now() - at, first });
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const seconds = (performance.now() - started) / 1000;
    const reviews = (await tokenReviews(plane, kube)) - reviewsBefore;
    const scraperServedAfter = await eventually(async () => (await scrape()) === 200, 5_000, "the scraper")
      .then(() => true, () => false);
    await watch.stop();
    return {
      answers,
      seconds,
      tokenReviews: reviews,
      renewals: watch.state.renewals,
      longestRenewalGapMs: watch.state.longestGapMs,
      leaseProblem: watch.state.problem,
      log: replica.lines.map((line) => line.text),
      scraperServedAfter,
    };
  } finally {
    await watch?.stop();
    flood.close();
    kube.close();
    if (replica) await stop(replica);
    await Deno.remove(dir, { recursive: true });
  }
}

/** The `p`-quantile (0…1) of sorted `values`. */
export function quantile(sorted: readonly number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN;
}

/** One line summing up `result`: answers by status, TokenReviews, the 429s' times, the Lease. */
export function floodSummary(result: MetricsFloodResult): string {
  const byStatus: Record<number, number> = {};
  for (const { status } of result.answers) byStatus[status] = (byStatus[status] ?? 0) + 1;
  const throttled = result.answers.filter((a) => a.status === 429 && !a.first).map((a) => a.ms).sort((a, b) => a - b);
  const ms = (p: number) => quantile(throttled, p).toFixed(1);
  return `${result.answers.length} answers in ${result.seconds.toFixed(1)} s ${JSON.stringify(byStatus)}; ` +
    `${result.tokenReviews} TokenReviews; 429 (on an open connection) p50 ${ms(0.5)} ms, p95 ${ms(0.95)} ms, ` +
    `p99 ${ms(0.99)} ms, max ${ms(1)} ms; Lease renewed ${result.renewals} times, longest gap ` +
    `${(result.longestRenewalGapMs / 1000).toFixed(1)} s${result.leaseProblem ? `; ${result.leaseProblem}` : ""}`;
}
