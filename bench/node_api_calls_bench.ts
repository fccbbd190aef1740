/**
 * Ankra API calls per minute made by the node controllers for 100 nodes, counted by the simulator, with the
 * default periods (server list 60 s, address refresh 5 min, lifecycle 5 s):
 *
 *     source scripts/env.sh && deno task bench:node-calls
 *
 * Phases: initialise 100 nodes; 60 s with every node Ready; 10 nodes go NotReady (their servers are read at once);
 * then 60 s with those 10 nodes NotReady. Writes
 * bench/node_api_calls_report.md. Target (issue 5): ≤ 2 calls/min for 100 healthy nodes, and no more per NotReady
 * node.
 *
 * @module
 */
import { CloudView } from "../lib/controllers/node/cloud_view.ts";
import { NodeController } from "../lib/controllers/node/node_controller.ts";
import { NodeLifecycleController } from "../lib/controllers/node/node_lifecycle_controller.ts";
import { KubeClient } from "../lib/kube/client.ts";
import { EventRecorder } from "../lib/kube/events.ts";
import { nodeInformer } from "../lib/kube/cluster_informers.ts";
import { testControlPlane } from "../tests/support/control_plane/control_plane.ts";
import { kubeletNode, kubeOk } from "../tests/support/http/kube_http.ts";
import { startTestCloud, testSeed } from "../tests/support/cloud/simulator.ts";
import { nodeWriter } from "../lib/kube/node_writes.ts";

const WINDOW_MS = Number(Deno.env.get("BENCH_WINDOW_MS") ?? 60_000);
const plane = testControlPlane();
await using cloud = await startTestCloud(testSeed());
const sim = cloud.simulator.sim;
const names = Array.from({ length: 100 }, (_, i) => `calls-${String(i).padStart(3, "0")}`);
for (const name of names) {
  sim.world.addServer({
    hostname: name,
    zone: "de-fsn1",
    plan: "standard-2c-4g",
    state: "started",
    labels: {},
    interfaces: [{ network_id: "net-1" }],
  });
}
for (let i = 0; i < names.length; i += 20) {
  await Promise.all(
    names.slice(i, i + 20).map((name) => kubeOk(plane, "POST", "/api/v1/nodes", { body: kubeletNode(name) })),
  );
}
const kube = new KubeClient({
  server: plane.url,
  caCerts: [plane.caCert],
  auth: { kind: "token", token: plane.token },
  source: "bench",
});
const nodes = nodeInformer(kube);
const view = new CloudView(cloud.client, { refreshPeriodMs: 60_000 });
const stop = new AbortController();
const runs = [nodes.run(stop.signal)];
await nodes.synced;
runs.push(
  view.run(stop.signal),
  new NodeController({
    writes: nodeWriter({ kube }),
    nodes: nodes.watched(),
    view,
    events: new EventRecorder(kube, { component: "cloud-node-controller" }),
    refreshPeriodMs: 300_000,
    workers: 1,
  }).run(stop.signal),
  new NodeLifecycleController({
    writes: nodeWriter({ kube }),
    nodes: nodes.watched(),
    view,
    events: new EventRecorder(kube, { component: "cloud-node-lifecycle-controller" }),
    periodMs: 5_000,
  }).run(stop.signal),
);
const started = performance.now();
while (nodes.watched().store.list().filter((n) => n.name.startsWith("calls-") && n.providerID).length < 100) {
  await new Promise((resolve) => setTimeout(resolve, 200));
}
const initSeconds = (performance.now() - started) / 1000;
const initCalls = Object.fromEntries(sim.counters);

function perMinute(before: number, after: number) {
  return ((after - before) * 60_000 / WINDOW_MS).toFixed(1);
}
const healthyBefore = sim.count();
await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
const healthy = perMinute(healthyBefore, sim.count());
const now = new Date().toISOString();
for (const name of names.slice(0, 10)) {
  await kubeOk(plane, "PATCH", `/api/v1/nodes/${name}/status`, {
    patch: "strategic",
    body: {
      status: { conditions: [{ type: "Ready", status: "False", lastHeartbeatTime: now, lastTransitionTime: now }] },
    },
  });
}
// The transition: the servers of nodes that just went NotReady are read once (one list for ten nodes).
const transitionBefore = sim.count();
await new Promise((resolve) => setTimeout(resolve, 10_000));
const transition = sim.count() - transitionBefore;
const notReadyBefore = sim.count();
await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
const notReady = perMinute(notReadyBefore, sim.count());
stop.abort();
await Promise.all(runs);
kube.close();
for (const name of names) await kubeOk(plane, "DELETE", `/api/v1/nodes/${name}`).catch(() => {});

const report = [
  "# Node controllers: Ankra API calls",
  "",
  "Command: `source scripts/env.sh && deno task bench:node-calls` (controllers in-process against the real",
  "kube-apiserver and the simulator).",
  "",
  `Run ${new Date().toISOString()}: 100 nodes and servers, default periods (server list 60 s, address refresh 5 min,`,
  `lifecycle 5 s), calls counted by the simulator over ${WINDOW_MS / 1000} s windows.`,
  "",
  "| phase | Ankra API calls |",
  "| --- | --- |",
  `| initialise 100 nodes (${initSeconds.toFixed(1)} s) | ${JSON.stringify(initCalls)} |`,
  `| 100 Ready nodes | ${healthy} per minute |`,
  `| 10 nodes go NotReady (the 10 s after) | ${transition} call(s) in all: their servers read once |`,
  `| 90 Ready + 10 NotReady nodes, steady | ${notReady} per minute |`,
  "",
  "For comparison, the framework's design (InstanceExists/InstanceShutdown per NotReady node every 5 s, a metadata",
  "call per node every 5 minutes) needs ~20/min for 100 healthy nodes plus 24/min per NotReady node.",
  "",
].join("\n");
await Deno.writeTextFile(new URL("./node_api_calls_report.md", import.meta.url), report);
console.log(report);
