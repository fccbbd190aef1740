/**
 * The steps that start the real single-node cluster (tests/support/real_node/real_node.ts reads as their table of
 * contents), over one {@linkcode NodeState}: the host prepared (the node IP on `lo`, certificates, tokens, kubeconfigs,
 * the pause image in the local registry), the control plane, the container runtime and the kubelet until the Node is
 * registered, kube-proxy (supervised, restarted when it exits), and the watchdog that cleans up after a killed test
 * process.
 *
 * @module
 */
import { findBinaries, freePort, kubeconfigText, type Started, startProcess } from "../control_plane/control_plane.ts";
import { kubeRequest } from "../http/kube_http.ts";
import { startRegistry, type TestRegistry } from "../image/registry.ts";
import {
  clientCertKubeconfig,
  containerdConfig,
  kubeletArgs,
  kubeletConfig,
  kubeProxyConfig,
  PAUSE_IMAGE_TAG,
  type RealNodeLayout,
  realNodePaths,
  type RealNodeTimings,
  registryHosts,
} from "./real_node_files.ts";
import { makeRealNodeCertificates } from "./real_node_pki.ts";
import { adminPlane, type RealControlPlaneState, startRealControlPlane } from "./real_control_plane.ts";
import { untilAlive } from "../wait/until_alive.ts";
import { cleanEarlierRuns } from "./teardown_steps.ts";
import {
  addLoAddress,
  cleanHost,
  crashCleanupScript,
  locateNodeBinaries,
  processesWithArgument,
  which,
} from "./real_node_host.ts";
import { supervise, type SupervisedProcess } from "./supervised_process.ts";

/** What the steps share. */
export interface NodeState extends RealControlPlaneState {
  /** kube-apiserver and etcd. */
  testBinaries: ReturnType<typeof findBinaries>;
  /** kubelet, kube-proxy, the other node components, containerd, the pause image. */
  nodeBinaries: string;
  /** Debian's runc. */
  runc: string;
  /** The cluster's directory. */
  dir: string;
  /** Paths inside it. */
  paths: ReturnType<typeof realNodePaths>;
  /** The local registry containerd pulls from. */
  registry: TestRegistry;
  /** The processes by name (kube-proxy's current run among them). */
  processes: Map<string, Started>;
  /** kube-proxy under supervision (set by {@linkcode startKubeProxy}). */
  kubeProxy?: SupervisedProcess;
  /** The watchdog (set last). */
  watchdog?: Deno.ChildProcess;
}

/** The node's own settings. */
export interface NodeSettings {
  /** The Node's name. */
  nodeName: string;
  /** The node IP, added to `lo`. */
  nodeIp: string;
  /** Registry hosts containerd pulls from the local registry instead. */
  mirroredRegistries: string[];
  /** Node lifecycle timings. */
  timings: RealNodeTimings;
}

/**
 * Finds the binaries, removes what a crashed or aborted earlier run may have left (its processes and mounts, said on
 * stderr; its netfilter rules and the node IP on `lo`), starts the registry; the node's state.
 */
export async function newNodeState(settings: NodeSettings): Promise<NodeState> {
  const testBinaries = findBinaries();
  const nodeBinaries = await locateNodeBinaries();
  const runc = which("runc");
  if (!runc) throw new Error("runc is not on PATH: install the Debian package runc");
  await cleanEarlierRuns("ccm-real-node-");
  const dir = await Deno.makeTempDir({ prefix: "ccm-real-node-" });
  await cleanHost({ dir, nodeIp: settings.nodeIp, kubeProxy: `${nodeBinaries}/kube-proxy` });
  const registry = await startRegistry();
  const paths = realNodePaths(dir);
  const layout: RealNodeLayout = {
    dir,
    nodeName: settings.nodeName,
    nodeIp: settings.nodeIp,
    apiPort: freePort(),
    etcdPort: freePort(),
    kubeletPort: freePort(),
    kubeletHealthzPort: freePort(),
    controllerManagerPort: freePort(),
    schedulerPort: freePort(),
    proxyHealthzPort: freePort(),
    proxyMetricsPort: freePort(),
    registry: registry.url,
    mirroredRegistries: settings.mirroredRegistries,
    runc,
  };
  const plane = adminPlane(layout);
  return {
    testBinaries,
    nodeBinaries,
    runc,
    dir,
    paths,
    layout,
    timings: settings.timings,
    registry,
    plane,
    processes: new Map(),
  };
}

function startNodeProcess(state: NodeState, name: string, command: string, args: string[], log?: string): Started {
  const started = startProcess(command, args, log ?? `${state.paths.logs}/${name}.log`, true);
  state.processes.set(name, started);
  return started;
}

/** A command that must succeed; its standard output. */
export async function run(command: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).output();
  const decoder = new TextDecoder();
  if (!out.success) {
    throw new Error(`${command} ${args.join(" ")} failed (${out.code}): ${decoder.decode(out.stderr).trim()}`);
  }
  return decoder.decode(out.stdout);
}

async function answers(url: string, client?: Deno.HttpClient): Promise<boolean> {
  const response = await fetch(url, { client });
  await response.body?.cancel();
  return response.ok;
}

/** The node IP on `lo`, the certificates, the admin token and kubeconfigs, the pause image in the local registry. */
export async function prepareNodeHost(state: NodeState): Promise<void> {
  const { paths, layout, plane, nodeBinaries, registry } = state;
  await Deno.mkdir(paths.logs, { recursive: true });
  await addLoAddress(layout.nodeIp);
  await makeRealNodeCertificates(paths.pki, { name: layout.nodeName, ip: layout.nodeIp });
  plane.caCert = await Deno.readTextFile(plane.caFile);
  state.httpClient = Deno.createHttpClient({ caCerts: [plane.caCert] });
  await Deno.writeTextFile(paths.tokens, `${plane.token},real-node-admin,real-node-admin,"system:masters"\n`);
  await Deno.writeTextFile(paths.adminKubeconfig, kubeconfigText(plane.url, plane.caCert, plane.token));
  await Deno.writeTextFile(paths.kubeletKubeconfig, clientCertKubeconfig(layout, "kubelet"));
  await run("skopeo", [
    "copy",
    "--quiet",
    "--dest-tls-verify=false",
    `oci:${nodeBinaries}/pause-image:${PAUSE_IMAGE_TAG}`,
    `docker://${registry.url}/pause:${PAUSE_IMAGE_TAG}`,
  ]);
}

/** etcd, kube-apiserver (ready), kube-controller-manager and kube-scheduler. */
export function startNodeControlPlane(state: NodeState): Promise<void> {
  return startRealControlPlane(state, state, (name, command, args) => startNodeProcess(state, name, command, args));
}

/** containerd (mirroring the registries to the local one) and the kubelet, until the Node is registered. */
export async function startNodeRuntime(state: NodeState): Promise<void> {
  const { paths, layout, nodeBinaries, plane } = state;
  await Deno.mkdir(`${state.dir}/containerd`, { recursive: true });
  for (const d of [paths.cniConf, paths.cniBin, paths.kubeletRoot, paths.podLogs]) {
    await Deno.mkdir(d, { recursive: true });
  }
  await Deno.writeTextFile(paths.containerdConfig, containerdConfig(layout));
  for (const [path, text] of Object.entries(registryHosts(layout))) {
    await Deno.mkdir(`${paths.containerdCerts}/${path.split("/")[0]}`, { recursive: true });
    await Deno.writeTextFile(`${paths.containerdCerts}/${path}`, text);
  }
  const containerd = startNodeProcess(state, "containerd", "env", [
    `PATH=${nodeBinaries}:${Deno.env.get("PATH") ?? "/usr/sbin:/usr/bin:/sbin:/bin"}`,
    `${nodeBinaries}/containerd`,
    "--config",
    paths.containerdConfig,
  ]);
  await untilAlive("containerd", 30_000, async () => {
    await run(`${nodeBinaries}/ctr`, ["--address", paths.containerdSocket, "version"]);
    return true;
  }, [containerd]);
  await Deno.writeTextFile(paths.kubeletConfig, kubeletConfig(layout));
  const kubelet = startNodeProcess(state, "kubelet", `${nodeBinaries}/kubelet`, kubeletArgs(layout));
  const healthz = `http://127.0.0.1:${layout.kubeletHealthzPort}/healthz`;
  await untilAlive("kubelet /healthz", 60_000, () => answers(healthz), [kubelet, containerd]);
  await untilAlive(`Node ${layout.nodeName}`, 60_000, async () => {
    return (await kubeRequest(plane, "GET", `/api/v1/nodes/${layout.nodeName}`)).status === 200;
  }, [kubelet]);
}

/**
 * kube-proxy, supervised as a DaemonSet's container is (restarted 5 s after it exits, each exit kept), until it has
 * synced; then what a pod needs besides the node (the projected token's CA ConfigMap).
 */
export async function startKubeProxy(state: NodeState): Promise<void> {
  const { paths, layout, nodeBinaries, plane } = state;
  await Deno.writeTextFile(paths.proxyConfig, kubeProxyConfig(layout));
  const kubeProxy = supervise(
    "kube-proxy",
    (log) =>
      startNodeProcess(
        state,
        "kube-proxy",
        `${nodeBinaries}/kube-proxy`,
        [`--config=${paths.proxyConfig}`, "--v=2"],
        log,
      ),
    { logDir: paths.logs },
  );
  state.kubeProxy = kubeProxy;
  const healthz = `http://127.0.0.1:${layout.proxyHealthzPort}/healthz`;
  await untilAlive("kube-proxy synced", 60_000, () => answers(healthz), [kubeProxy.current()]);
  await untilAlive("kube-root-ca.crt in kube-system", 60_000, async () => {
    return (await kubeRequest(plane, "GET", "/api/v1/namespaces/kube-system/configmaps/kube-root-ca.crt")).status ===
      200;
  }, [state.processes.get("kube-controller-manager")!, state.processes.get("kube-scheduler")!]);
}

/** The watchdog that cleans the host when the test process dies without stopping the node (real_node_host.ts). */
export function startNodeWatchdog(state: NodeState): void {
  const script = crashCleanupScript({
    parent: Deno.pid,
    // The registry's process too (found by its configuration file: ../image/registry.ts does not expose it).
    pids: [...state.processes.values()].map((p) => p.child.pid)
      .concat(processesWithArgument(`${state.registry.dir}/config.yml`)),
    dir: state.dir,
    nodeIp: state.layout.nodeIp,
    kubeProxy: `${state.nodeBinaries}/kube-proxy`,
    runc: state.runc,
    otherDirs: [state.registry.dir],
  });
  state.watchdog = new Deno.Command("sh", { args: ["-c", script], stdin: "null", stdout: "null", stderr: "null" })
    .spawn();
  state.watchdog.unref();
}
