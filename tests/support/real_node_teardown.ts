/**
 * How the real single-node cluster stops (tests/support/real_node.ts): the workloads removed while the kubelet still
 * runs, kube-proxy's supervision ended and its rules removed, the kubelet, the containers and containerd stopped, the
 * control plane, the registry, then the host cleaned and what is still left read and returned (empty when clean).
 *
 * @module
 */
import { stopProcess } from "./control_plane.ts";
import { eventually } from "./eventually.ts";
import type { ToolResult } from "./helm.ts";
import {
  cleanHost,
  describeLeftovers,
  killShims,
  processesWithArgument,
  processesWorkingUnder,
  readHostState,
} from "./real_node_host.ts";
import { type NodeState, run } from "./real_node_start.ts";

/** Stops everything of the node and cleans the host; returns what was left behind. */
export async function teardownNode(
  state: NodeState,
  kubectl: (args: string[]) => Promise<ToolResult>,
): Promise<string[]> {
  const { processes, nodeBinaries, paths, runc, dir, layout } = state;
  await removeWorkloads(state, kubectl);
  const stopNamed = async (name: string) => {
    const p = processes.get(name);
    if (p) await stopProcess(p, 15_000);
  };
  await state.kubeProxy?.stop(15_000);
  await run(`${nodeBinaries}/kube-proxy`, ["--cleanup"]).catch(() => {});
  await stopNamed("kubelet");
  const ctr = (args: string[]) =>
    run(`${nodeBinaries}/ctr`, ["--address", paths.containerdSocket, "-n", "k8s.io", ...args]).catch(() => "");
  const containerd = processes.get("containerd");
  if (containerd && !containerd.exited) {
    const tasks = (await ctr(["tasks", "ls", "-q"])).split("\n").filter(Boolean);
    for (const id of tasks) await ctr(["tasks", "kill", "-s", "KILL", id]);
    for (const id of tasks) await ctr(["tasks", "delete", "-f", id]);
  }
  await stopNamed("containerd");
  // Containers containerd could not remove, with runc directly in containerd's runc root; then the shims.
  const runcRoot = ["--root", `${paths.runcRoot}/k8s.io`];
  for (const id of (await run(runc, [...runcRoot, "list", "-q"]).catch(() => "")).split("\n").filter(Boolean)) {
    await run(runc, [...runcRoot, "delete", "-f", id]).catch(() => {});
  }
  killShims(paths.containerdState);
  for (const name of ["kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"]) await stopNamed(name);
  try {
    state.watchdog?.kill("SIGKILL");
  } catch { /* gone */ }
  state.httpClient?.close();
  await state.registry.stop();
  await cleanHost({ dir, nodeIp: layout.nodeIp });
  const left = describeLeftovers(await readHostState(dir, layout.nodeIp));
  const running = [...processes.entries()].filter(([, p]) => !p.exited).map(([name]) => `process ${name}`)
    .concat(processesWorkingUnder(dir).map((pid) => `process ${pid} working in ${dir}`))
    .concat(processesWithArgument(`${dir}/`).map((pid) => `process ${pid} started with an argument in ${dir}`));
  if (left.length === 0 && running.length === 0) await Deno.remove(dir, { recursive: true }).catch(() => {});
  else console.error(`real node: left behind (logs kept in ${dir}):\n  ${[...running, ...left].join("\n  ")}`);
  return [...running, ...left];
}

/** Deletes the workloads and waits (bounded) until the kubelet has torn every pod down. */
async function removeWorkloads(state: NodeState, kubectl: (args: string[]) => Promise<ToolResult>): Promise<void> {
  const apiserver = state.processes.get("kube-apiserver");
  const kubelet = state.processes.get("kubelet");
  if (!apiserver || apiserver.exited || !kubelet || kubelet.exited) return;
  await kubectl(["delete", "deployments,daemonsets,pods", "--all", "-A", "--wait=false"]).catch(() => {});
  await eventually(async () => {
    const pods = await kubectl(["get", "pods", "-A", "-o", "name"]).catch(() => undefined);
    return !pods || pods.stdout.trim() === "";
  }, { timeoutMs: 60_000, intervalMs: 500, what: "every pod deleted" }).catch(() => {
    // Best effort: the teardown goes on, and the leftover check reports what the kubelet left.
  });
}
