/**
 * Burst benchmark: how fast the controller serves many new LoadBalancer Services or Nodes at once, on the release
 * bundle with the release flags, against the real test control plane and an in-process Ankra Cloud simulator:
 *
 *     source scripts/env.sh && deno task bench:burst
 *
 * Per simulator rate limit (`BENCH_LIMITS`, default 3,600 and 120 requests/min), each scenario on a clean slate
 * (fresh simulator, fresh controller process, the previous scenario's objects gone):
 *
 * - `BENCH_SERVICES` (default 50,200) new LoadBalancer Services with two TCP ports each, created at once in a fresh
 *   namespace, with `BENCH_BASE_NODES` (5) Ready, initialised nodes: per Service the time from its creation to an
 *   address in its status, and from its load balancer turning `running` in the simulator to that address (target
 *   ≤ 3 s whatever the backlog);
 * - `BENCH_NODES` (default 1000) new kubelet-shaped Nodes (uninitialized taint, matching servers already in the
 *   simulator), created at once: time until each is initialised (providerID set, taint gone).
 *
 * For each: Ankra API calls by operation and answer status, calls per new load balancer, 429 answers (per minute),
 * progress per 30 s, total time, and the lower bound the limit forces (admitted calls ÷ limit). Prints a table per
 * limit and writes bench/burst_report.md (`BENCH_REPORT` for another path).
 *
 * Other knobs: `BENCH_MAIN` (program instead of the freshly built bundle), `BENCH_ENV` (JSON, extra controller
 * environment), `BENCH_ARGS` (extra controller flags, space-separated), `BENCH_DENO_FLAGS`, `BENCH_TIMEOUT_S` (per
 * scenario, default 900), `BENCH_LB_DELAY_MS` (default 1000), `BENCH_SETTLE_S` (calls also counted after the burst
 * was served, default 5), `BENCH_BASE_NODES`, `BENCH_KUBE_CONCURRENCY` (the harness's own requests in flight,
 * default 25), `BENCH_LOG_DIR` (controller logs and the simulator's request logs; a temporary directory by
 * default), `BENCH_COMMAND` (the command
 * line quoted in the report).
 *
 * The harness watches Services and Nodes (one LIST, then a watch) instead of polling, reads the simulator's request
 * log in-process, and sends its own apiserver requests over one HTTP client with bounded concurrency.
 *
 * @module
 */
import { testControlPlane } from "../tests/support/control_plane.ts";
import { kubeletNode } from "../tests/support/kube_http.ts";
import { type RunningSimulator, startSimulator } from "../simulator/server.ts";
import { parseSeed } from "../simulator/seed.ts";
import { releaseBundle } from "./release_bundle.ts";

// ---------------------------------------------------------------------------------------------------------------
// Settings

const env = (name: string) => Deno.env.get(name);
const list = (text: string) => text.split(",").map((s) => s.trim()).filter(Boolean).map(Number);
const SERVICES = list(env("BENCH_SERVICES") ?? "50,200");
const NODES = list(env("BENCH_NODES") ?? "1000");
const LIMITS = list(env("BENCH_LIMITS") ?? "3600,120");
const BASE_NODES = Number(env("BENCH_BASE_NODES") ?? 5);
const TIMEOUT_MS = Number(env("BENCH_TIMEOUT_S") ?? 900) * 1000;
const SETTLE_MS = Number(env("BENCH_SETTLE_S") ?? 5) * 1000;
const LB_DELAY_MS = Number(env("BENCH_LB_DELAY_MS") ?? 1000);
const KUBE_CONCURRENCY = Number(env("BENCH_KUBE_CONCURRENCY") ?? 25);
const DENO_FLAGS =
  (env("BENCH_DENO_FLAGS") ?? "--v8-flags=--expose-gc,--max-semi-space-size=1,--lite-mode,--optimize-for-size")
    .split(" ").filter(Boolean);
const EXTRA_ENV: Record<string, string> = JSON.parse(env("BENCH_ENV") ?? "{}");
const EXTRA_ARGS = (env("BENCH_ARGS") ?? "").split(" ").filter(Boolean);
const REPORT = env("BENCH_REPORT") ?? new URL("./burst_report.md", import.meta.url).pathname;
const LOG_DIR = env("BENCH_LOG_DIR") ?? await Deno.makeTempDir({ prefix: "burst-bench-" });
await Deno.mkdir(LOG_DIR, { recursive: true });
const TOKEN = "act_YnVyc3QtYmVuY2gtdG9rZW4tcmVhZC13cml0ZQ";
const ZONE = "de-fsn1";
const NETWORK = "net-1";
const SERVICE_LABEL = "ccm.ankra.cloud/service";
const UNINITIALIZED_TAINT = "node.cloudprovider.kubernetes.io/uninitialized";
const RUN = crypto.getRandomValues(new Uint32Array(1))[0].toString(36);
const STARTED = new Date();

/** The program measured: the release bundle (built here), or BENCH_MAIN. */
const MAIN = await releaseBundle();

function progress(message: string): void {
  console.error(`[burst ${((Date.now() - STARTED.getTime()) / 1000).toFixed(0).padStart(5)} s] ${message}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------------------------
// The harness's own apiserver access: one HTTP client, bounded concurrency.

const plane = testControlPlane();
const http = Deno.createHttpClient({ caCerts: [plane.caCert] });

interface KubeObject {
  metadata: {
    name: string;
    resourceVersion?: string;
    finalizers?: string[];
  };
  spec?: { providerID?: string; taints?: { key: string }[] };
  status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } };
}

async function kube<T = Record<string, unknown>>(
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
async function pool<T>(items: T[], concurrency: number, work: (item: T) => Promise<unknown>): Promise<void> {
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
async function track(
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

async function waitUntil(what: string, timeoutMs: number, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(250);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Simulator and controller

function seed(limit: number) {
  return parseSeed({
    settings: {
      load_balancer_create_delay_ms: LB_DELAY_MS,
      load_balancer_delete_delay_ms: 1000,
      load_balancer_quota: 10_000,
      rate_limit_per_minute: limit,
    },
    tokens: [{ token: TOKEN, scope: "read_write" }],
    zones: [{ name: ZONE, region: "eu-central", display_name: "Falkenstein 1", compute_nodes: 2 }],
    networks: [{ id: NETWORK, name: "private", zone: ZONE, cidr: "10.0.0.0/16", ula_prefix: "fd64:1:0:1::/64" }],
  });
}

function addServers(sim: RunningSimulator, hostnames: string[]): void {
  for (const hostname of hostnames) {
    sim.sim.world.addServer({
      hostname,
      zone: ZONE,
      plan: "standard-2c-4g",
      state: "started",
      labels: {},
      interfaces: [{ network_id: NETWORK }],
    });
  }
}

interface Controller {
  child: Deno.ChildProcess;
  logPath: string;
  /** Set when the process ended on its own. */
  exited?: Deno.CommandStatus;
  stop(): Promise<void>;
}

/** Controller processes alive now: killed when the benchmark is interrupted. */
const running = new Set<Deno.ChildProcess>();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => {
    for (const child of running) {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
    }
    Deno.exit(130);
  });
}

async function startController(simUrl: string, logPath: string): Promise<Controller> {
  const file = await Deno.open(logPath, { write: true, create: true, truncate: true });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      ...DENO_FLAGS,
      MAIN,
      `--kubeconfig=${plane.kubeconfigPath}`,
      "--leader-elect=false",
      "--secure-port=0",
      "--cluster-name=bench",
      "--v=1",
      ...EXTRA_ARGS,
    ],
    env: {
      ANKRA_CLOUD_TOKEN: TOKEN,
      ANKRA_CLOUD_API_URL: simUrl,
      ANKRA_CLOUD_NETWORK_ID: NETWORK,
      MALLOC_ARENA_MAX: "1",
      ...EXTRA_ENV,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  running.add(child);
  child.status.finally(() => running.delete(child));
  const synced = Promise.withResolvers<void>();
  let head = "";
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      for (let at = 0; at < chunk.length;) at += await file.write(chunk.subarray(at));
      if (head !== "done") {
        head += decoder.decode(chunk, { stream: true });
        if (/caches synced/.test(head)) {
          head = "done";
          synced.resolve();
        } else if (head.length > 1_000_000) head = head.slice(-10_000);
      }
    }
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]).finally(() => file.close());
  const controller: Controller = {
    child,
    logPath,
    async stop() {
      if (!controller.exited) {
        try {
          child.kill("SIGTERM");
        } catch { /* gone */ }
        const timer = setTimeout(() => {
          try {
            child.kill("SIGKILL");
          } catch { /* gone */ }
        }, 15_000);
        await child.status;
        clearTimeout(timer);
      }
      await pumps.catch(() => {});
    },
  };
  child.status.then((status) => {
    controller.exited = status;
    synced.reject(new Error(`the controller ended (code ${status.code}) before its caches synced; log: ${logPath}`));
  });
  const timer = setTimeout(() => synced.reject(new Error(`no "caches synced" within 120 s; log: ${logPath}`)), 120_000);
  try {
    await synced.promise;
  } catch (error) {
    await controller.stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return controller;
}

// ---------------------------------------------------------------------------------------------------------------
// Measurements

interface Result {
  scenario: string;
  kind: "services" | "nodes";
  count: number;
  done: number;
  timedOut: boolean;
  /** Calls in the SETTLE_MS after the last object was served, by operation. */
  afterCalls: Map<string, number>;
  /** Per object: seconds from its creation to being served (address / initialised). */
  latencies: number[];
  /** Per Service: seconds from its load balancer turning running to the Service's address. */
  afterRunning: number[];
  totalSeconds: number;
  calls: number;
  rejected: number;
  byOperation: Map<string, Map<number, number>>;
  loadBalancers: number;
  duplicates: number;
  notRunning: number;
  rejectedPerMinute: number[];
  callsPerMinute: number[];
  servedPer30s: number[];
  limit: number;
  notes: string[];
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

function buckets(times: number[], startMs: number, widthMs: number, endMs: number): number[] {
  const out = Array.from({ length: Math.max(1, Math.ceil((endMs - startMs) / widthMs)) }, () => 0);
  for (const t of times) out[Math.min(out.length - 1, Math.max(0, Math.floor((t - startMs) / widthMs)))]++;
  return out;
}

/** The simulator's log since `afterSeq`, summarised. */
function callsSince(sim: RunningSimulator, afterSeq: number, startMs: number, endMs: number) {
  const entries = sim.sim.log.filter((e) => e.seq > afterSeq && e.operation !== "control" && e.atMs <= endMs);
  const byOperation = new Map<string, Map<number, number>>();
  for (const e of entries) {
    const statuses = byOperation.get(e.operation) ?? new Map<number, number>();
    statuses.set(e.status, (statuses.get(e.status) ?? 0) + 1);
    byOperation.set(e.operation, statuses);
  }
  const rejected = entries.filter((e) => e.status === 429);
  return {
    calls: entries.length,
    rejected: rejected.length,
    byOperation,
    rejectedPerMinute: buckets(rejected.map((e) => e.atMs), startMs, 60_000, endMs),
    callsPerMinute: buckets(entries.map((e) => e.atMs), startMs, 60_000, endMs),
  };
}

/** Waits SETTLE_MS after the burst was served and returns the calls made in that time, by operation. */
async function settle(sim: RunningSimulator, endMs: number): Promise<Map<string, number>> {
  await sleep(Math.max(0, endMs + SETTLE_MS - Date.now()));
  const out = new Map<string, number>();
  for (const e of sim.sim.log) {
    if (e.atMs > endMs && e.atMs <= endMs + SETTLE_MS && e.operation !== "control") {
      out.set(e.operation, (out.get(e.operation) ?? 0) + 1);
    }
  }
  return out;
}

/** Writes the simulator's request log since `afterSeq` next to the controller's log, one JSON object a line. */
async function saveRequests(sim: RunningSimulator, afterSeq: number, label: string): Promise<void> {
  const lines = sim.sim.log.filter((e) => e.seq > afterSeq && e.operation !== "control").map((e) =>
    JSON.stringify({ atMs: e.atMs, operation: e.operation, method: e.method, path: e.path, status: e.status })
  );
  await Deno.writeTextFile(`${LOG_DIR}/requests-${label}.jsonl`, lines.join("\n") + "\n");
}

function lastSeq(sim: RunningSimulator): number {
  return sim.sim.log.at(-1)?.seq ?? 0;
}

function nodeInitialised(node: KubeObject): boolean {
  return Boolean(node.spec?.providerID) && !(node.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT);
}

async function createNodes(names: string[], runLabel: string, createdAt: Map<string, number>): Promise<void> {
  await pool(names, KUBE_CONCURRENCY, async (name) => {
    await kube("POST", "/api/v1/nodes", kubeletNode(name, { labels: { bench: "burst", "bench-run": runLabel } }));
    createdAt.set(name, Date.now());
  });
}

async function deleteNodes(runLabel: string): Promise<void> {
  const selector = `labelSelector=${encodeURIComponent(`bench-run=${runLabel}`)}`;
  await kube("DELETE", `/api/v1/nodes?${selector}`);
  await waitUntil(
    `nodes of ${runLabel} to be gone`,
    120_000,
    async () => (await kube<{ items: unknown[] }>("GET", `/api/v1/nodes?${selector}&limit=1`)).items.length === 0,
  );
}

/** Strips finalizers (the controller is stopped by now), deletes every Service in `namespace` and waits. */
async function deleteServices(namespace: string): Promise<void> {
  const path = `/api/v1/namespaces/${namespace}/services`;
  const services = (await kube<{ items: KubeObject[] }>("GET", path)).items;
  await pool(services, KUBE_CONCURRENCY, async (s) => {
    if (s.metadata.finalizers?.length) {
      await kube(
        "PATCH",
        `${path}/${s.metadata.name}`,
        { metadata: { finalizers: null } },
        (x) => x < 300 || x === 404,
      );
    }
    await kube("DELETE", `${path}/${s.metadata.name}`, undefined, (x) => x < 300 || x === 404);
  });
  await waitUntil(
    `Services in ${namespace} to be gone`,
    120_000,
    async () => (await kube<{ items: unknown[] }>("GET", `${path}?limit=1`)).items.length === 0,
  );
}

function serviceBody(i: number): Record<string, unknown> {
  const name = `svc-${String(i).padStart(4, "0")}`;
  return {
    metadata: { name, labels: { bench: "burst", app: name } },
    spec: {
      type: "LoadBalancer",
      selector: { app: name },
      ports: [
        { name: "http", protocol: "TCP", port: 80, targetPort: 8080 },
        { name: "https", protocol: "TCP", port: 443, targetPort: 8443 },
      ],
    },
  };
}

function progressLine(
  what: string,
  done: number,
  count: number,
  startMs: number,
  sim: RunningSimulator,
  seq: number,
): string {
  const since = sim.sim.log.filter((e) => e.seq > seq && e.operation !== "control");
  return `${what}: ${done}/${count} after ${((Date.now() - startMs) / 1000).toFixed(0)} s; ${since.length} calls, ${
    since.filter((e) => e.status === 429).length
  } answered 429`;
}

async function servicesScenario(limit: number, count: number): Promise<Result> {
  const label = `${limit}-svc${count}-${RUN}`;
  const scenario = `${count} Services`;
  progress(`limit ${limit}/min, ${scenario}: simulator, ${BASE_NODES} servers and nodes, controller`);
  const sim = await startSimulator({ seed: seed(limit), logLimit: 10_000_000 });
  const baseNames = Array.from({ length: BASE_NODES }, (_, i) => `base-${label}-${i}`);
  addServers(sim, baseNames);
  const controller = await startController(sim.url, `${LOG_DIR}/controller-${label}.log`).catch(async (error) => {
    await sim.stop();
    throw error;
  });
  const stop = new AbortController();
  const namespace = `burst-${label}`;
  try {
    await createNodes(baseNames, label, new Map());
    const nodeSelector = `labelSelector=${encodeURIComponent(`bench-run=${label}`)}`;
    await waitUntil(`the ${BASE_NODES} base nodes to be initialised`, 180_000, async () => {
      if (controller.exited) throw new Error(`the controller ended; log: ${controller.logPath}`);
      const nodes = (await kube<{ items: KubeObject[] }>("GET", `/api/v1/nodes?${nodeSelector}`)).items;
      return nodes.length === BASE_NODES && nodes.every(nodeInitialised);
    });
    await kube("POST", "/api/v1/namespaces", { metadata: { name: namespace, labels: { bench: "burst" } } });

    const createdAt = new Map<string, number>();
    const servedAt = new Map<string, number>();
    const ingress = new Map<string, string[]>();
    const watcher = await track(`/api/v1/namespaces/${namespace}/services`, "", (service, at) => {
      const name = service.metadata.name;
      const ips = (service.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? i.hostname ?? "");
      if (ips.length > 0 && !servedAt.has(name)) {
        servedAt.set(name, at);
        ingress.set(name, ips);
      }
    }, stop.signal);

    // Clean slate for the burst: a fresh rate-limit window, calls counted from here.
    sim.sim.rateLimiter.clear();
    const seq = lastSeq(sim);
    const startMs = Date.now();
    progress(`limit ${limit}/min, ${scenario}: creating ${count} Services in ${namespace}`);
    await pool(Array.from({ length: count }, (_, i) => i), KUBE_CONCURRENCY, async (i) => {
      const body = serviceBody(i);
      await kube("POST", `/api/v1/namespaces/${namespace}/services`, body);
      createdAt.set((body.metadata as { name: string }).name, Date.now());
    });
    progress(`limit ${limit}/min, ${scenario}: created in ${((Date.now() - startMs) / 1000).toFixed(1)} s`);
    const deadline = startMs + TIMEOUT_MS;
    let lastReport = Date.now();
    while (servedAt.size < count && Date.now() < deadline) {
      if (controller.exited) throw new Error(`the controller ended (code ${controller.exited.code})`);
      await sleep(100);
      if (Date.now() - lastReport >= 10_000) {
        lastReport = Date.now();
        progress(progressLine(`limit ${limit}/min, ${scenario}`, servedAt.size, count, startMs, sim, seq));
      }
    }
    const timedOut = servedAt.size < count;
    const endMs = timedOut ? Date.now() : Math.max(...servedAt.values());
    const calls = callsSince(sim, seq, startMs, endMs);
    const afterCalls = await settle(sim, endMs);
    await saveRequests(sim, seq, label);

    // Load balancers: which one each Service's address belongs to, and when it turned running.
    sim.sim.world.tick(); // the simulator applies due transitions (creating → running) lazily
    const lbs = [...sim.sim.loadBalancers.items.values()];
    const byAddress = new Map<string, (typeof lbs)[number]>();
    const perService = new Map<string, number>();
    for (const lb of lbs) {
      for (const ip of [...lb.public_ipv6_addresses, ...(lb.public_ipv4 ? [lb.public_ipv4] : [])]) {
        byAddress.set(ip, lb);
      }
      const owner = lb.labels[SERVICE_LABEL] ?? lb.name;
      perService.set(owner, (perService.get(owner) ?? 0) + 1);
    }
    const afterRunning: number[] = [];
    const notes: string[] = [];
    for (const [name, at] of servedAt) {
      const lb = ingress.get(name)!.map((ip) => byAddress.get(ip)).find(Boolean);
      if (!lb) {
        notes.push(`${name}: address ${ingress.get(name)!.join(", ")} belongs to no load balancer`);
        continue;
      }
      const runningAt = Date.parse(lb.created_at) + LB_DELAY_MS;
      afterRunning.push((at - runningAt) / 1000);
    }
    // Services still without an address whose load balancer is running: how long they have waited so far.
    const waiting = lbs.filter((lb) => {
      const owner = lb.labels[SERVICE_LABEL] ?? "";
      return owner.startsWith(`${namespace}/`) && !servedAt.has(owner.slice(namespace.length + 1)) &&
        Date.parse(lb.created_at) + LB_DELAY_MS <= endMs;
    }).map((lb) => (endMs - Date.parse(lb.created_at) - LB_DELAY_MS) / 1000);
    if (waiting.length > 0) {
      notes.push(
        `${waiting.length} Services without an address have a running load balancer, waiting up to ${
          Math.max(...waiting).toFixed(1)
        } s so far`,
      );
    }
    const latencies = [...servedAt].map(([name, at]) => (at - createdAt.get(name)!) / 1000);
    stop.abort();
    await watcher.done;
    return {
      scenario,
      kind: "services",
      count,
      done: servedAt.size,
      timedOut,
      latencies,
      afterRunning,
      totalSeconds: (endMs - startMs) / 1000,
      ...calls,
      afterCalls,
      loadBalancers: lbs.length,
      duplicates: [...perService.values()].filter((n) => n > 1).length,
      notRunning: lbs.filter((lb) => lb.state !== "running").length,
      servedPer30s: buckets([...servedAt.values()], startMs, 30_000, endMs),
      limit,
      notes,
    };
  } finally {
    stop.abort();
    progress(`limit ${limit}/min, ${scenario}: cleaning up (controller log: ${controller.logPath})`);
    await controller.stop();
    await deleteServices(namespace).catch((error) => progress(`cleanup of Services: ${error.message}`));
    await deleteNodes(label).catch((error) => progress(`cleanup of nodes: ${error.message}`));
    await sim.stop();
  }
}

async function nodesScenario(limit: number, count: number): Promise<Result> {
  const label = `${limit}-node${count}-${RUN}`;
  const scenario = `${count} Nodes`;
  progress(`limit ${limit}/min, ${scenario}: simulator with ${count} servers, controller`);
  const sim = await startSimulator({ seed: seed(limit), logLimit: 10_000_000 });
  const names = Array.from({ length: count }, (_, i) => `n-${label}-${String(i).padStart(5, "0")}`);
  addServers(sim, names);
  const controller = await startController(sim.url, `${LOG_DIR}/controller-${label}.log`).catch(async (error) => {
    await sim.stop();
    throw error;
  });
  const stop = new AbortController();
  try {
    const createdAt = new Map<string, number>();
    const initialisedAt = new Map<string, number>();
    const watcher = await track(
      "/api/v1/nodes",
      `labelSelector=${encodeURIComponent(`bench-run=${label}`)}`,
      (node, at) => {
        if (nodeInitialised(node) && !initialisedAt.has(node.metadata.name)) initialisedAt.set(node.metadata.name, at);
      },
      stop.signal,
    );
    sim.sim.rateLimiter.clear();
    const seq = lastSeq(sim);
    const startMs = Date.now();
    progress(`limit ${limit}/min, ${scenario}: creating ${count} Nodes`);
    await createNodes(names, label, createdAt);
    progress(`limit ${limit}/min, ${scenario}: created in ${((Date.now() - startMs) / 1000).toFixed(1)} s`);
    const deadline = startMs + TIMEOUT_MS;
    let lastReport = Date.now();
    while (initialisedAt.size < count && Date.now() < deadline) {
      if (controller.exited) throw new Error(`the controller ended (code ${controller.exited.code})`);
      await sleep(100);
      if (Date.now() - lastReport >= 10_000) {
        lastReport = Date.now();
        progress(progressLine(`limit ${limit}/min, ${scenario}`, initialisedAt.size, count, startMs, sim, seq));
      }
    }
    const timedOut = initialisedAt.size < count;
    const endMs = timedOut ? Date.now() : Math.max(...initialisedAt.values());
    const calls = callsSince(sim, seq, startMs, endMs);
    const afterCalls = await settle(sim, endMs);
    await saveRequests(sim, seq, label);
    stop.abort();
    await watcher.done;
    return {
      scenario,
      kind: "nodes",
      count,
      done: initialisedAt.size,
      timedOut,
      // A node may be initialised before the harness saw its POST answer: never below zero.
      latencies: [...initialisedAt].map(([name, at]) => Math.max(0, at - (createdAt.get(name) ?? startMs)) / 1000),
      afterRunning: [],
      totalSeconds: (endMs - startMs) / 1000,
      ...calls,
      afterCalls,
      loadBalancers: 0,
      duplicates: 0,
      notRunning: 0,
      servedPer30s: buckets([...initialisedAt.values()], startMs, 30_000, endMs),
      limit,
      notes: [],
    };
  } finally {
    stop.abort();
    progress(`limit ${limit}/min, ${scenario}: cleaning up (controller log: ${controller.logPath})`);
    await controller.stop();
    await deleteNodes(label).catch((error) => progress(`cleanup of nodes: ${error.message}`));
    await sim.stop();
  }
}

function failed(limit: number, scenario: string, kind: Result["kind"], count: number, error: Error): Result {
  return {
    scenario: `${scenario} (FAILED)`,
    kind,
    count,
    done: 0,
    timedOut: false,
    latencies: [],
    afterRunning: [],
    totalSeconds: NaN,
    calls: 0,
    rejected: 0,
    byOperation: new Map(),
    afterCalls: new Map(),
    loadBalancers: 0,
    duplicates: 0,
    notRunning: 0,
    rejectedPerMinute: [],
    callsPerMinute: [],
    servedPer30s: [],
    limit,
    notes: [`failed: ${error.message}`],
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Report

const s = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "—");

function row(r: Result): string {
  const sorted = [...r.latencies].sort((a, b) => a - b);
  const admitted = r.calls - r.rejected;
  const bound = admitted / (r.limit / 60);
  const last = r.timedOut ? `> ${s(r.totalSeconds)} (${r.done}/${r.count} done)` : s(sorted.at(-1) ?? NaN);
  const maxAfter = r.afterRunning.length ? Math.max(...r.afterRunning) : NaN;
  return `| ${r.scenario} | ${s(sorted[0])} | ${s(percentile(sorted, 0.5))} | ${
    s(percentile(sorted, 0.9))
  } | ${last} | ${r.kind === "services" ? s(maxAfter) : "—"} | ${r.calls} | ${
    r.kind === "services" && r.loadBalancers ? (r.calls / r.loadBalancers).toFixed(1) : "—"
  } | ${r.rejected} | ${r.timedOut ? "> " : ""}${s(r.totalSeconds)} | ${s(bound)} | ${
    bound > 0 ? (r.totalSeconds / bound).toFixed(2) : "—"
  } |`;
}

function details(r: Result): string[] {
  const ops = [...r.byOperation].sort((a, b) =>
    [...b[1].values()].reduce((x, y) => x + y, 0) -
    [...a[1].values()].reduce((x, y) => x + y, 0)
  ).map(([op, statuses]) => {
    const total = [...statuses.values()].reduce((x, y) => x + y, 0);
    const split = [...statuses].sort((a, b) => a[0] - b[0]).map(([st, n]) => `${st}×${n}`).join(" ");
    return `${op} ${total} (${split})`;
  });
  const out = [
    `- **${r.scenario}** (limit ${r.limit}/min): ${r.done}/${r.count} ${
      r.kind === "services" ? "Services got an address" : "Nodes initialised"
    }${r.timedOut ? ` — TIMED OUT after ${s(r.totalSeconds)} s` : ""}.`,
    `  - calls by operation (status×count): ${ops.join("; ") || "none"}`,
    `  - calls in the ${SETTLE_MS / 1000} s after: ${
      [...r.afterCalls].map(([op, n]) => `${op} ${n}`).join("; ") || "none"
    }`,
    `  - calls per minute: ${r.callsPerMinute.join(", ")}; 429s per minute: ${r.rejectedPerMinute.join(", ")}`,
    `  - ${r.kind === "services" ? "Services served" : "Nodes initialised"} per 30 s: ${r.servedPer30s.join(", ")}`,
  ];
  if (r.kind === "services") {
    const after = [...r.afterRunning].sort((a, b) => a - b);
    out.push(
      `  - address after running s: median ${s(percentile(after, 0.5))}, p90 ${s(percentile(after, 0.9))}, max ${
        s(after.at(-1) ?? NaN)
      }; ${after.filter((x) => x > 3).length} of ${after.length} over the 3 s target`,
      `  - load balancers in the simulator: ${r.loadBalancers} (${r.duplicates} Services with more than one, ${r.notRunning} not running)`,
    );
  }
  for (const note of r.notes.slice(0, 10)) out.push(`  - ${note}`);
  if (r.notes.length > 10) out.push(`  - … and ${r.notes.length - 10} more`);
  return out;
}

function table(limit: number, results: Result[]): string[] {
  return [
    `### ${limit} requests/min`,
    "",
    "| scenario | first s | median s | p90 s | last s | max address after running s | calls | calls per LB | 429s | total s | calls÷limit s | total ÷ (calls÷limit) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...results.map(row),
    "",
  ];
}

async function gitDescription(): Promise<string> {
  try {
    const git = (args: string[]) =>
      new Deno.Command("git", { args, cwd: new URL("..", import.meta.url).pathname, stdout: "piped", stderr: "null" })
        .output().then((o) => new TextDecoder().decode(o.stdout).trim());
    const head = await git(["rev-parse", "--short", "HEAD"]);
    const dirty = await git(["status", "--porcelain", "--", "lib", "main.ts"]);
    return head ? `${head}${dirty ? " with uncommitted changes in lib/ or main.ts" : ""}` : "unknown";
  } catch {
    return "unknown";
  }
}

function commandLine(): string {
  const given = env("BENCH_COMMAND");
  if (given) return given;
  const vars = Object.entries(Deno.env.toObject()).filter(([k]) => k.startsWith("BENCH_") && k !== "BENCH_COMMAND")
    .sort().map(([k, v]) => `${k}=${/^[\w.,:/=-]*$/.test(v) ? v : `'${v.replaceAll("'", "'\\''")}'`}`);
  return [...vars, "deno run --allow-all scripts/with_control_plane.ts -- deno run --allow-all bench/burst_bench.ts"]
    .join(" ");
}

// ---------------------------------------------------------------------------------------------------------------
// Run

progress(`program ${MAIN}; controller logs in ${LOG_DIR}`);
const all = new Map<number, Result[]>();
for (const limit of LIMITS) {
  const results: Result[] = [];
  all.set(limit, results);
  const scenarios: (readonly [string, Result["kind"], number, () => Promise<Result>])[] = [
    ...SERVICES.map((n) => [`${n} Services`, "services", n, () => servicesScenario(limit, n)] as const),
    ...NODES.map((n) => [`${n} Nodes`, "nodes", n, () => nodesScenario(limit, n)] as const),
  ];
  for (const [scenario, kind, count, run] of scenarios) {
    try {
      results.push(await run());
    } catch (error) {
      progress(`limit ${limit}/min, ${scenario} FAILED: ${(error as Error).stack ?? error}`);
      results.push(failed(limit, scenario, kind, count, error as Error));
    }
  }
  console.log(table(limit, results).join("\n"));
}
http.close();
for (const child of running) child.kill("SIGKILL");

const report = [
  "# Burst benchmark",
  "",
  `Run ${STARTED.toISOString()} (${
    ((Date.now() - STARTED.getTime()) / 60_000).toFixed(1)
  } min) with Deno ${Deno.version.deno}, controller from commit ${await gitDescription()}:`,
  "",
  "```sh",
  commandLine(),
  "```",
  "",
  "Settings: the release bundle with the release flags (`MALLOC_ARENA_MAX=1`, `" + DENO_FLAGS.join(" ") + "`)" +
  (env("BENCH_MAIN") ? ` — here BENCH_MAIN=${env("BENCH_MAIN")}` : "") +
  "; controller flags `--leader-elect=false --secure-port=0 --cluster-name=bench --v=1" +
  (EXTRA_ARGS.length ? ` ${EXTRA_ARGS.join(" ")}` : "") + "`" +
  (Object.keys(EXTRA_ENV).length ? `, extra environment \`${JSON.stringify(EXTRA_ENV)}\`` : "") +
  `; simulator in-process: zone ${ZONE} with 2 compute nodes (HA pairs), network ${NETWORK} 10.0.0.0/16, ` +
  `load_balancer_create_delay_ms ${LB_DELAY_MS}, quota 10,000, rate_limit_per_minute as per table. ` +
  `Scenarios: ${SERVICES.join(", ")} Services (two TCP ports each, NodePorts allocated, fresh namespace, ` +
  `${BASE_NODES} initialised Ready nodes), ${NODES.join(", ")} kubelet-shaped Nodes; timeout ${TIMEOUT_MS / 1000} s ` +
  "each. Every scenario starts with a fresh simulator, a fresh controller process and an empty rate-limit window.",
  "",
  "Columns: first/median/p90/last = per object, seconds from its creation (the apiserver's answer to the harness's",
  "POST) until the harness's watch saw the Service's address (Services) or the Node initialised — providerID set and",
  "the uninitialized taint gone (Nodes). Max address after running = seconds from the load balancer behind the",
  "Service's address turning `running` in the simulator (its creation + the create delay) until the address was seen",
  "(target ≤ 3 s). Calls = every request the simulator received from the burst's start to the last object served,",
  "429s included; calls per LB = calls ÷ load balancers in the simulator. calls÷limit = calls the limiter admitted",
  "(calls − 429s) ÷ (limit/60), the least time the limit allows for that work; the last column is total ÷ that",
  "bound. The simulator's limit is a fixed one-minute window that starts empty, so a burst of fewer than two",
  "windows' worth of calls can finish below the bound (ratio < 1). Calls made in the few seconds after the last",
  "object was served are listed separately (not in the table).",
  "",
  ...[...all].flatMap(([limit, results]) => [...table(limit, results), ...results.flatMap(details), ""]),
].join("\n");
await Deno.writeTextFile(REPORT, report);
progress(`report written to ${REPORT}`);
