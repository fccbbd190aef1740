/**
 * One node of the real two-node cluster (tests/support/real_cluster/real_cluster.ts) inside its own network namespace:
 * its own containerd (root, state, socket, runc root; pod namespaces under its state directory), the images it runs
 * loaded into it with `ctr images import` (it pulls nothing: the nodes have no way out), the bridge CNI plugin, a
 * kubelet with its own cgroup root, client certificate and node IPs (one family, or both with {@linkcode NodeContext}'s
 * `dualStackNodes`), and kube-proxy — supervised as a DaemonSet's container or k3s's unit is: restarted when it exits,
 * every exit counted ({@linkcode ClusterNode.kubeProxy}). The configuration is `../real_node/real_node_files.ts`'s,
 * with the options a node in a namespace needs.
 *
 * @module
 */
import { kubeconfigText, type Started, startProcess, stopProcess } from "../control_plane/control_plane.ts";
import {
  clientCertKubeconfig,
  containerdConfig,
  kubeletArgs,
  kubeletConfig,
  kubeProxyConfig,
  type RealNodeLayout,
  realNodePaths,
} from "../real_node/real_node_files.ts";
import { signWithClusterCa } from "../real_node/real_node_pki.ts";
import { killShims } from "../real_node/real_node_host.ts";
import {
  CNI_PLUGIN_DIR,
  inNetns,
  logTail,
  makeCgroupRoot,
  output,
  removeCgroupRoot,
  untilAlive,
} from "./real_cluster_host.ts";
import { bridgeConflist, type ClusterTopology, type NodePlan } from "./real_cluster_topology.ts";
import { supervise, type SupervisedProcess } from "../real_node/supervised_process.ts";
import { runTeardownSteps } from "../real_node/teardown_steps.ts";

/** An image to load into every node: an OCI layout directory, its tag there, and the name the node knows it by. */
export interface NodeImage {
  /** The OCI layout directory. */
  layout: string;
  /** The tag inside the layout. */
  tag: string;
  /** The image name pods use (e.g. `registry.k8s.io/pause:3.10`). */
  name: string;
}

/** A running node. */
export interface ClusterNode {
  /** The plan's node. */
  plan: NodePlan;
  /** Its directory (logs in `logs/`). */
  dir: string;
  /** The kubelet's cgroup root (a directory name in every hierarchy). */
  cgroupRoot: string;
  /** Its runc root (containers containerd could not remove are removed there). */
  runcRoot: string;
  /** Its processes by component (kube-proxy's current run among them). */
  processes: Map<string, Started>;
  /** kube-proxy under supervision: its exits (kube-proxy 1.37 exits when the Node's IPs change). */
  kubeProxy: SupervisedProcess;
  /** The kubelet's `--node-ip` list. */
  kubeletNodeIps: string[];
  /** Starts the kubelet again after {@linkcode ClusterNode.stopKubelet}. */
  startKubelet(): void;
  /** Starts kube-proxy under supervision (once, at the node's start). */
  startKubeProxy(): void;
  /** Stops the kubelet (the node goes NotReady; its pods keep running). */
  stopKubelet(): Promise<void>;
  /** Loads docker-archive tars ({@linkcode archiveImages}) into the node's containerd, as at its start. */
  importImages(tars: string[]): Promise<void>;
  /** The host PID of a running container's first process (a CRI container ID). */
  containerPid(containerId: string): Promise<number>;
  /** The last lines of the node's component logs. */
  logs(lines: number): Promise<string>;
  /** Stops everything of the node (containers too); the network namespace stays (the topology removes it). */
  stop(): Promise<void>;
}

/** What a node needs from the cluster. */
export interface NodeContext {
  /** The plan. */
  topology: ClusterTopology;
  /** The cluster's directory (`pki/` holds the CA). */
  clusterDir: string;
  /** kube-apiserver's port on the host. */
  apiPort: number;
  /** The admin token. */
  token: string;
  /** The directory of the node binaries (kubelet, kube-proxy, containerd, ctr). */
  nodeBinaries: string;
  /** runc. */
  runc: string;
  /** docker-archive tars to import (from {@linkcode archiveImages}). */
  archives: string[];
  /** The kubelet's `clusterDNS`, when the cluster has DNS. */
  clusterDns?: string;
  /**
   * Names of the nodes whose kubelet gets both families' node IPs (`<v4>,<public IPv6>`, k3s's guidance); the others
   * get the IPv4 alone.
   */
  dualStackNodes: string[];
  /** The pause before kube-proxy is started again after an exit (default 5 s, k3s's `RestartSec`). */
  kubeProxyRestartDelayMs?: number;
  /** Nodes whose kubelet is `false` (a fault: their start fails before kube-proxy). */
  brokenKubelets?: string[];
}

/** Packs each image into a docker-archive tar under `dir` (named, so `ctr images import` tags it); returns the paths. */
export async function archiveImages(images: NodeImage[], dir: string): Promise<string[]> {
  const tars: string[] = [];
  for (const [i, image] of images.entries()) {
    const tar = `${dir}/image-${i}.tar`;
    const done = await output("skopeo", [
      "copy",
      "--quiet",
      `oci:${image.layout}:${image.tag}`,
      `docker-archive:${tar}:${image.name}`,
    ]);
    if (!done.ok) throw new Error(`skopeo could not pack ${image.name} from ${image.layout}: ${done.text.trim()}`);
    tars.push(tar);
  }
  return tars;
}

/**
 * Starts containerd, loads the images, writes the CNI configuration, starts the kubelet and kube-proxy (supervised) in
 * the node's namespace, and waits until containerd answers and kube-proxy's healthz does.
 *
 * @throws naming the component that did not start (what started is left for {@linkcode ClusterNode.stop}, which the
 * caller reaches through `started`).
 */
export async function startClusterNode(
  plan: NodePlan,
  ctx: NodeContext,
  started: (node: ClusterNode) => void,
): Promise<ClusterNode> {
  const layout = nodeLayout(plan, ctx);
  const paths = realNodePaths(layout.dir);
  const { node, launch } = clusterNodeHandle(plan, ctx, layout);
  started(node);
  await writeNodeFiles(plan, ctx, layout);
  const containerd = launch("containerd", "env", [
    `PATH=${ctx.nodeBinaries}:${Deno.env.get("PATH") ?? "/usr/sbin:/usr/bin:/sbin:/bin"}`,
    `${ctx.nodeBinaries}/containerd`,
    "--config",
    paths.containerdConfig,
  ]);
  await untilAlive(`containerd of ${plan.name}`, 30_000, async () => (await nodeCtr(ctx, paths, ["version"])).ok, [
    containerd,
  ]);
  await node.importImages(ctx.archives);
  makeCgroupRoot(node.cgroupRoot);
  await Deno.writeTextFile(paths.kubeletConfig, kubeletConfig(layout));
  node.startKubelet();
  await Deno.writeTextFile(paths.proxyConfig, kubeProxyConfig(layout));
  node.startKubeProxy();
  await untilAlive(`kube-proxy of ${plan.name}`, 60_000, async () => {
    const response = await fetch(`http://${plan.ip}:${layout.proxyHealthzPort}/healthz`);
    await response.body?.cancel();
    return response.ok;
  }, [node.kubeProxy.current(), node.processes.get("kubelet")!, containerd]);
  return node;
}

/** The node's layout: its own directory, node IPs, cgroup root and the ports a node in a namespace uses. */
function nodeLayout(plan: NodePlan, ctx: NodeContext): RealNodeLayout {
  return {
    dir: `${ctx.clusterDir}/nodes/${plan.name}`,
    nodeName: plan.name,
    nodeIp: plan.ip,
    kubeletNodeIps: ctx.dualStackNodes.includes(plan.name) ? [plan.ip, plan.publicIp6] : [plan.ip],
    apiPort: ctx.apiPort,
    etcdPort: 0,
    kubeletPort: 10250,
    kubeletHealthzPort: 10248,
    controllerManagerPort: 0,
    schedulerPort: 0,
    proxyHealthzPort: 10256,
    proxyMetricsPort: 10249,
    registry: "registry.k8s.io",
    mirroredRegistries: [],
    runc: ctx.runc,
    apiHost: ctx.topology.hostIp,
    localAddress: plan.ip,
    cgroupRoot: `/ccm-${plan.netns}`,
    clusterCidr: ctx.topology.clusterCidr,
    clusterDns: ctx.clusterDns,
    podNetnsUnderState: true,
  };
}

function nodeCtr(ctx: NodeContext, paths: ReturnType<typeof realNodePaths>, args: string[]) {
  return output(`${ctx.nodeBinaries}/ctr`, ["--address", paths.containerdSocket, "-n", "k8s.io", ...args]);
}

/** The node's handle (what a test does with it), and how it starts a process in the node's namespace. */
function clusterNodeHandle(
  plan: NodePlan,
  ctx: NodeContext,
  layout: RealNodeLayout,
): { node: ClusterNode; launch: (name: string, command: string, args: string[]) => Started } {
  const paths = realNodePaths(layout.dir);
  const processes = new Map<string, Started>();
  const launch = (name: string, command: string, args: string[], log = `${paths.logs}/${name}.log`) => {
    const [cmd, argv] = inNetns(plan.netns, command, args);
    const p = startProcess(cmd, argv, log, true);
    processes.set(name, p);
    return p;
  };
  const ctr = (args: string[]) => nodeCtr(ctx, paths, args);
  let kubeProxy: SupervisedProcess | undefined;
  const node: ClusterNode = {
    plan,
    dir: layout.dir,
    cgroupRoot: layout.cgroupRoot!.slice(1),
    runcRoot: `${paths.runcRoot}/k8s.io`,
    processes,
    get kubeProxy() {
      if (!kubeProxy) throw new Error(`kube-proxy of ${plan.name} was not started`);
      return kubeProxy;
    },
    kubeletNodeIps: layout.kubeletNodeIps!,
    startKubelet: () =>
      void (ctx.brokenKubelets?.includes(plan.name)
        ? launch("kubelet", "false", [])
        : launch("kubelet", `${ctx.nodeBinaries}/kubelet`, kubeletArgs(layout))),
    startKubeProxy: () => {
      kubeProxy = supervise(
        `kube-proxy of ${plan.name}`,
        (log) =>
          launch("kube-proxy", `${ctx.nodeBinaries}/kube-proxy`, [`--config=${paths.proxyConfig}`, "--v=2"], log),
        { logDir: paths.logs, logName: "kube-proxy", restartDelayMs: ctx.kubeProxyRestartDelayMs },
      );
    },
    stopKubelet: async () => {
      const kubelet = processes.get("kubelet");
      if (kubelet) await stopProcess(kubelet, 15_000);
    },
    importImages: async (tars) => {
      for (const tar of tars) {
        const done = await ctr(["images", "import", "--snapshotter=overlayfs", tar]);
        if (!done.ok) throw new Error(`ctr could not import ${tar} into ${plan.name}: ${done.text.trim()}`);
      }
    },
    containerPid: async (containerId) => {
      const listed = await ctr(["tasks", "ls"]);
      const line = listed.text.split("\n").find((l) => l.startsWith(`${containerId} `));
      if (!listed.ok || !line) {
        throw new Error(`containerd of ${plan.name} runs no task ${containerId}:\n${listed.text}`);
      }
      return Number(line.trim().split(/\s+/)[1]);
    },
    logs: async (lines) => {
      const parts: string[] = [];
      for (const [name, p] of processes) {
        parts.push(`--- ${plan.name} ${name} (${p.log})\n${await logTail(p.log, lines)}`);
      }
      return parts.join("\n");
    },
    stop: () => stopClusterNode(node, ctx, paths, kubeProxy),
  };
  return { node, launch };
}

/** The node's certificates, kubeconfigs, CNI configuration and containerd configuration. */
async function writeNodeFiles(plan: NodePlan, ctx: NodeContext, layout: RealNodeLayout): Promise<void> {
  const paths = realNodePaths(layout.dir);
  for (const d of [paths.logs, paths.pki, paths.cniConf, paths.cniBin, paths.kubeletRoot, paths.podLogs]) {
    await Deno.mkdir(d, { recursive: true });
  }
  await Deno.mkdir(`${layout.dir}/containerd`, { recursive: true });
  const caDir = `${ctx.clusterDir}/pki`;
  await signWithClusterCa(caDir, `kubelet-${plan.name}`, { kind: "kubelet", node: plan.name });
  await Deno.copyFile(`${caDir}/ca.crt`, `${paths.pki}/ca.crt`);
  await Deno.copyFile(`${caDir}/kubelet-${plan.name}.crt`, `${paths.pki}/kubelet.crt`);
  await Deno.copyFile(`${caDir}/kubelet-${plan.name}.key`, `${paths.pki}/kubelet.key`);
  const caPem = await Deno.readTextFile(`${paths.pki}/ca.crt`);
  await Deno.writeTextFile(
    paths.adminKubeconfig,
    kubeconfigText(`https://${ctx.topology.hostIp}:${ctx.apiPort}`, caPem, ctx.token),
  );
  await Deno.writeTextFile(paths.kubeletKubeconfig, clientCertKubeconfig(layout, "kubelet"));
  for (const plugin of Deno.readDirSync(CNI_PLUGIN_DIR)) {
    await Deno.symlink(`${CNI_PLUGIN_DIR}/${plugin.name}`, `${paths.cniBin}/${plugin.name}`);
  }
  await Deno.writeTextFile(`${paths.cniConf}/10-ccm-pods.conflist`, bridgeConflist(plan, `${layout.dir}/cni/ipam`));
  await Deno.writeTextFile(paths.containerdConfig, containerdConfig(layout));
}

/**
 * Stops kube-proxy (no more restarts), the kubelet, every container and containerd; removes the cgroup root. Each
 * step runs whatever the others did (a node whose start failed before kube-proxy, or before containerd); throws at the
 * end naming the steps that failed.
 */
async function stopClusterNode(
  node: ClusterNode,
  ctx: NodeContext,
  paths: ReturnType<typeof realNodePaths>,
  kubeProxy: SupervisedProcess | undefined,
): Promise<void> {
  const ctr = (args: string[]) => nodeCtr(ctx, paths, args);
  const failed = await runTeardownSteps([
    ["stop kube-proxy", () => kubeProxy?.stop(15_000)],
    ["stop the kubelet", () => node.stopKubelet()],
    ["stop the containers and containerd", async () => {
      const containerd = node.processes.get("containerd");
      if (!containerd || containerd.exited) return;
      const tasks = (await ctr(["tasks", "ls", "-q"])).text.split("\n").map((l) => l.trim()).filter((l) =>
        /^[0-9a-f]{64}$/.test(l)
      );
      for (const id of tasks) await ctr(["tasks", "kill", "-s", "KILL", id]);
      for (const id of tasks) await ctr(["tasks", "delete", "-f", id]);
      await stopProcess(containerd, 15_000);
    }],
    ["remove what runc still runs", async () => {
      const listed = await output(ctx.runc, ["--root", node.runcRoot, "list", "-q"]);
      for (const id of listed.ok ? listed.text.split("\n").filter(Boolean) : []) {
        await output(ctx.runc, ["--root", node.runcRoot, "delete", "-f", id]);
      }
    }],
    ["kill the shims", () => killShims(paths.containerdState)],
    ["remove the cgroup root", () => removeCgroupRoot(node.cgroupRoot)],
  ]);
  if (failed.length > 0) throw new Error(`${node.plan.name}: ${failed.join("; ")}`);
}
