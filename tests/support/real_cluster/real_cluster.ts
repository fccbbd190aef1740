/**
 * A real two-node Kubernetes cluster that carries traffic, in network namespaces the harness makes
 * (`real_cluster_topology.ts`): the control plane (etcd, kube-apiserver advertising the host's veth address,
 * kube-controller-manager, kube-scheduler) on the host; the simulator with `--data-plane=netns` in the `cloud`
 * namespace, serving HTTPS with a certificate of the cluster's CA; per node a namespace with its own containerd,
 * kubelet and kube-proxy (supervised: restarted when it exits, each exit counted) and the bridge CNI plugin
 * (`real_cluster_node.ts`); the controller (`main.ts`) in the first node's namespace, as the chart's hostNetwork pod
 * would run; CoreDNS (`real_cluster_dns.ts`). Nothing is added to the host's `lo` or netfilter tables.
 *
 * The first node's kubelet gets both families' node IPs (`--node-ip=<v4>,<ULA>`, k3s's `--kubelet-arg=node-ip=…`),
 * the others the IPv4 alone (k3s's `--node-ip`): kube-proxy's node IPs are then fixed on the first node and change
 * once, at initialisation, on the others (kube-proxy 1.37 exits on that change).
 *
 * {@linkcode RealCluster.stop} (also on a failed start) removes the workloads while the kubelets run, stops every
 * process by its PID, unmounts, removes the cgroup roots, namespaces, veth, routes and backstops, and returns what was
 * still left (with the host checks of `../real_node/real_node_host.ts`). A watchdog does the same when the test process
 * is killed.
 *
 *     await using cluster = await startRealCluster();
 *     await cluster.kubectl(["get", "nodes"]);
 *
 * @module
 */
import type { Seed } from "../../../simulator/seed.ts";
import { type SharedControlPlane, startProcess, stopProcess } from "../control_plane/control_plane.ts";
import { helm, kubectl, toolPath, type ToolResult } from "../chart/helm.ts";
import { deployClusterDns } from "./real_cluster_dns.ts";
import { startApiserver, startControllerManager } from "../real_node/real_control_plane.ts";
import { controllerCommand } from "./real_cluster_commands.ts";
import { type ClusterTopology, clusterTopology } from "./real_cluster_topology.ts";
import type { ClusterNode } from "./real_cluster_node.ts";
import { clusterLogs } from "./real_cluster_logs.ts";
import { type LoggedRequest, simulatorAccess } from "./real_cluster_simulator.ts";
import {
  type ClusterState,
  locateParts,
  newClusterState,
  nodesInitialised,
  prepareHost,
  startControlPlane,
  startHostProcess,
  startNodes,
  startSimulator,
  startWatchdog,
} from "./real_cluster_steps.ts";
import { teardownCluster } from "./real_cluster_teardown.ts";
import { failedStart } from "../real_node/teardown_steps.ts";

/** Options of {@linkcode startRealCluster}. */
export interface RealClusterOptions {
  /** Node names (default `ccm-node-a`, `ccm-node-b`). */
  nodeNames?: string[];
  /** Nodes whose kubelet gets both families' node IPs (default: the first node). */
  dualStackNodes?: string[];
  /** The controller's extra flags. */
  controllerArgs?: string[];
  /** Deploy CoreDNS (default true). */
  clusterDns?: boolean;
  /** Certificates the simulator's account holds (for TLS frontends). */
  certificates?: Seed["certificates"];
  /** The pause before a kube-proxy that exited is started again (default 5 s, k3s's `RestartSec`). */
  kubeProxyRestartDelayMs?: number;
  /**
   * A fault for the tests of a failed start: these nodes' kubelet is a program that exits at once (`false`), so their
   * start fails after containerd is up and before kube-proxy.
   */
  brokenKubelets?: string[];
}

/** A running cluster. */
export interface RealCluster extends AsyncDisposable {
  /** The network plan. */
  topology: ClusterTopology;
  /** The cluster's directory. */
  dir: string;
  /** Admin access (../http/kube_http.ts). */
  plane: SharedControlPlane;
  /** The nodes (each with its supervised kube-proxy and its exits). */
  nodes: ClusterNode[];
  /** The e2e binaries' directory (e2e.test). */
  e2eBinaries: string;
  /** kubectl's path. */
  kubectlPath: string;
  /** Runs kubectl against the cluster. */
  kubectl(args: string[]): Promise<ToolResult>;
  /** Runs helm against the cluster. */
  helm(args: string[]): Promise<ToolResult>;
  /** The simulator's `/_simulator/state` document. */
  simulatorState(): Promise<Record<string, unknown>>;
  /** The simulator's request log, oldest first. */
  simulatorRequests(): Promise<LoggedRequest[]>;
  /** The simulator's base URL as the host reaches it (HTTPS, a certificate of the cluster's CA: `plane.caFile`). */
  simulatorUrl: string;
  /** A request to the simulator's control API (`/_simulator<path>`); throws unless it answers 2xx. */
  simulatorControl(method: string, path: string, body?: unknown): Promise<void>;
  /** Stops kube-apiserver and starts it again (same flags and port); resolves once it is ready. */
  restartApiserver(): Promise<void>;
  /** Starts the controller (again). */
  startController(): void;
  /** Kills the controller (SIGKILL). */
  killController(): Promise<void>;
  /** The last lines of every component's log (control plane, nodes, simulator, controller process and pod). */
  logs(lines?: number): Promise<string>;
  /** Stops everything and cleans the host; returns what was left behind (empty when clean). */
  stop(): Promise<string[]>;
}

/**
 * Starts the cluster and waits until every Node is Ready and initialised by the controller (no taints left).
 *
 * @throws when a part does not start, with the end of the logs that explain it (after removing what started).
 */
export async function startRealCluster(options: RealClusterOptions = {}): Promise<RealCluster> {
  const parts = await locateParts();
  const topology = clusterTopology(options.nodeNames ?? ["ccm-node-a", "ccm-node-b"]);
  const state = await newClusterState(topology, parts);
  const cluster = clusterHandle(state, options);
  try {
    await prepareHost(state);
    await startSimulator(state, options.certificates);
    await startControlPlane(state);
    await startNodes(state, {
      dualStackNodes: options.dualStackNodes ?? [topology.nodes[0].name],
      kubeProxyRestartDelayMs: options.kubeProxyRestartDelayMs,
      brokenKubelets: options.brokenKubelets ?? [],
    });
    cluster.startController();
    await nodesInitialised(state);
    if (options.clusterDns !== false) await deployClusterDns(state.plane);
    startWatchdog(state);
    return cluster;
  } catch (cause) {
    throw await failedStart("the real cluster", cause, cluster);
  }
}

/** The cluster's handle over its state: tools against it, the controller's process, logs and stop. */
function clusterHandle(state: ClusterState, options: RealClusterOptions): RealCluster {
  const { paths, topology, plane } = state;
  let controllerStarts = 0;
  let controllerName = "controller";
  let stopped: Promise<string[]> | undefined;
  const simulator = simulatorAccess(state.simulatorUrl, () => state.httpClient);
  const cluster: RealCluster = {
    topology,
    dir: state.dir,
    plane,
    nodes: state.nodes,
    e2eBinaries: state.parts.e2eBinaries,
    kubectlPath: toolPath("kubectl"),
    kubectl: (args) => kubectl([`--kubeconfig=${paths.adminKubeconfig}`, ...args], { noKubeconfigFlag: true }),
    helm: (args) => helm([...args, `--kubeconfig=${paths.adminKubeconfig}`], { noKubeconfigFlag: true }),
    simulatorState: simulator.state,
    simulatorRequests: simulator.requests,
    simulatorUrl: state.simulatorUrl,
    simulatorControl: simulator.control,
    restartApiserver: async () => {
      // kube-controller-manager goes down and up with the API server, as a k3s server's restart (one process) takes
      // both: its node monitor then counts the kubelets' leases afresh. Left running, it saw leases older than its 20 s
      // grace after a slow restart on a loaded machine and evicted a node's pods (echo pod, CoreDNS) 7 s after the API
      // server was back — a restart no real cluster (defaults 50 s and 300 s) would turn into an eviction.
      const start = (name: string, command: string, args: string[]) => startHostProcess(state, name, command, args);
      for (const name of ["kube-controller-manager", "kube-apiserver"]) {
        const old = state.processes.get(name);
        if (old) await stopProcess(old, 15_000);
        Deno.renameSync(`${paths.logs}/${name}.log`, `${paths.logs}/${name}-before-restart.log`);
      }
      await startApiserver(state, state.parts, start);
      startControllerManager(state, state.parts, start);
    },
    startController: () => {
      const controllerKubeconfig = `${state.dir}/nodes/${topology.nodes[0].name}/admin.kubeconfig`;
      const [cmd, argv] = controllerCommand(
        topology,
        { caFile: plane.caFile, kubeconfig: controllerKubeconfig },
        options.controllerArgs,
      );
      // Each start its own log (controller.log, controller-2.log, …): a restart keeps what the last run said.
      controllerStarts++;
      controllerName = controllerStarts === 1 ? "controller" : `controller-${controllerStarts}`;
      state.processes.set(controllerName, startProcess(cmd, argv, `${paths.logs}/${controllerName}.log`, true));
    },
    killController: async () => {
      const p = state.processes.get(controllerName);
      if (p && !p.exited) {
        p.child.kill("SIGKILL");
        await p.status;
      }
    },
    logs: (lines = 40) =>
      clusterLogs({
        logsDir: paths.logs,
        components: ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "simulator", controllerName],
        nodes: state.nodes,
        kubectl: cluster.kubectl,
      }, lines),
    stop: () => stopped ??= teardownCluster(state, cluster.kubectl),
    [Symbol.asyncDispose]: async () => {
      await cluster.stop();
    },
  };
  return cluster;
}
