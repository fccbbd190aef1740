/**
 * How the real two-node cluster stops (tests/support/real_cluster/real_cluster.ts): the workloads removed while the
 * kubelets still run (they tear the pods down), every process stopped by its PID (kube-proxy's supervision first, so it
 * is not restarted), the mounts, cgroup roots, namespaces, veths, routes and backstops removed; then what is still left
 * on the host is read and returned (empty when clean), and the directory removed only when nothing is.
 *
 * @module
 */
import { stopProcess } from "../control_plane/control_plane.ts";
import { eventually } from "../wait/eventually.ts";
import type { ToolResult } from "../chart/helm.ts";
import {
  describeLeftovers,
  processesWithArgument,
  processesWorkingUnder,
  readHostState,
} from "../real_node/real_node_host.ts";
import {
  cgroupRootsLeft,
  output,
  readTopologyLeftovers,
  removeCgroupRoot,
  removeTopology,
} from "./real_cluster_host.ts";
import type { ClusterState } from "./real_cluster_steps.ts";
import { runTeardownSteps } from "../real_node/teardown_steps.ts";

/**
 * Stops everything of the cluster and cleans the host; returns what was left behind, and a line for each step that
 * failed. Every step runs whatever the others did: a half-started cluster (a node without kube-proxy, a control plane
 * without a scheduler) is torn down as far as it got.
 */
export async function teardownCluster(
  state: ClusterState,
  kubectl: (args: string[]) => Promise<ToolResult>,
): Promise<string[]> {
  const stopNamed = async (name: string) => {
    const p = state.processes.get(name);
    if (p) await stopProcess(p, 15_000);
  };
  const failed = await runTeardownSteps([
    ["remove the workloads", () => removeWorkloads(state, kubectl)],
    ...[...state.processes.keys()].filter((name) => name.startsWith("controller")).map((name) =>
      [`stop ${name}`, () => stopNamed(name)] as const
    ),
    ...state.nodes.map((node) => [`stop node ${node.plan.name}`, () => node.stop()] as const),
    ...["simulator", "kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"].map((name) =>
      [`stop ${name}`, () => stopNamed(name)] as const
    ),
    ["stop the watchdog", () => state.watchdog?.kill("SIGKILL")],
    ["close the HTTP client", () => state.httpClient?.close()],
    ["unmount", () => unmountUnder(state.dir)],
    ...state.topology.nodes.map((n) =>
      [`remove cgroup root ccm-${n.netns}`, () => removeCgroupRoot(`ccm-${n.netns}`)] as const
    ),
    ["remove the namespaces", () => removeTopology(state.topology)],
  ]);
  return [...failed, ...await leftBehind(state, failed)];
}

/** Deletes the workloads and waits (bounded) until the kubelets have removed every pod. */
async function removeWorkloads(state: ClusterState, kubectl: (args: string[]) => Promise<ToolResult>) {
  const apiserver = state.processes.get("kube-apiserver");
  if (!apiserver || apiserver.exited || state.nodes.every((n) => n.processes.get("kubelet")?.exited ?? true)) return;
  await kubectl(["delete", "deployments,daemonsets,replicasets,pods", "--all", "-A", "--wait=false"]).catch(() => {});
  await eventually(async () => {
    const pods = await kubectl(["get", "pods", "-A", "-o", "name"]).catch(() => undefined);
    return !pods || pods.stdout.trim() === "";
  }, { timeoutMs: 60_000, intervalMs: 500, what: "every pod deleted" }).catch(() => {
    // Best effort: the teardown goes on, and the leftover check reports what the kubelets left.
  });
}

async function unmountUnder(dir: string): Promise<void> {
  const mounts = (await Deno.readTextFile("/proc/self/mounts")).split("\n").map((l) => l.split(" ")[1] ?? "")
    .filter((m) => m.startsWith(`${dir}/`)).sort().reverse();
  for (const mount of mounts) if (!(await output("umount", [mount])).ok) await output("umount", ["-l", mount]);
}

/** What is still on the host: processes, mounts, netfilter rules, cgroup roots, network objects. */
async function leftBehind(state: ClusterState, failed: string[]): Promise<string[]> {
  const { dir, topology } = state;
  const left = [
    ...describeLeftovers(await readHostState(dir, topology.nodes[0].ip)),
    ...cgroupRootsLeft(topology.nodes.map((n) => `ccm-${n.netns}`)),
    ...await readTopologyLeftovers(topology),
  ];
  const running = [...state.processes.entries()].filter(([, p]) => !p.exited).map(([name]) => `process ${name}`)
    .concat(processesWorkingUnder(dir).map((pid) => `process ${pid} working in ${dir}`))
    .concat(processesWithArgument(`${dir}/`).map((pid) => `process ${pid} started with an argument in ${dir}`));
  if (left.length === 0 && running.length === 0 && failed.length === 0) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  } else {
    console.error(
      `real cluster: left behind (logs kept in ${dir}):\n  ${[...failed, ...running, ...left].join("\n  ")}`,
    );
  }
  return [...running, ...left];
}
