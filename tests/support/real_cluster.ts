/**
 * A real two-node Kubernetes cluster that carries traffic, in network namespaces the harness makes
 * (`real_cluster_topology.ts`): the control plane (etcd, kube-apiserver advertising the host's veth address,
 * kube-controller-manager, kube-scheduler) on the host; the simulator with `--data-plane=netns` in the `cloud`
 * namespace, serving HTTPS with a certificate of the cluster's CA; per node a namespace with its own containerd,
 * kubelet and kube-proxy and the bridge CNI plugin (`real_cluster_node.ts`); the controller (`main.ts`) in the first
 * node's namespace, as the chart's hostNetwork pod would run; CoreDNS (`real_cluster_dns.ts`). Nothing is added
 * to the host's `lo` or netfilter tables.
 *
 * {@linkcode RealCluster.stop} (also on a failed start) removes the workloads while the kubelets run, stops every
 * process by its PID, unmounts, removes the cgroup roots, namespaces, veth, routes and backstops, and returns what was
 * still left (with the host checks of `real_node_host.ts`). A watchdog does the same when the test process is killed.
 *
 *     await using cluster = await startRealCluster();
 *     await cluster.kubectl(["get", "nodes"]);
 *
 * @module
 */
import {
  findBinaries,
  freePort,
  kubeconfigText,
  type SharedControlPlane,
  type Started,
  startProcess,
  stopProcess,
} from "./control_plane.ts";
import { eventually } from "./eventually.ts";
import { helm, kubectl, toolPath, type ToolResult } from "./helm.ts";
import { kubeRequest } from "./kube_http.ts";
import { CLUSTER_DNS_IP, COREDNS_IMAGE, deployClusterDns } from "./real_cluster_dns.ts";
import {
  apiserverArgs,
  controllerManagerArgs,
  etcdArgs,
  type RealNodeLayout,
  realNodePaths,
  schedulerArgs,
} from "./real_node_files.ts";
import { makeRealNodeCertificates, signWithClusterCa } from "./real_node_pki.ts";
import {
  describeLeftovers,
  locateNodeBinaries,
  processesWorkingUnder,
  readHostState,
  which,
} from "./real_node_host.ts";
import { clusterSeed, controllerCommand, SIMULATOR_PORT, simulatorCommand } from "./real_cluster_commands.ts";
import {
  buildTopology,
  cgroupRootsLeft,
  clusterCrashCleanup,
  locateE2eBinaries,
  output,
  readTopologyLeftovers,
  removeCgroupRoot,
  removeTopology,
  untilAlive,
} from "./real_cluster_host.ts";
import { type ClusterTopology, clusterTopology, simulatorRouteFixes } from "./real_cluster_topology.ts";
import { archiveImages, type ClusterNode, startClusterNode } from "./real_cluster_node.ts";
import { clusterLogs } from "./real_cluster_logs.ts";
import { simulatorAccess } from "./real_cluster_simulator.ts";

/** The agnhost image name the e2e tests (and the traffic tests) use. */
export const AGNHOST_IMAGE = "registry.k8s.io/e2e-test-images/agnhost:2.59";

/** Options of {@linkcode startRealCluster}. */
export interface RealClusterOptions {
  /** Node names (default `ccm-node-a`, `ccm-node-b`). */
  nodeNames?: string[];
  /** The controller's extra flags. */
  controllerArgs?: string[];
  /** Deploy CoreDNS (default true). */
  clusterDns?: boolean;
  /** Certificates the simulator's account holds (for TLS frontends). */
  certificates?: { id: string; certificate_pem: string; private_key_pem: string }[];
}

/** A running cluster. */
export interface RealCluster extends AsyncDisposable {
  /** The network plan. */
  topology: ClusterTopology;
  /** The cluster's directory. */
  dir: string;
  /** Admin access (kube_http.ts). */
  plane: SharedControlPlane;
  /** The nodes. */
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
  const testBinaries = findBinaries();
  const nodeBinaries = await locateNodeBinaries();
  const e2eBinaries = await locateE2eBinaries();
  const runc = which("runc");
  if (!runc) throw new Error("runc is not on PATH: install the Debian package runc");
  const topology = clusterTopology(options.nodeNames ?? ["ccm-node-a", "ccm-node-b"]);
  // What a crashed earlier run may have left.
  await removeTopology(topology);
  for (const n of topology.nodes) removeCgroupRoot(`ccm-${n.netns}`);
  const dir = await Deno.makeTempDir({ prefix: "ccm-real-cluster-" });
  const paths = realNodePaths(dir);
  const timings = { nodeMonitorGracePeriodSeconds: 20, defaultTolerationSeconds: 5 };
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
    runc,
  };
  const processes = new Map<string, Started>();
  const nodes: ClusterNode[] = [];
  const token = crypto.randomUUID().replaceAll("-", "");
  const apiUrl = `https://127.0.0.1:${layout.apiPort}`;
  const plane: SharedControlPlane = {
    url: apiUrl,
    token,
    caCert: "",
    caFile: `${paths.pki}/ca.crt`,
    kubeconfigPath: paths.adminKubeconfig,
    dir,
    etcdUrl: `http://127.0.0.1:${layout.etcdPort}`,
  };
  const simulatorUrl = `https://${topology.cloudIp}:${SIMULATOR_PORT}`;
  let httpClient: Deno.HttpClient | undefined;
  let watchdog: Deno.ChildProcess | undefined;
  const start = (name: string, command: string, args: string[]) => {
    const p = startProcess(command, args, `${paths.logs}/${name}.log`, true);
    processes.set(name, p);
    return p;
  };
  let controllerStarts = 0;
  let controllerName = "controller";
  const controllerKubeconfig = `${dir}/nodes/${topology.nodes[0].name}/admin.kubeconfig`;
  const startController = () => {
    const [cmd, argv] = controllerCommand(
      topology,
      { caFile: plane.caFile, kubeconfig: controllerKubeconfig },
      options.controllerArgs,
    );
    // Each start its own log (controller.log, controller-2.log, …): a restart keeps what the last run said.
    controllerStarts++;
    const name = controllerStarts === 1 ? "controller" : `controller-${controllerStarts}`;
    processes.set(name, startProcess(cmd, argv, `${paths.logs}/${name}.log`, true));
    controllerName = name;
  };
  const logs = (lines = 40) =>
    clusterLogs({
      logsDir: paths.logs,
      components: ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "simulator", controllerName],
      nodes,
      kubectl: cluster.kubectl,
    }, lines);
  const simulator = simulatorAccess(simulatorUrl, () => httpClient);
  const cluster: RealCluster = {
    topology,
    dir,
    plane,
    nodes,
    e2eBinaries,
    kubectlPath: toolPath("kubectl"),
    kubectl: (args) => kubectl([`--kubeconfig=${paths.adminKubeconfig}`, ...args], { noKubeconfigFlag: true }),
    helm: (args) => helm([...args, `--kubeconfig=${paths.adminKubeconfig}`], { noKubeconfigFlag: true }),
    simulatorState: simulator.state,
    simulatorControl: simulator.control,
    restartApiserver: async () => {
      const old = processes.get("kube-apiserver");
      if (old) await stopProcess(old, 15_000);
      Deno.renameSync(`${paths.logs}/kube-apiserver.log`, `${paths.logs}/kube-apiserver-before-restart.log`);
      const apiserver = start("kube-apiserver", testBinaries.kubeApiserver, apiserverArgs(layout, timings));
      await apiserverReady([apiserver]);
    },
    startController,
    killController: async () => {
      const p = processes.get(controllerName);
      if (p && !p.exited) {
        p.child.kill("SIGKILL");
        await p.status;
      }
    },
    logs,
    stop: () => stopped ??= teardown(),
    [Symbol.asyncDispose]: async () => {
      await cluster.stop();
    },
  };
  const apiserverReady = (alive: Started[]) =>
    untilAlive("kube-apiserver", 90_000, async () => {
      const response = await fetch(`${apiUrl}/readyz`, {
        headers: { authorization: `Bearer ${token}` },
        client: httpClient,
      });
      await response.body?.cancel();
      return response.ok;
    }, alive);
  let stopped: Promise<string[]> | undefined;
  const teardown = async (): Promise<string[]> => {
    const apiserver = processes.get("kube-apiserver");
    if (apiserver && !apiserver.exited && nodes.some((n) => !n.processes.get("kubelet")?.exited)) {
      // The kubelets tear the pods down (containers, sandboxes, volume mounts) while they still run.
      await cluster.kubectl(["delete", "deployments,daemonsets,replicasets,pods", "--all", "-A", "--wait=false"])
        .catch(() => {});
      await eventually(async () => {
        const pods = await cluster.kubectl(["get", "pods", "-A", "-o", "name"]).catch(() => undefined);
        return !pods || pods.stdout.trim() === "";
      }, { timeoutMs: 60_000, intervalMs: 500, what: "every pod deleted" }).catch(() => {
        // Best effort: the teardown goes on, and the leftover check below reports what the kubelets left.
      });
    }
    const stopNamed = async (name: string) => {
      const p = processes.get(name);
      if (p) await stopProcess(p, 15_000);
    };
    for (const name of processes.keys()) if (name.startsWith("controller")) await stopNamed(name);
    for (const node of nodes) await node.stop();
    for (const name of ["simulator", "kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"]) {
      await stopNamed(name);
    }
    try {
      watchdog?.kill("SIGKILL");
    } catch { /* gone */ }
    httpClient?.close();
    const mounts = (await Deno.readTextFile("/proc/self/mounts")).split("\n").map((l) => l.split(" ")[1] ?? "")
      .filter((m) => m.startsWith(`${dir}/`)).sort().reverse();
    for (const mount of mounts) if (!(await output("umount", [mount])).ok) await output("umount", ["-l", mount]);
    for (const n of topology.nodes) removeCgroupRoot(`ccm-${n.netns}`);
    await removeTopology(topology);
    const left = [
      ...describeLeftovers(await readHostState(dir, topology.nodes[0].ip)),
      ...cgroupRootsLeft(topology.nodes.map((n) => `ccm-${n.netns}`)),
      ...await readTopologyLeftovers(topology),
    ];
    const running = [...processes.entries()].filter(([, p]) => !p.exited).map(([name]) => `process ${name}`)
      .concat(processesWorkingUnder(dir).map((pid) => `process ${pid} working in ${dir}`));
    if (left.length === 0 && running.length === 0) await Deno.remove(dir, { recursive: true }).catch(() => {});
    else console.error(`real cluster: left behind (logs kept in ${dir}):\n  ${[...running, ...left].join("\n  ")}`);
    return [...running, ...left];
  };

  try {
    await Deno.mkdir(paths.logs, { recursive: true });
    await buildTopology(topology, "cloud namespace");
    await makeRealNodeCertificates(paths.pki, { name: topology.nodes[0].name, ip: topology.hostIp });
    await signWithClusterCa(paths.pki, "simulator", { kind: "server", ips: [topology.gatewayIp, topology.cloudIp] });
    plane.caCert = await Deno.readTextFile(plane.caFile);
    httpClient = Deno.createHttpClient({ caCerts: [plane.caCert] });
    await Deno.writeTextFile(paths.tokens, `${token},real-cluster-admin,real-cluster-admin,"system:masters"\n`);
    await Deno.writeTextFile(paths.adminKubeconfig, kubeconfigText(apiUrl, plane.caCert, token));

    // The simulator, in the cloud namespace: every node an Ankra server at its node IP on net-1.
    await Deno.writeTextFile(`${dir}/seed.json`, JSON.stringify(clusterSeed(topology, options.certificates)));
    const [simCmd, simArgs] = simulatorCommand(topology, {
      seed: `${dir}/seed.json`,
      cert: `${paths.pki}/simulator.crt`,
      key: `${paths.pki}/simulator.key`,
    });
    const simulatorProcess = start("simulator", simCmd, simArgs);
    await untilAlive("the simulator's data plane", 60_000, async () => {
      // Printed once its data plane has checked the namespace and made the public ranges local.
      return (await Deno.readTextFile(`${paths.logs}/simulator.log`)).includes("ankra-cloud-simulator listening on");
    }, [simulatorProcess]);
    // Before the bridge and the pod routes exist: routes via a node would otherwise resolve to the local `lo`.
    for (const args of simulatorRouteFixes(topology)) {
      const done = await output("ip", args);
      if (!done.ok) throw new Error(`\`ip ${args.join(" ")}\` failed: ${done.text.trim()}`);
    }
    await buildTopology(topology, "rest");

    const etcd = start("etcd", testBinaries.etcd, etcdArgs(layout));
    await untilAlive("etcd", 30_000, async () => (await fetch(`${plane.etcdUrl}/health`)).ok, [etcd]);
    const apiserver = start("kube-apiserver", testBinaries.kubeApiserver, apiserverArgs(layout, timings));
    await apiserverReady([etcd, apiserver]);
    start("kube-controller-manager", `${nodeBinaries}/kube-controller-manager`, controllerManagerArgs(layout, timings));
    start("kube-scheduler", `${nodeBinaries}/kube-scheduler`, schedulerArgs(layout));
    await untilAlive("the simulator", 60_000, async () => {
      await cluster.simulatorState();
      return true;
    }, [simulatorProcess]);

    const archives = await archiveImages([
      { layout: `${nodeBinaries}/pause-image`, tag: "3.10", name: "registry.k8s.io/pause:3.10" },
      // The e2e framework's own pause pods name 3.10.1 (test/utils/image/manifest.go): the same program.
      { layout: `${nodeBinaries}/pause-image`, tag: "3.10", name: "registry.k8s.io/pause:3.10.1" },
      { layout: `${e2eBinaries}/agnhost-image`, tag: "2.59", name: AGNHOST_IMAGE },
      { layout: `${e2eBinaries}/coredns-image`, tag: "v1.15.0", name: COREDNS_IMAGE },
    ], dir);
    const ctx = {
      topology,
      clusterDir: dir,
      apiPort: layout.apiPort,
      token,
      nodeBinaries,
      runc,
      archives,
      clusterDns: CLUSTER_DNS_IP,
    };
    await Promise.all(topology.nodes.map((plan) => startClusterNode(plan, ctx, (node) => nodes.push(node))));
    startController();
    const initialised = async () => {
      const list = await kubeRequest<
        { items: { spec: { taints?: unknown[] }; status: { conditions?: { type: string; status: string }[] } }[] }
      >(
        plane,
        "GET",
        "/api/v1/nodes",
      );
      return list.body.items.length === topology.nodes.length &&
        list.body.items.every((n) =>
          (n.spec.taints ?? []).length === 0 &&
          n.status.conditions?.some((c) => c.type === "Ready" && c.status === "True")
        );
    };
    await untilAlive("every Node Ready and initialised", 120_000, initialised, [...processes.values()]);
    if (options.clusterDns !== false) await deployClusterDns(plane);
    watchdog = new Deno.Command("sh", {
      args: [
        "-c",
        clusterCrashCleanup({
          parent: Deno.pid,
          pids: [...processes.values(), ...nodes.flatMap((n) => [...n.processes.values()])].map((p) => p.child.pid),
          dir,
          runcRoots: nodes.map((n) => n.runcRoot),
          runc,
          cgroupRoots: nodes.map((n) => n.cgroupRoot),
          topology,
        }),
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    watchdog.unref();
    return cluster;
  } catch (cause) {
    const text = await logs(30);
    await cluster.stop();
    throw new Error(`the real cluster did not start: ${cause instanceof Error ? cause.message : cause}\n${text}`);
  }
}
