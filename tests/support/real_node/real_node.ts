/**
 * A real single-node Kubernetes cluster with no CNI, for tests that need what only a real kubelet does: etcd and
 * kube-apiserver (the test binaries), kube-controller-manager, kube-scheduler, containerd with Debian's runc, a
 * kubelet started with `--cloud-provider=external` and an explicit node IP (as k3s starts its embedded one), and
 * kube-proxy — supervised as a DaemonSet's container is: restarted when it exits, each exit kept
 * ({@linkcode RealNode.kubeProxy}) — so pods reach the API server through the `kubernetes` Service. Images come from a
 * local registry (containerd pulls the pause image and every mirrored registry from it).
 *
 * The node IP is an RFC 1918 address added to `lo` (the simulator's networks are private). Everything else lives in
 * one temporary directory. {@linkcode RealNode.stop} stops every process by its PID, removes the netfilter rules,
 * mounts, cgroups and the address, and reports anything still left on the host (real_node_teardown.ts). The node
 * binaries come from `scripts/node_binaries.sh` (built from the Go module proxy on first use).
 *
 *     await using node = await startRealNode();
 *     await node.kubectl(["get", "nodes"]);
 *
 * @module
 */
import type { SharedControlPlane } from "../control_plane/control_plane.ts";
import { helm, kubectl, type ToolResult } from "../chart/helm.ts";
import type { TestRegistry } from "../image/registry.ts";
import type { RealNodeTimings } from "./real_node_files.ts";
import { containerCgroup } from "./real_node_host.ts";
import { logTail } from "../real_cluster/real_cluster_host.ts";
import {
  newNodeState,
  type NodeState,
  prepareNodeHost,
  run,
  startKubeProxy,
  startNodeControlPlane,
  startNodeRuntime,
  startNodeWatchdog,
} from "./real_node_start.ts";
import { teardownNode } from "./real_node_teardown.ts";
import { failedStart } from "./teardown_steps.ts";
import type { SupervisedProcess } from "./supervised_process.ts";

/** Options of {@linkcode startRealNode}. */
export interface RealNodeOptions {
  /** The Node's name (default `ccm-real-node`). */
  nodeName?: string;
  /** The node IP, added to `lo` (default `10.99.0.2`). */
  nodeIp?: string;
  /** Registry hosts containerd pulls from the local registry instead (e.g. the chart's default image registry). */
  mirroredRegistries?: string[];
  /** Node lifecycle timings (default: 20 s grace period, 5 s default not-ready toleration). */
  timings?: RealNodeTimings;
}

/** A running cluster. */
export interface RealNode extends AsyncDisposable {
  /** The Node's name. */
  nodeName: string;
  /** The node IP (on `lo`). */
  nodeIp: string;
  /** The cluster's directory (logs in `logs/`). */
  dir: string;
  /** Admin access in the shape the test helpers take (../http/kube_http.ts). */
  plane: SharedControlPlane;
  /** The local registry containerd pulls from. */
  registry: TestRegistry;
  /** kube-proxy under supervision, with its exits (kube-proxy 1.37 exits when the Node's IPs change). */
  kubeProxy: SupervisedProcess;
  /** Runs kubectl against this cluster. */
  kubectl(args: string[]): Promise<ToolResult>;
  /** Runs helm against this cluster, with Helm's homes from `env`. */
  helm(args: string[], env: Record<string, string>): Promise<ToolResult>;
  /** The PID (in the host's namespace) of a container's main process, from containerd. */
  containerPid(containerId: string): Promise<number>;
  /** The container's cgroup directory in `controller`'s hierarchy (v1) or the unified one (v2). */
  containerCgroup(containerId: string, controller: string): string;
  /** The last lines of every component's log, for a failure message. */
  logs(lines?: number): Promise<string>;
  /** Stops everything and cleans the host; returns what was still left behind (empty when clean). */
  stop(): Promise<string[]>;
}

const DEFAULT_TIMINGS: RealNodeTimings = { nodeMonitorGracePeriodSeconds: 20, defaultTolerationSeconds: 5 };

/**
 * Starts the cluster and waits until the Node is registered and kube-proxy has synced.
 *
 * @throws when a component does not start, with the end of the logs that explain it (after stopping what started).
 */
export async function startRealNode(options: RealNodeOptions = {}): Promise<RealNode> {
  const state = await newNodeState({
    nodeName: options.nodeName ?? "ccm-real-node",
    nodeIp: options.nodeIp ?? "10.99.0.2",
    mirroredRegistries: options.mirroredRegistries ?? [],
    timings: options.timings ?? DEFAULT_TIMINGS,
  });
  const node = nodeHandle(state);
  try {
    await prepareNodeHost(state);
    await startNodeControlPlane(state);
    await startNodeRuntime(state);
    await startKubeProxy(state);
    startNodeWatchdog(state);
    return node;
  } catch (cause) {
    throw await failedStart("the real node", cause, node);
  }
}

/** The node's handle over its state. */
function nodeHandle(state: NodeState): RealNode {
  const { paths, layout } = state;
  let stopped: Promise<string[]> | undefined;
  const node: RealNode = {
    nodeName: layout.nodeName,
    nodeIp: layout.nodeIp,
    dir: state.dir,
    plane: state.plane,
    registry: state.registry,
    get kubeProxy() {
      if (!state.kubeProxy) throw new Error("kube-proxy was not started");
      return state.kubeProxy;
    },
    kubectl: (args) => kubectl([...args, `--kubeconfig=${paths.adminKubeconfig}`], { noKubeconfigFlag: true }),
    helm: (args, env) => helm(args, { noKubeconfigFlag: true, env: { ...env, KUBECONFIG: paths.adminKubeconfig } }),
    containerPid: async (containerId) => {
      const ctr = ["--address", paths.containerdSocket, "-n", "k8s.io", "tasks", "ls"];
      const listed = await run(`${state.nodeBinaries}/ctr`, ctr);
      const line = listed.split("\n").find((l) => l.startsWith(`${containerId} `));
      if (!line) throw new Error(`containerd runs no task ${containerId}:\n${listed}`);
      return Number(line.trim().split(/\s+/)[1]);
    },
    containerCgroup,
    logs: async (lines = 40) => {
      const parts: string[] = [];
      for (const [name, p] of state.processes) parts.push(`--- ${name} (${p.log})\n${await logTail(p.log, lines)}`);
      return parts.join("\n");
    },
    stop: () => stopped ??= teardownNode(state, node.kubectl),
    [Symbol.asyncDispose]: async () => {
      await node.stop();
    },
  };
  return node;
}
