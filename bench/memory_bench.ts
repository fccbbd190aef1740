/**
 * Memory benchmark of the controller process: steady resident memory after its caches synced, with kubelet-shaped
 * Nodes (labels, conditions, addresses, 40 images each) and LoadBalancer Services in a real kube-apiserver.
 *
 *     source scripts/env.sh && deno task bench:memory
 *
 * Stages: 0 nodes / 0 services, 1,000 / 1,000, 5,000 / 1,000. Prints a table and writes bench/memory_report.md.
 * Target (issue 4): ≤ 64 MiB at 1,000 nodes and 1,000 services. Each stage is measured twice: the machinery alone
 * (controllers off) and the whole process.
 *
 * @module
 */
import { testControlPlane } from "../tests/support/control_plane.ts";
import { kubeletNode, kubeOk } from "../tests/support/kube_http.ts";
import { releaseBundle } from "./release_bundle.ts";

/** The program measured: the release bundle (built here), or BENCH_MAIN. */
const MAIN = await releaseBundle();

const plane = testControlPlane();

async function inBatches<T>(items: T[], size: number, run: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(run));
}

async function ensureObjects(nodes: number, services: number): Promise<void> {
  const existingNodes = (await kubeOk<{ items: unknown[] }>(plane, "GET", "/api/v1/nodes?labelSelector=bench=memory"))
    .items.length;
  await inBatches(
    Array.from({ length: nodes - existingNodes }, (_, i) => existingNodes + i),
    25,
    (i) =>
      kubeOk(plane, "POST", "/api/v1/nodes", {
        body: kubeletNode(`bench-node-${String(i).padStart(5, "0")}`, {
          images: 40,
          labels: { bench: "memory", "node.kubernetes.io/instance-type": "standard-2c-4g" },
          addresses: [
            { type: "InternalIP", address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
            { type: "Hostname", address: `bench-node-${i}` },
          ],
        }),
      }),
  );
  const existingServices = (await kubeOk<{ items: unknown[] }>(
    plane,
    "GET",
    "/api/v1/namespaces/default/services?labelSelector=bench=memory",
  )).items.length;
  await inBatches(
    Array.from({ length: services - existingServices }, (_, i) => existingServices + i),
    25,
    (i) =>
      kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
        body: {
          metadata: {
            name: `bench-svc-${i}`,
            labels: { bench: "memory", app: `app-${i}` },
            annotations: {
              "load-balancer.ankra.cloud/health-check-type": "http",
              "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify({ big: "x".repeat(600) }),
            },
          },
          spec: {
            type: "LoadBalancer",
            // No NodePorts: 1,000 LoadBalancer Services would not fit the default NodePort range.
            allocateLoadBalancerNodePorts: false,
            selector: { app: `app-${i}` },
            ports: [{ name: "http", port: 80, targetPort: 8080 }],
          },
        },
      }),
  );
}

/** The process's resident high-water mark (VmHWM): the most it ever held, the first list included. */
function highWaterKiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]);
}

function rssKiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]);
}

async function measure(controllers: "none" | "all"): Promise<
  {
    rssMiB: number;
    peakMiB: number;
    highWaterMiB: number;
    syncSeconds: number;
    nodes: number;
    services: number;
    syncLine: string;
  }
> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      // The flags the binary and `deno task run` use (see deno.json).
      ...(Deno.env.get("BENCH_DENO_FLAGS") ??
        "--v8-flags=--expose-gc,--max-semi-space-size=1,--lite-mode,--optimize-for-size").split(" ").filter(
          Boolean,
        ),
      MAIN,
      `--kubeconfig=${plane.kubeconfigPath}`,
      "--leader-elect=false",
      "--secure-port=0",
      "--v=1",
      // "none" measures the machinery alone (informers, stores, clients); "all" the whole process, whose
      // controllers find the cloud unreachable here (so every Service is retried with backoff and events).
      ...(controllers === "none" ? ["--controllers=-cloud-node,-cloud-node-lifecycle,-service"] : []),
    ],
    env: {
      ANKRA_CLOUD_TOKEN: "act_bench-token-not-used",
      ANKRA_CLOUD_API_URL: "https://127.0.0.1:1",
      MALLOC_ARENA_MAX: "1",
      ...JSON.parse(Deno.env.get("BENCH_ENV") ?? "{}"),
    },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!/caches synced/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`controller ended before syncing:\n${text}`);
    text += value;
  }
  const line = /caches synced nodes=(\d+) services=(\d+) seconds=([\d.]+)/.exec(text)!;
  // Steady state: sample for 10 s after the sync and report the last sample and the peak.
  let peak = 0;
  let last = 0;
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    last = rssKiB(child.pid);
    peak = Math.max(peak, last);
  }
  const highWater = highWaterKiB(child.pid);
  child.kill("SIGTERM");
  await child.status;
  await reader.cancel();
  return {
    rssMiB: last / 1024,
    peakMiB: peak / 1024,
    highWaterMiB: highWater / 1024,
    syncSeconds: Number(line[3]),
    nodes: Number(line[1]),
    services: Number(line[2]),
    syncLine: /caches synced[^\n]*/.exec(text)![0],
  };
}

const stages: [number, number][] = (Deno.env.get("BENCH_STAGES") ?? "0:0,1000:1000,5000:1000").split(",").map((s) =>
  s.split(":").map(Number) as [number, number]
);
const rows: string[] = [];
for (const [nodes, services] of stages) {
  const started = performance.now();
  console.error(`stage: ${nodes} nodes, ${services} services: creating objects`);
  await ensureObjects(nodes, services);
  const created = ((performance.now() - started) / 1000).toFixed(1);
  for (const controllers of ["none", "all"] as const) {
    console.error(`stage: ${nodes} nodes, ${services} services, controllers ${controllers}: measuring`);
    const result = await measure(controllers);
    const row = `| ${nodes} | ${services} | ${controllers} | ${result.nodes} | ${result.services} | ${
      result.syncSeconds.toFixed(2)
    } | ${result.rssMiB.toFixed(1)} | ${result.peakMiB.toFixed(1)} | ${result.highWaterMiB.toFixed(1)} |`;
    console.log(`${row}   (objects created in ${created} s; ${result.syncLine})`);
    rows.push(row);
  }
}
const report = [
  "# Memory benchmark",
  "",
  `Run ${new Date().toISOString()} with Deno ${Deno.version.deno}, kube-apiserver from scripts/test_binaries.sh.`,
  "The program is the release bundle with the release flags (MALLOC_ARENA_MAX=1, --expose-gc,",
  "--max-semi-space-size=1, --lite-mode, --optimize-for-size).",
  "Steady RSS = last of 20 samples taken every 0.5 s after the caches synced (the process does not shrink its heap",
  "afterwards, so this is what it holds). Nodes carry 40 images, 4 conditions, labels and addresses, as kubelets write",
  "them; Services are `type: LoadBalancer` with an extra 600-byte last-applied annotation. The high-water mark is the",
  "kernel's VmHWM: the most the process ever held, its first lists included.",
  "",
  "Command: `source scripts/env.sh && deno task bench:memory`.",
  "",
  "| nodes | services | controllers | nodes in store | services in store | list+sync s | steady RSS MiB | peak after sync MiB | high-water mark MiB |",
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ...rows,
  "",
  "How we got here (steady RSS at 1,000 nodes / 1,000 Services, machinery alone, same benchmark):",
  "",
  "| step | MiB |",
  "| --- | --- |",
  "| first version: lists of 500, plain `deno run main.ts` | 115.4 |",
  "| pages of 100, full GC after the first sync, 1 MiB semi-space, MALLOC_ARENA_MAX=1 | 79.9 |",
  "| the release bundle (one minified file) instead of the module graph | 77.0 |",
  "| + V8 `--lite-mode` and `--optimize-for-size` | 70.4 |",
  "| + list pages decoded as a stream, each item slimmed as it arrives | 56.2 |",
  "",
  "The price of the last two steps is list time: the interpreter decodes a 1,000-node cluster in ~2 s and 5,000",
  "nodes in ~8-10 s at start-up (0.6 s and 2.7 s before). Steady state is unaffected.",
  "",
].join("\n");
await Deno.writeTextFile(new URL("./memory_report.md", import.meta.url), report);
console.log(report);
