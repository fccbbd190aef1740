/**
 * A real cluster whose start fails half-way reports the first failure, not the teardown's, and leaves nothing on the
 * host. The fault: the second node's kubelet is a program that exits at once, so that node fails after its containerd
 * is up and before kube-proxy, while the first node starts fully beside it (the nodes start side by side) — the shape
 * of the fresh-machine failure that a teardown reading a missing kube-proxy used to hide (and whose live leftovers
 * broke the next start). Checked after the failure: network namespaces, veths and routes of the plan, mounts, cgroup
 * roots and processes of any real cluster's directory.
 *
 * Needs what the real cluster needs; without it the test is ignored and says why.
 */
import assert from "node:assert/strict";
import { startRealCluster } from "../support/real_cluster/real_cluster.ts";
import {
  cgroupRootsLeft,
  readClusterFacts,
  readTopologyLeftovers,
  realClusterBlockers,
} from "../support/real_cluster/real_cluster_host.ts";
import { readHostFacts } from "../support/real_node/real_node_host.ts";
import { clusterTopology } from "../support/real_cluster/real_cluster_topology.ts";
import { earlierRunDirs } from "../support/real_node/teardown_steps.ts";

const blockers = realClusterBlockers(await readClusterFacts(readHostFacts()));
if (blockers.length > 0) console.log(`real-cluster start-failure test ignored: ${blockers.join("; ")}`);

const NODES = ["ccm-node-a", "ccm-node-b"];

/** What of any real cluster is still on the host: its processes and mounts, the plan's network, cgroup roots. */
async function leftOnHost(dirsBefore: string[]): Promise<string[]> {
  const topology = clusterTopology(NODES);
  const dirs = earlierRunDirs("ccm-real-cluster-").filter((d) => !dirsBefore.includes(d));
  const left = [
    ...await readTopologyLeftovers(topology),
    ...cgroupRootsLeft(topology.nodes.map((n) => `ccm-${n.netns}`)),
    ...dirs.map((d) => `directory ${d}`),
  ];
  const mounts = (await Deno.readTextFile("/proc/self/mounts")).split("\n").map((l) => l.split(" ")[1] ?? "");
  left.push(...mounts.filter((m) => m.includes("/ccm-real-cluster-")).map((m) => `mount ${m}`));
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name) || Number(entry.name) === Deno.pid) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).replaceAll("\0", " ");
      if (cmdline.includes("/ccm-real-cluster-")) left.push(`process ${entry.name}: ${cmdline.slice(0, 160)}`);
    } catch { /* gone */ }
  }
  return left;
}

Deno.test({
  name: "a real cluster whose node fails to start reports that node's error and leaves nothing behind",
  ignore: blockers.length > 0,
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const dirsBefore = earlierRunDirs("ccm-real-cluster-");
  const started = performance.now();
  const failure = await startRealCluster({ nodeNames: NODES, clusterDns: false, brokenKubelets: ["ccm-node-b"] })
    .then(async (cluster) => {
      await cluster.stop();
      return undefined;
    }, (error: unknown) => error instanceof Error ? error : new Error(String(error)));
  console.log(`failed start and teardown: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  assert.ok(failure, "the start succeeded with a kubelet that exits at once");
  const firstLine = failure.message.split("\n")[0];
  console.log(`reported: ${firstLine}`);
  assert.match(firstLine, /node ccm-node-b did not start: .*kubelet exited/, "the failing node and part are named");
  assert.doesNotMatch(firstLine, /ccm-node-a did not start/, "the node that started is not blamed");
  assert.doesNotMatch(failure.message, /^teardown:|after the failed start, the teardown left/m, failure.message);
  assert.match(failure.message, /--- ccm-node-b kubelet/, "the failing node's logs come with the error");
  assert.deepEqual(await leftOnHost(dirsBefore), [], "nothing of the cluster is left on the host");
});
