/**
 * The controller's memory as the kubelet's cgroup sees it: the chart installed on a real single-node cluster
 * (tests/support/real_node/real_node.ts), the image pulled from a local registry, the controller serving its own Node
 * and three LoadBalancer Services against the simulator. Reads the container's memory cgroup (v1:
 * `memory.usage_in_bytes`, `memory.max_usage_in_bytes`, `memory.stat`; v2: `memory.current`, `memory.peak`,
 * `memory.stat`) and the process's VmRSS/VmHWM, 20 samples 0.5 s apart once every Service has its address.
 *
 *     source scripts/env.sh && deno task bench:real-node-memory
 *
 * Needs what
 * tests/real/real_node_test.ts needs (root, runc, iptables, skopeo, Go, gcc). Writes
 * bench/real_node_memory_report.md. `CCM_TEST_IMAGE_LAYOUT` reuses an image built by `deno task image`.
 *
 * @module
 */
import { VERSION } from "../lib/version.ts";
import { helmHomes } from "../tests/support/chart/helm.ts";
import { kubeOk, serviceIngress } from "../tests/support/http/kube_http.ts";
import { startRealNode } from "../tests/support/real_node/real_node.ts";
import { readHostFacts, realNodeBlockers } from "../tests/support/real_node/real_node_host.ts";
import { containerId, listPods, podReady, waitFor } from "../tests/support/real_node/real_node_objects.ts";
import { serverSeed, startTestCloud, TEST_TOKEN, testSeed } from "../tests/support/cloud/simulator.ts";
import { testImageLayout } from "../tests/support/image/test_image.ts";
import { kubernetesVersions } from "../tests/support/control_plane/versions.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const NODE = "ccm-real-node";
const NODE_IP = "10.99.0.2";
const SERVICES = 3;
const versions = await kubernetesVersions();
const MiB = 1024 * 1024;

const blockers = realNodeBlockers(readHostFacts());
if (blockers.length > 0) {
  console.error(`cannot run a real node here: ${blockers.join("; ")}`);
  Deno.exit(1);
}

async function run(command: string, args: string[]): Promise<void> {
  const out = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) throw new Error(`${command} ${args.join(" ")} failed:\n${new TextDecoder().decode(out.stderr)}`);
}

function readNumber(file: string): number | undefined {
  try {
    return Number(Deno.readTextFileSync(file).trim());
  } catch {
    return undefined;
  }
}

function memoryStat(dir: string): Record<string, number> {
  const stat: Record<string, number> = {};
  for (const line of Deno.readTextFileSync(`${dir}/memory.stat`).split("\n")) {
    const [key, value] = line.split(" ");
    if (key) stat[key] = Number(value);
  }
  return stat;
}

function procStatus(pid: number): Record<string, number> {
  const fields: Record<string, number> = {};
  for (const line of Deno.readTextFileSync(`/proc/${pid}/status`).split("\n")) {
    const match = /^(VmRSS|VmHWM|RssAnon|RssFile):\s+(\d+) kB/.exec(line);
    if (match) fields[match[1]] = Number(match[2]) * 1024;
  }
  return fields;
}

const layout = await testImageLayout();
await using cloud = await startTestCloud(testSeed({
  networks: [{ id: "net-1", name: "private", zone: "de-fsn1", cidr: "10.99.0.0/24", ula_prefix: "fd64:1:0:1::/64" }],
  servers: [serverSeed({ hostname: NODE, zone: "de-fsn1", interfaces: [{ network_id: "net-1", address: NODE_IP }] })],
}));
await using node = await startRealNode({ nodeName: NODE, nodeIp: NODE_IP });
const work = await Deno.makeTempDir({ prefix: "ccm-real-node-bench-" });
const plane = node.plane;
const repository = `${node.registry.url}/library/ankra-cloud-ccm`;
await run("skopeo", [
  "copy",
  "--quiet",
  "--all",
  "--preserve-digests",
  "--dest-tls-verify=false",
  `oci:${layout}:${VERSION}`,
  `docker://${repository}:${VERSION}`,
]);
await kubeOk(plane, "POST", "/api/v1/namespaces/kube-system/secrets", {
  body: { metadata: { name: "ankra-cloud-api" }, stringData: { token: TEST_TOKEN } },
});
const installed = await node.helm([
  "install",
  "ankra-cloud-ccm",
  `${ROOT}chart`,
  "-n",
  "kube-system",
  "--set",
  "clusterName=bench",
  "--set",
  `api.url=${cloud.simulator.url}`,
  "--set",
  "api.existingSecret=ankra-cloud-api",
  "--set",
  "loadBalancer.networkID=net-1",
  "--set",
  `image.repository=${repository}`,
], helmHomes(`${work}/helm`));
if (installed.code !== 0) throw new Error(`helm install failed:\n${installed.text}`);
const started = performance.now();
const pod = await waitFor("the controller's pod Ready", 90_000, async () => {
  const pods = await listPods(plane, "kube-system", "app.kubernetes.io/name=ankra-cloud-ccm");
  return pods.length === 1 && podReady(pods[0]) ? pods[0] : undefined;
});
for (let i = 0; i < SERVICES; i++) {
  await kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
    body: {
      metadata: { name: `web-${i}` },
      spec: { type: "LoadBalancer", selector: { app: `web-${i}` }, ports: [{ port: 80, targetPort: 8080 }] },
    },
  });
}
await waitFor("every Service's ingress", 90_000, async () => {
  for (let i = 0; i < SERVICES; i++) {
    if ((await serviceIngress(plane, "default", `web-${i}`)).length === 0) return false;
  }
  return true;
});
const servedSeconds = (performance.now() - started) / 1000;

const id = containerId(pod);
const cgroup = node.containerCgroup(id, "memory");
const pid = await node.containerPid(id);
const v2 = readNumber(`${cgroup}/memory.current`) !== undefined;
const samples: { usage: number; rss: number; cache: number; vmRss: number; anon: number; file: number }[] = [];
for (let i = 0; i < 20; i++) {
  const stat = memoryStat(cgroup);
  samples.push({
    usage: readNumber(`${cgroup}/${v2 ? "memory.current" : "memory.usage_in_bytes"}`) ?? 0,
    rss: v2 ? stat.anon : stat.total_rss ?? stat.rss,
    cache: v2 ? stat.file : stat.total_cache ?? stat.cache,
    vmRss: procStatus(pid).VmRSS,
    anon: procStatus(pid).RssAnon,
    file: procStatus(pid).RssFile,
  });
  await new Promise((resolve) => setTimeout(resolve, 500));
}
const peak = readNumber(`${cgroup}/${v2 ? "memory.peak" : "memory.max_usage_in_bytes"}`) ?? 0;
const limit = readNumber(`${cgroup}/${v2 ? "memory.max" : "memory.limit_in_bytes"}`) ?? 0;
const hwm = procStatus(pid).VmHWM;
const last = samples[samples.length - 1];
const mib = (bytes: number) => (bytes / MiB).toFixed(1);
const row = (what: string, bytes: number) => `| ${what} | ${mib(bytes)} |`;
const report = [
  "# Memory under a real kubelet",
  "",
  `Run ${
    new Date().toISOString()
  } on a real single-node cluster (kubelet ${versions.current}, containerd ${versions.containerd}, runc; cgroup ` +
  `${v2 ? "v2" : "v1"}): the chart's pod (image ${VERSION} from a local registry, chart defaults: limit ` +
  `${mib(limit)} MiB) serving its own Node and ${SERVICES} LoadBalancer Services against the simulator; every ` +
  `Service had its address ${servedSeconds.toFixed(1)} s after the pod became Ready. Last of 20 samples 0.5 s apart.`,
  "",
  "Command: `source scripts/env.sh && deno task bench:real-node-memory` (as root).",
  "",
  "| what | MiB |",
  "| --- | --- |",
  row(`cgroup ${v2 ? "memory.current" : "memory.usage_in_bytes"} (anonymous + page cache)`, last.usage),
  row(`cgroup memory.stat ${v2 ? "anon" : "total_rss"} (anonymous memory)`, last.rss),
  row(`cgroup memory.stat ${v2 ? "file" : "total_cache"} (page cache: the image's files read)`, last.cache),
  row(`cgroup ${v2 ? "memory.peak" : "memory.max_usage_in_bytes"} (since the container started)`, peak),
  row("process VmRSS", last.vmRss),
  row("process RssAnon (its own memory)", last.anon),
  row("process RssFile (mapped files: the Deno runtime and the bundle)", last.file),
  row("process VmHWM (high-water mark)", hwm),
  "",
  "The cgroup, which the kubelet's accounting, the memory limit and the OOM killer use, charges the container its " +
  "anonymous memory (total_rss = RssAnon) and the page cache it brings in itself. The pages of the Deno runtime and " +
  "the bundle the process maps (RssFile) were already in the page cache, written there when containerd unpacked " +
  "the image, so they stay charged to containerd's cgroup: VmRSS counts them, the pod's memory does not. Where " +
  "they have left the page cache (a node that pulled the image long ago), the pod's cgroup is charged for them when " +
  "it reads them again: up to the RssFile figure more, as reclaimable page cache.",
  "",
].join("\n");
await Deno.writeTextFile(`${ROOT}bench/real_node_memory_report.md`, report);
console.log(report);
await Deno.remove(work, { recursive: true });
