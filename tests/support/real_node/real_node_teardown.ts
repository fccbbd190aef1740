/**
 * How the real single-node cluster stops (tests/support/real_node/real_node.ts): the workloads removed while the
 * kubelet still runs, kube-proxy's supervision ended and its rules removed, the kubelet, the containers and containerd
 * stopped, the control plane, the registry, then the host cleaned and what is still left read and returned (empty when
 * clean).
 *
 * @module
 */
import { stopProcess } from "../control_plane/control_plane.ts";
import { eventually } from "../wait/eventually.ts";
import type { ToolResult } from "../chart/helm.ts";
import {
  cleanHost,
  describeLeftovers,
  killShims,
  processesWithArgument,
  processesWorkingUnder,
  readHostState,
} from "./real_node_host.ts";
import { type NodeState, run } from "./real_node_start.ts";
import { runTeardownSteps } from "./teardown_steps.ts";

/**
 * Stops everything of the node and cleans the host; returns what was left behind, and a line for each step that failed.
 * Every step runs whatever the others did (a node whose start failed half-way is torn down as far as it got).
 */
export async function teardownNode(
  state: NodeState,
  kubectl: (args: string[]) => Promise<ToolResult>,
): Promise<string[]> {
  const { processes, nodeBinaries, paths, runc, dir, layout } = state;
  const stopNamed = async (name: string) => {
    const p = processes.get(name);
    if (p) await stopProcess(p, 15_000);
  };
  const ctr = (args: string[]) =>
    run(`${nodeBinaries}/ctr`, ["--address", paths.containerdSocket, "-n", "k8s.io", ...args]).catch(() => "");
  // Containers containerd could not remove are removed with runc directly in containerd's runc root; then the shims.
  const runcRoot = ["--root", `${paths.runcRoot}/k8s.io`];
  const failed = await runTeardownSteps([
    ["remove the workloads", () => removeWorkloads(state, kubectl)],
    ["stop kube-proxy", () => state.kubeProxy?.stop(15_000)],
    ["remove kube-proxy's rules", () => run(`${nodeBinaries}/kube-proxy`, ["--cleanup"]).catch(() => {})],
    ["stop the kubelet", () => stopNamed("kubelet")],
    ["stop the containers", async () => {
      const containerd = processes.get("containerd");
      if (!containerd || containerd.exited) return;
      const tasks = (await ctr(["tasks", "ls", "-q"])).split("\n").filter(Boolean);
      for (const id of tasks) await ctr(["tasks", "kill", "-s", "KILL", id]);
      for (const id of tasks) await ctr(["tasks", "delete", "-f", id]);
    }],
    ["stop containerd", () => stopNamed("containerd")],
    ["remove what runc still runs", async () => {
      for (const id of (await run(runc, [...runcRoot, "list", "-q"]).catch(() => "")).split("\n").filter(Boolean)) {
        await run(runc, [...runcRoot, "delete", "-f", id]).catch(() => {});
      }
    }],
    ["kill the shims", () => killShims(paths.containerdState)],
    ...["kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"].map((name) =>
      [`stop ${name}`, () => stopNamed(name)] as const
    ),
    ["stop the watchdog", () => state.watchdog?.kill("SIGKILL")],
    ["close the HTTP client", () => state.httpClient?.close()],
    ["stop the registry", () => state.registry.stop()],
    ["clean the host", () => cleanHost({ dir, nodeIp: layout.nodeIp })],
  ]);
  const left = describeLeftovers(await readHostState(dir, layout.nodeIp));
  const running = [...processes.entries()].filter(([, p]) => !p.exited).map(([name]) => `process ${name}`)
    .concat(processesWorkingUnder(dir).map((pid) => `process ${pid} working in ${dir}`))
    .concat(processesWithArgument(`${dir}/`).map((pid) => `process ${pid} started with an argument in ${dir}`));
  const all = [...failed, ...running, ...left];
  if (all.length === 0) await Deno.remove(dir, { recursive: true }).catch(() => {});
  else console.error(`real node: left behind (logs kept in ${dir}):\n  ${all.join("\n  ")}`);
  return all;
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
