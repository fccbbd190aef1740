/**
 * Memory benchmark of the release artifact: what the kernel charges the controller process once its caches synced,
 * with Nodes shaped as a kubelet writes them and LoadBalancer Services in a real kube-apiserver.
 *
 *     source scripts/env.sh && deno task bench:memory
 *
 * The program measured is the release tarball's launcher (`scripts/build.sh --no-compile`, built here and unpacked;
 * `BENCH_LAUNCHER=<path to bin/ankra-cloud-ccm>` measures another build), so the V8 flags and allocator settings are
 * the ones that ship. Stages (cumulative, `BENCH_STAGES`, default `0:0,1:3,1000:1000,5000:1000`): an empty cluster, a
 * k3s single node with 3 Services, 1,000 Nodes + 1,000 Services, 5,000 Nodes. For each it reports, from
 * `/proc/<pid>/status`: VmRSS, RssAnon (private memory: what a memory cgroup is charged), RssFile (the mapped runtime,
 * shared and reclaimable) and VmHWM (the most the process ever held, its first lists included).
 *
 * The table is printed and written into bench/memory_report.md between the markers named by `BENCH_TABLE`
 * (default `after`; `none` writes nothing), so the report's text and its other tables stay.
 *
 * @module
 */
import { testControlPlane } from "../tests/support/control_plane.ts";
import { kubeletNode, kubeOk } from "../tests/support/kube_http.ts";
import { releaseLauncher } from "./release_bundle.ts";

const LAUNCHER = await releaseLauncher();
const plane = testControlPlane();

/** What a k3s node's kubelet reports in status.images: the system images plus a few workloads, with sizes. */
const IMAGES: [string, number][] = [
  ["docker.io/rancher/mirrored-pause:3.6", 301_463],
  ["docker.io/rancher/mirrored-coredns-coredns:1.12.3", 22_425_123],
  ["docker.io/rancher/local-path-provisioner:v0.0.31", 19_561_012],
  ["docker.io/rancher/mirrored-metrics-server:v0.8.0", 19_442_861],
  ["docker.io/rancher/klipper-helm:v0.9.8-build20250709", 59_786_243],
  ["docker.io/rancher/mirrored-library-traefik:3.3.6", 52_322_610],
  ["docker.io/rancher/mirrored-library-busybox:1.36.1", 1_854_413],
  ["docker.io/rancher/klipper-lb:v0.4.13", 4_951_281],
  ["registry.k8s.io/kube-proxy:v1.37.2", 30_714_528],
  ["registry.k8s.io/pause:3.10", 320_368],
  ["quay.io/cilium/cilium:v1.18.2", 212_451_733],
  ["quay.io/cilium/operator-generic:v1.18.2", 35_012_770],
  ["quay.io/prometheus/node-exporter:v1.9.1", 12_355_823],
  ["quay.io/jetstack/cert-manager-controller:v1.18.2", 20_331_954],
  ["quay.io/jetstack/cert-manager-webhook:v1.18.2", 17_144_902],
  ["quay.io/jetstack/cert-manager-cainjector:v1.18.2", 15_872_118],
  ["registry.k8s.io/ingress-nginx/controller:v1.13.3", 113_218_611],
  ["docker.io/grafana/alloy:v1.10.2", 142_095_340],
  ["ghcr.io/ankraio/ankra-agent:v0.9.4", 31_490_116],
  ["docker.io/library/nginx:1.29.1-alpine", 21_873_445],
];

/** A Node as a kubelet registers and updates it: images, nodeInfo, 5 conditions, IPv4 + IPv6 addresses. */
function benchNode(i: number): Record<string, unknown> {
  const name = `bench-node-${String(i).padStart(5, "0")}`;
  const node = kubeletNode(name, {
    labels: { bench: "memory", "node.kubernetes.io/instance-type": "standard-2c-4g" },
    addresses: [
      { type: "InternalIP", address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
      { type: "InternalIP", address: `fd00:10::${i.toString(16)}` },
      { type: "Hostname", address: name },
    ],
  }) as { status: Record<string, unknown> & { conditions: Record<string, string>[] } };
  const now = new Date().toISOString();
  node.status.conditions.unshift({
    type: "NetworkUnavailable",
    status: "False",
    reason: "FlannelIsUp",
    message: "Flannel is running on this node",
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  });
  node.status.images = IMAGES.map(([tag, sizeBytes], n) => ({
    names: [`${tag.split(":")[0]}@sha256:${(n * 7919 + i).toString(16).padStart(64, "a")}`, tag],
    sizeBytes,
  }));
  return node;
}

function benchService(i: number): Record<string, unknown> {
  return {
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
  };
}

async function inBatches(from: number, to: number, run: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = from; i < to; i += 25) {
    await Promise.all(Array.from({ length: Math.min(25, to - i) }, (_, k) => run(i + k)));
  }
}

async function count(path: string): Promise<number> {
  return (await kubeOk<{ items: unknown[] }>(plane, "GET", `${path}?labelSelector=bench=memory`)).items.length;
}

async function ensureObjects(nodes: number, services: number): Promise<void> {
  await inBatches(
    await count("/api/v1/nodes"),
    nodes,
    (i) => kubeOk(plane, "POST", "/api/v1/nodes", { body: benchNode(i) }),
  );
  const servicesPath = "/api/v1/namespaces/default/services";
  await inBatches(
    await count(servicesPath),
    services,
    (i) => kubeOk(plane, "POST", servicesPath, { body: benchService(i) }),
  );
}

/** The figures of `/proc/<pid>/status` this benchmark reports, in KiB. */
interface Figures {
  VmRSS: number;
  VmHWM: number;
  RssAnon: number;
  RssFile: number;
}

function figures(pid: number): Figures {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)![1]);
  return { VmRSS: field("VmRSS"), VmHWM: field("VmHWM"), RssAnon: field("RssAnon"), RssFile: field("RssFile") };
}

/**
 * Empties the release's cache directory. An installed release cannot write it (read-only, not root's), so every start
 * begins with an empty one; this benchmark runs as whatever user it is given, often root, who could.
 */
function emptyCacheDirectory(): void {
  const cache = new URL("../lib/ankra-cloud-ccm/deno-dir/", `file://${LAUNCHER.replace(/[^/]*$/, "")}`).pathname;
  for (const entry of Deno.readDirSync(cache)) Deno.removeSync(`${cache}${entry.name}`, { recursive: true });
}

/** The launcher is a shell script that execs the runtime: the process keeps its pid, so /proc/<pid> is Deno's. */
async function measure(): Promise<Figures & { syncLine: string }> {
  emptyCacheDirectory();
  const child = new Deno.Command(LAUNCHER, {
    args: [`--kubeconfig=${plane.kubeconfigPath}`, "--leader-elect=false", "--secure-port=0", "--v=1"],
    // The cloud is unreachable here: the controllers retry every Service with backoff and events, as they would
    // while the Ankra Cloud API is down. No allocator variables: the launcher's own settings are measured.
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      ANKRA_CLOUD_TOKEN: "act_bench-token-not-used",
      ANKRA_CLOUD_API_URL: "https://127.0.0.1:1",
    },
    clearEnv: true,
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let syncLine = "";
  while (!syncLine) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`controller ended before syncing:\n${text.slice(-2000)}`);
    text = (text + value).slice(-20_000);
    syncLine = /caches synced[^\n]*/.exec(text)?.[0] ?? "";
  }
  // Keep reading its log so a full pipe never stalls it.
  const drained = (async () => {
    while (!(await lines.read()).done);
  })().catch(() => {});
  // Steady state: 20 samples 0.5 s apart after the sync; the last one is reported (Deno does not give memory back).
  let last = figures(child.pid);
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    last = figures(child.pid);
  }
  child.kill("SIGTERM");
  await child.status;
  await drained;
  return { ...last, syncLine };
}

const mib = (kib: number) => (kib / 1024).toFixed(1);
const stages = (Deno.env.get("BENCH_STAGES") ?? "0:0,1:3,1000:1000,5000:1000").split(",").map((s) =>
  s.split(":").map(Number) as [number, number]
);
const rows: string[] = [];
for (const [nodes, services] of stages) {
  console.error(`stage: ${nodes} nodes, ${services} services: creating objects`);
  await ensureObjects(nodes, services);
  console.error(`stage: ${nodes} nodes, ${services} services: measuring`);
  const result = await measure();
  const synced = /nodes=(\d+) services=(\d+) seconds=([\d.]+)/.exec(result.syncLine);
  const row = `| ${nodes} | ${services} | ${synced?.[3] ?? "?"} | ${mib(result.VmRSS)} | ${mib(result.VmHWM)} | ${
    mib(result.RssAnon)
  } | ${mib(result.RssFile)} |`;
  console.log(`${row}   (${result.syncLine})`);
  rows.push(row);
}

const table = Deno.env.get("BENCH_TABLE") ?? "after";
const block = [
  `<!-- bench:memory:${table}:begin -->`,
  `Run ${new Date().toISOString()}, Deno ${Deno.version.deno}, program \`${
    LAUNCHER.replace(/^.*\/(ankra-cloud-ccm-[^/]+)\//, "$1/")
  }\`.`,
  "",
  "| nodes | services | list+sync s | VmRSS MiB | VmHWM MiB | RssAnon MiB | RssFile MiB |",
  "| --- | --- | --- | --- | --- | --- | --- |",
  ...rows,
  `<!-- bench:memory:${table}:end -->`,
].join("\n");
if (table === "none") Deno.exit(0);
const reportUrl = new URL("./memory_report.md", import.meta.url);
let report = "";
try {
  report = await Deno.readTextFile(reportUrl);
} catch (cause) {
  if (!(cause instanceof Deno.errors.NotFound)) throw cause;
}
const marked = new RegExp(`<!-- bench:memory:${table}:begin -->[\\s\\S]*?<!-- bench:memory:${table}:end -->`);
report = marked.test(report) ? report.replace(marked, () => block) : `${report}\n${block}\n`;
await Deno.writeTextFile(reportUrl, report);
console.log(block);
