/**
 * Node events benchmark: what a node leaving and joining costs the traffic through a load balancer, on the real
 * two-node cluster (tests/support/real_cluster/real_cluster.ts: kubelets, containerd, kube-proxy, the bridge CNI in
 * network namespaces, the simulator's netns data plane):
 *
 *     source scripts/env.sh && deno task bench:node-events
 *
 * As root, with what the real cluster needs (`.ci/run` installs it; without it the benchmark says what is missing).
 * The controller runs as in the real-cluster test (a process in node a's namespace, `--v=4`, the IPv4 cluster's
 * settings), an agnhost netexec Deployment with one pod per node behind a LoadBalancer Service (health checks every
 * 1 s, rise 2). Per round (`BENCH_ROUNDS`, default 2) the four events of `real_cluster_node_events.ts`, each with 20
 * requests/s from the host to the Service's first address: the exclusion label on node b, the label removed, node b's
 * kubelet stopped and its Node deleted once NotReady, the kubelet started again. Reported per event: the time until the
 * load balancer's member set is right, and the requests that failed. Writes bench/node_events_report.md
 * (`BENCH_REPORT` for another path).
 *
 * @module
 */
import { kubeOk, serviceIngress } from "../tests/support/http/kube_http.ts";
import { startRealCluster } from "../tests/support/real_cluster/real_cluster.ts";
import { readClusterFacts, realClusterBlockers } from "../tests/support/real_cluster/real_cluster_host.ts";
import {
  EVENT_REQUESTS_PER_SECOND,
  type NodeEvent,
  runNodeEvents,
} from "../tests/support/real_cluster/real_cluster_node_events.ts";
import { memberStates } from "../tests/support/real_cluster/real_cluster_traffic.ts";
import { echoDeployment, echoService, lbOfService } from "../tests/support/real_cluster/real_cluster_workloads.ts";
import { readHostFacts } from "../tests/support/real_node/real_node_host.ts";
import { listPods, podReady, waitFor } from "../tests/support/real_node/real_node_objects.ts";

const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 2);
const REPORT = Deno.env.get("BENCH_REPORT") ?? new URL("./node_events_report.md", import.meta.url).pathname;
const APP = "echo";

const blockers = realClusterBlockers(await readClusterFacts(readHostFacts()));
if (blockers.length > 0) {
  console.error(`node events benchmark: cannot run here: ${blockers.join("; ")}`);
  Deno.exit(2);
}

const cluster = await startRealCluster({ clusterDns: false });
const rounds: { events: NodeEvent[]; notReadySeconds: number }[] = [];
let leftovers: string[] = [];
try {
  await kubeOk(cluster.plane, "POST", "/apis/apps/v1/namespaces/default/deployments", { body: echoDeployment(APP, 2) });
  await kubeOk(cluster.plane, "POST", "/api/v1/namespaces/default/services", {
    body: echoService(APP, { annotations: { "load-balancer.ankra.cloud/health-check-interval": "1" } }),
  });
  const [address] = await waitFor("the Service's address", 90_000, async () => {
    const addresses = await serviceIngress(cluster.plane, "default", APP);
    return addresses.length > 0 ? addresses : undefined;
  });
  for (let round = 1; round <= ROUNDS; round++) {
    await waitFor("both echo pods Ready and both members up", 120_000, async () => {
      const ready = (await listPods(cluster.plane, "default", `app=${APP}`)).filter(podReady);
      const members = memberStates(await lbOfService(cluster, APP));
      const nodes = new Set(members.map((m) => m.address));
      return ready.length === 2 && nodes.size === 2 && members.every((m) => m.health === "up");
    });
    const result = await runNodeEvents(cluster, APP, address);
    rounds.push(result);
    console.log(`round ${round}: ${JSON.stringify(result)}`);
  }
} catch (cause) {
  console.error(`${cause}\n${await cluster.logs()}`);
  throw cause;
} finally {
  leftovers = await cluster.stop();
}

const rows = rounds.flatMap((r, i) =>
  r.events.map((e) =>
    `| ${i + 1} | ${e.what} | ${e.seconds.toFixed(1)} s | ${e.failed} of ${e.sent} | ${e.slowestMs} ms | ${
      e.after.name !== undefined ? `yes, in ${e.after.ms} ms` : `no: ${e.after.problem}`
    } |`
  )
);
const report = [
  "# Node events through a load balancer (real two-node cluster)",
  "",
  "Command: `source scripts/env.sh && deno task bench:node-events` (bench/node_events_bench.ts), as root, on " +
  `${Deno.build.os}/${Deno.build.arch} with ${navigator.hardwareConcurrency} cores, ${new Date().toISOString()}.`,
  "",
  `Requests: ${EVENT_REQUESTS_PER_SECOND}/s from the host to the Service's address (each its own connection, through ` +
  "the simulator's netns data plane to the nodes' NodePorts), counted from each event until the load balancer's " +
  "member set is right. Health checks every 1 s, rise 2; `--member-drain-period` 30 s (the default), so an excluded " +
  "node stays a member at weight 0 for 30 s before it is removed.",
  "",
  "| Round | Event | Member set right after | Requests failed | Slowest answer | Answered after |",
  "| ---: | --- | ---: | ---: | ---: | --- |",
  ...rows,
  "",
  `Node b went NotReady ${rounds.map((r) => `${r.notReadySeconds.toFixed(1)} s`).join(", ")} after its kubelet ` +
  "stopped (node-monitor-grace-period 20 s in this cluster); its Node was deleted then.",
  "",
  leftovers.length === 0 ? "The cluster left nothing behind." : `Left behind: ${leftovers.join("; ")}`,
  "",
].join("\n");
await Deno.writeTextFile(REPORT, report);
console.log(report);
if (leftovers.length > 0) Deno.exit(1);
