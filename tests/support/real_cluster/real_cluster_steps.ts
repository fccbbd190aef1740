/**
 * The steps that start the real two-node cluster (tests/support/real_cluster/real_cluster.ts reads as their table of
 * contents), over one {@linkcode ClusterState}: the binaries located, the host prepared (namespaces, certificates,
 * tokens), the simulator with its data plane in the `cloud` namespace, the control plane on the host, the nodes in
 * their namespaces, every Node initialised, and the watchdog that cleans up after a killed test process.
 *
 * @module
 */
import type { Seed } from "../../../simulator/seed.ts";
import { findBinaries, freePort, kubeconfigText, type Started, startProcess } from "../control_plane/control_plane.ts";
import { kubeRequest } from "../http/kube_http.ts";
import { CLUSTER_DNS_IP, COREDNS_IMAGE } from "./real_cluster_dns.ts";
import { type RealNodeLayout, realNodePaths } from "../real_node/real_node_files.ts";
import { makeRealNodeCertificates, signWithClusterCa } from "../real_node/real_node_pki.ts";
import { adminPlane, type RealControlPlaneState, startRealControlPlane } from "../real_node/real_control_plane.ts";
import { locateNodeBinaries, which } from "../real_node/real_node_host.ts";
import { clusterSeed, SIMULATOR_PORT, simulatorCommand } from "./real_cluster_commands.ts";
import {
  buildTopology,
  clusterCrashCleanup,
  locateE2eBinaries,
  output,
  removeCgroupRoot,
  removeTopology,
  untilAlive,
} from "./real_cluster_host.ts";
import { type ClusterTopology, simulatorRouteFixes } from "./real_cluster_topology.ts";
import { cleanEarlierRuns } from "../real_node/teardown_steps.ts";
import { archiveImages, type ClusterNode, startClusterNode } from "./real_cluster_node.ts";

/** The agnhost image name the traffic tests' pods use (the same image the e2e framework names by its own tag). */
export const AGNHOST_IMAGE = "registry.k8s.io/e2e-test-images/agnhost:ccm-tests";

/** The name prefix of a real cluster's temporary directory. */
const CLUSTER_DIR_PREFIX = "ccm-real-cluster-";

/** What the cluster is made of: the binaries' directories and runc. */
export interface ClusterParts {
  /** kube-apiserver and etcd (the test binaries). */
  testBinaries: ReturnType<typeof findBinaries>;
  /** kubelet, kube-proxy, kube-controller-manager, kube-scheduler, containerd, the pause image. */
  nodeBinaries: string;
  /** e2e.test, the agnhost and CoreDNS images. */
  e2eBinaries: string;
  /** Debian's runc. */
  runc: string;
}

/** Everything the steps share. */
export interface ClusterState extends RealControlPlaneState {
  /** The network plan. */
  topology: ClusterTopology;
  /** The binaries. */
  parts: ClusterParts;
  /** The cluster's directory. */
  dir: string;
  /** Paths inside it. */
  paths: ReturnType<typeof realNodePaths>;
  /** The simulator's API. */
  simulatorUrl: string;
  /** The host's processes by name. */
  processes: Map<string, Started>;
  /** The nodes, as they start. */
  nodes: ClusterNode[];
  /** The watchdog (set last). */
  watchdog?: Deno.ChildProcess;
}

/** Finds (or builds) the binaries and runc. */
export async function locateParts(): Promise<ClusterParts> {
  const testBinaries = findBinaries();
  const nodeBinaries = await locateNodeBinaries();
  const e2eBinaries = await locateE2eBinaries();
  const runc = which("runc");
  if (!runc) throw new Error("runc is not on PATH: install the Debian package runc");
  return { testBinaries, nodeBinaries, e2eBinaries, runc };
}

/**
 * Removes what a crashed or aborted earlier run may have left (its processes and mounts, said on stderr; the
 * namespaces; the cgroup roots), and makes the state of a new cluster in a new directory.
 */
export async function newClusterState(topology: ClusterTopology, parts: ClusterParts): Promise<ClusterState> {
  await cleanEarlierRuns(CLUSTER_DIR_PREFIX);
  await removeTopology(topology);
  for (const n of topology.nodes) removeCgroupRoot(`ccm-${n.netns}`);
  const dir = await Deno.makeTempDir({ prefix: CLUSTER_DIR_PREFIX });
  const paths = realNodePaths(dir);
  const layout: RealNodeLayout = {
    dir,
    nodeName: topology.nodes[0].name,
    nodeIp: topology.hostIp,
    apiPort: freePort(),
    etcdPort: freePort(),
    kubeletPort: 0,
    kubeletHealthzPort: 0,
    controllerManagerPort: freePort(),
    schedulerPort: freePort(),
    proxyHealthzPort: 0,
    proxyMetricsPort: 0,
    registry: "registry.k8s.io",
    mirroredRegistries: [],
    runc: parts.runc,
  };
  return {
    topology,
    parts,
    dir,
    paths,
    layout,
    timings: { nodeMonitorGracePeriodSeconds: 20, defaultTolerationSeconds: 5 },
    plane: adminPlane(layout),
    simulatorUrl: `https://${topology.cloudIp}:${SIMULATOR_PORT}`,
    processes: new Map(),
    nodes: [],
  };
}

/** Starts a host process with its log in the cluster's `logs/`. */
export function startHostProcess(state: ClusterState, name: string, command: string, args: string[]): Started {
  const p = startProcess(command, args, `${state.paths.logs}/${name}.log`, true);
  state.processes.set(name, p);
  return p;
}

/** The cloud namespace, the cluster's CA and certificates (the simulator's too), the admin token and kubeconfig. */
export async function prepareHost(state: ClusterState): Promise<void> {
  const { topology, paths, plane } = state;
  await Deno.mkdir(paths.logs, { recursive: true });
  await buildTopology(topology, "cloud namespace");
  await makeRealNodeCertificates(paths.pki, { name: topology.nodes[0].name, ip: topology.hostIp });
  await signWithClusterCa(paths.pki, "simulator", { kind: "server", ips: [topology.gatewayIp, topology.cloudIp] });
  plane.caCert = await Deno.readTextFile(plane.caFile);
  state.httpClient = Deno.createHttpClient({ caCerts: [plane.caCert] });
  await Deno.writeTextFile(paths.tokens, `${plane.token},real-cluster-admin,real-cluster-admin,"system:masters"\n`);
  await Deno.writeTextFile(paths.adminKubeconfig, kubeconfigText(plane.url, plane.caCert, plane.token));
}

/**
 * The simulator in the cloud namespace (every node an Ankra server at its node IP on net-1), then the rest of the
 * network: the simulator must find its namespace with only `lo` when it starts (real_cluster_topology.ts).
 */
export async function startSimulator(state: ClusterState, certificates?: Seed["certificates"]): Promise<Started> {
  const { topology, dir, paths } = state;
  const seed = clusterSeed(topology, certificates);
  await Deno.writeTextFile(`${dir}/seed.json`, JSON.stringify(seed));
  const [command, args] = simulatorCommand(topology, {
    seed: `${dir}/seed.json`,
    cert: `${paths.pki}/simulator.crt`,
    key: `${paths.pki}/simulator.key`,
  });
  const simulator = startHostProcess(state, "simulator", command, args);
  await untilAlive("the simulator's data plane", 60_000, async () => {
    // Printed once its data plane has checked the namespace and made the public ranges local.
    return (await Deno.readTextFile(`${paths.logs}/simulator.log`)).includes("ankra-cloud-simulator listening on");
  }, [simulator]);
  // Before the bridge and the pod routes exist: routes via a node would otherwise resolve to the local `lo`.
  for (const args of simulatorRouteFixes(topology)) {
    const done = await output("ip", args);
    if (!done.ok) throw new Error(`\`ip ${args.join(" ")}\` failed: ${done.text.trim()}`);
  }
  await buildTopology(topology, "rest");
  return simulator;
}

/** etcd, kube-apiserver, kube-controller-manager and kube-scheduler on the host. */
export function startControlPlane(state: ClusterState): Promise<void> {
  return startRealControlPlane(
    state,
    state.parts,
    (name, command, args) => startHostProcess(state, name, command, args),
  );
}

/**
 * Every node, side by side, with the images they run loaded (pause, agnhost under the e2e framework's name and
 * {@linkcode AGNHOST_IMAGE}, CoreDNS). `dualStackNodes` get both families' node IPs.
 */
export async function startNodes(
  state: ClusterState,
  options: { dualStackNodes: string[]; kubeProxyRestartDelayMs?: number; brokenKubelets: string[] },
): Promise<void> {
  const { parts, topology, dir } = state;
  const agnhostTag = (await Deno.readTextFile(`${parts.e2eBinaries}/agnhost-tag`)).trim();
  const agnhost = `${parts.e2eBinaries}/agnhost-image`;
  const archives = await archiveImages([
    { layout: `${parts.nodeBinaries}/pause-image`, tag: "3.10", name: "registry.k8s.io/pause:3.10" },
    // The e2e framework's own pause pods name 3.10.1 (test/utils/image/manifest.go): the same program.
    { layout: `${parts.nodeBinaries}/pause-image`, tag: "3.10", name: "registry.k8s.io/pause:3.10.1" },
    { layout: agnhost, tag: agnhostTag, name: `registry.k8s.io/e2e-test-images/agnhost:${agnhostTag}` },
    { layout: agnhost, tag: agnhostTag, name: AGNHOST_IMAGE },
    { layout: `${parts.e2eBinaries}/coredns-image`, tag: "v1.15.0", name: COREDNS_IMAGE },
  ], dir);
  const context = {
    topology,
    clusterDir: dir,
    apiPort: state.layout.apiPort,
    token: state.plane.token,
    nodeBinaries: parts.nodeBinaries,
    runc: parts.runc,
    archives,
    clusterDns: CLUSTER_DNS_IP,
    dualStackNodes: options.dualStackNodes,
    kubeProxyRestartDelayMs: options.kubeProxyRestartDelayMs,
    brokenKubelets: options.brokenKubelets,
  };
  // Side by side, and every start waited for: a node still starting while the teardown runs would outlive it.
  const starts = await Promise.allSettled(
    topology.nodes.map((plan) => startClusterNode(plan, context, (node) => state.nodes.push(node))),
  );
  const failures = starts.flatMap((s, i) =>
    s.status === "rejected" ? [{ node: topology.nodes[i].name, why: s.reason }] : []
  );
  if (failures.length > 0) {
    const [first, ...others] = failures;
    const text = (why: unknown) => why instanceof Error ? why.message : String(why);
    throw new Error(
      `node ${first.node} did not start: ${text(first.why)}` +
        others.map((f) => `; node ${f.node} did not start either: ${text(f.why)}`).join(""),
    );
  }
}

/** Waits until every Node is Ready and initialised by the controller (no taint left). */
export async function nodesInitialised(state: ClusterState): Promise<void> {
  const initialised = async () => {
    type NodeList = {
      items: { spec: { taints?: unknown[] }; status: { conditions?: { type: string; status: string }[] } }[];
    };
    const list = await kubeRequest<NodeList>(state.plane, "GET", "/api/v1/nodes");
    return list.body.items.length === state.topology.nodes.length &&
      list.body.items.every((n) =>
        (n.spec.taints ?? []).length === 0 &&
        n.status.conditions?.some((c) => c.type === "Ready" && c.status === "True")
      );
  };
  await untilAlive("every Node Ready and initialised", 120_000, initialised, [...state.processes.values()]);
}

/** The watchdog that removes the cluster when the test process dies without stopping it (real_cluster_host.ts). */
export function startWatchdog(state: ClusterState): void {
  const pids = [...state.processes.values(), ...state.nodes.flatMap((n) => [...n.processes.values()])]
    .map((p) => p.child.pid);
  state.watchdog = new Deno.Command("sh", {
    args: [
      "-c",
      clusterCrashCleanup({
        parent: Deno.pid,
        pids,
        dir: state.dir,
        runcRoots: state.nodes.map((n) => n.runcRoot),
        runc: state.parts.runc,
        cgroupRoots: state.nodes.map((n) => n.cgroupRoot),
        topology: state.topology,
      }),
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  state.watchdog.unref();
}
