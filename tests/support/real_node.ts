/**
 * A real single-node Kubernetes cluster with no CNI, for tests that need what only a real kubelet does: etcd and
 * kube-apiserver (the test binaries), kube-controller-manager, kube-scheduler, containerd with Debian's runc, a
 * kubelet started with `--cloud-provider=external` and an explicit node IP (as k3s starts its embedded one), and
 * kube-proxy, so pods reach the API server through the `kubernetes` Service. Images come from a local registry
 * (containerd pulls the pause image and every mirrored registry from it).
 *
 * The node IP is an RFC 1918 address added to `lo` (the simulator's networks are private). Everything else lives in
 * one temporary directory. {@linkcode RealNode.stop} stops every process by its PID, removes the netfilter rules,
 * mounts, cgroups and the address, and reports anything still left on the host. The node binaries come from
 * `scripts/node_binaries.sh` (built from the Go module proxy on first use).
 *
 *     await using node = await startRealNode();
 *     await node.kubectl(["get", "nodes"]);
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
import { helm, kubectl, type ToolResult } from "./helm.ts";
import { kubeRequest } from "./kube_http.ts";
import { startRegistry, type TestRegistry } from "./registry.ts";
import {
  apiserverArgs,
  clientCertKubeconfig,
  containerdConfig,
  controllerManagerArgs,
  etcdArgs,
  kubeletArgs,
  kubeletConfig,
  kubeProxyConfig,
  PAUSE_IMAGE_TAG,
  type RealNodeLayout,
  realNodePaths,
  type RealNodeTimings,
  registryHosts,
  schedulerArgs,
} from "./real_node_files.ts";
import { makeRealNodeCertificates } from "./real_node_pki.ts";
import { untilAlive } from "./until_alive.ts";
import {
  addLoAddress,
  cleanHost,
  containerCgroup,
  crashCleanupScript,
  describeLeftovers,
  killShims,
  locateNodeBinaries,
  processesWithArgument,
  processesWorkingUnder,
  readHostState,
  which,
} from "./real_node_host.ts";

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
  /** Admin access in the shape the test helpers take (kube_http.ts). */
  plane: SharedControlPlane;
  /** The local registry containerd pulls from. */
  registry: TestRegistry;
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
const COMPONENTS = [
  "kubelet",
  "containerd",
  "kube-controller-manager",
  "kube-scheduler",
  "kube-proxy",
  "kube-apiserver",
];
const decoder = new TextDecoder();

async function run(command: string, args: string[], options: { env?: Record<string, string> } = {}): Promise<string> {
  const out = await new Deno.Command(command, { args, env: options.env, stdout: "piped", stderr: "piped" }).output();
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

async function tailOf(file: string, lines: number): Promise<string> {
  try {
    return (await Deno.readTextFile(file)).trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/**
 * Starts the cluster and waits until the Node is registered and kube-proxy has synced.
 *
 * @throws when a component does not start, with the end of the logs that explain it (after stopping what started).
 */
export async function startRealNode(options: RealNodeOptions = {}): Promise<RealNode> {
  const testBinaries = findBinaries();
  const nodeBinaries = await locateNodeBinaries();
  const runc = which("runc");
  if (!runc) throw new Error("runc is not on PATH: install the Debian package runc");
  const dir = await Deno.makeTempDir({ prefix: "ccm-real-node-" });
  const paths = realNodePaths(dir);
  const timings = options.timings ?? DEFAULT_TIMINGS;
  const nodeIp = options.nodeIp ?? "10.99.0.2";
  const kubeProxyBinary = `${nodeBinaries}/kube-proxy`;
  await cleanHost({ dir, nodeIp, kubeProxy: kubeProxyBinary }); // what a crashed earlier run may have left
  const registry = await startRegistry();
  const layout: RealNodeLayout = {
    dir,
    nodeName: options.nodeName ?? "ccm-real-node",
    nodeIp,
    apiPort: freePort(),
    etcdPort: freePort(),
    kubeletPort: freePort(),
    kubeletHealthzPort: freePort(),
    controllerManagerPort: freePort(),
    schedulerPort: freePort(),
    proxyHealthzPort: freePort(),
    proxyMetricsPort: freePort(),
    registry: registry.url,
    mirroredRegistries: options.mirroredRegistries ?? [],
    runc,
  };
  const processes = new Map<string, Started>();
  let watchdog: Deno.ChildProcess | undefined;
  const httpClient = { current: undefined as Deno.HttpClient | undefined };
  const logs = async (lines = 40) => {
    const parts: string[] = [];
    for (const name of COMPONENTS) {
      parts.push(`--- ${name} (${paths.logs}/${name}.log)\n${await tailOf(`${paths.logs}/${name}.log`, lines)}`);
    }
    return parts.join("\n");
  };
  const start = (name: string, command: string, args: string[]) => {
    const started = startProcess(command, args, `${paths.logs}/${name}.log`, true);
    processes.set(name, started);
    return started;
  };

  let stopped: Promise<string[]> | undefined;
  const stop = () => stopped ??= teardown();
  const teardown = async (): Promise<string[]> => {
    const apiserver = processes.get("kube-apiserver");
    const kubelet = processes.get("kubelet");
    if (apiserver && !apiserver.exited && kubelet && !kubelet.exited) {
      // The kubelet tears the pods down (containers, sandboxes, volume mounts) while it still runs.
      await node.kubectl(["delete", "deployments,daemonsets,pods", "--all", "-A", "--wait=false"]).catch(() => {});
      await eventually(async () => {
        const pods = await node.kubectl(["get", "pods", "-A", "-o", "name"]).catch(() => undefined);
        return !pods || pods.stdout.trim() === "";
      }, { timeoutMs: 60_000, intervalMs: 500, what: "every pod deleted" }).catch(() => {
        // Best effort: the teardown goes on, and the leftover check below reports what the kubelet left.
      });
    }
    const stopNamed = async (name: string, graceMs = 15_000) => {
      const p = processes.get(name);
      if (p) await stopProcess(p, graceMs);
    };
    await stopNamed("kube-proxy");
    await run(kubeProxyBinary, ["--cleanup"]).catch(() => {});
    await stopNamed("kubelet");
    const ctr = [`${nodeBinaries}/ctr`, "--address", paths.containerdSocket, "-n", "k8s.io"];
    const containerd = processes.get("containerd");
    if (containerd && !containerd.exited) {
      const tasks = (await run(ctr[0], [...ctr.slice(1), "tasks", "ls", "-q"]).catch(() => "")).split("\n").filter(
        Boolean,
      );
      for (const id of tasks) await run(ctr[0], [...ctr.slice(1), "tasks", "kill", "-s", "KILL", id]).catch(() => {});
      for (const id of tasks) {
        await run(ctr[0], [...ctr.slice(1), "tasks", "delete", "-f", id]).catch(() => {});
      }
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
      watchdog?.kill("SIGKILL");
    } catch { /* gone */ }
    httpClient.current?.close();
    await registry.stop();
    await cleanHost({ dir, nodeIp });
    const left = describeLeftovers(await readHostState(dir, nodeIp));
    const running = [...processes.entries()].filter(([, p]) => !p.exited).map(([name]) => `process ${name}`)
      .concat(processesWorkingUnder(dir).map((pid) => `process ${pid} working in ${dir}`));
    if (left.length === 0 && running.length === 0) await Deno.remove(dir, { recursive: true }).catch(() => {});
    else console.error(`real node: left behind (logs kept in ${dir}):\n  ${[...running, ...left].join("\n  ")}`);
    return [...running, ...left];
  };

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
  const kubeconfigEnv = { KUBECONFIG: paths.adminKubeconfig };
  const node: RealNode = {
    nodeName: layout.nodeName,
    nodeIp,
    dir,
    plane,
    registry,
    kubectl: (args) => kubectl([...args, `--kubeconfig=${paths.adminKubeconfig}`], { noKubeconfigFlag: true }),
    helm: (args, env) => helm(args, { noKubeconfigFlag: true, env: { ...env, ...kubeconfigEnv } }),
    containerPid: async (containerId) => {
      const listed = await run(`${nodeBinaries}/ctr`, [
        "--address",
        paths.containerdSocket,
        "-n",
        "k8s.io",
        "tasks",
        "ls",
      ]);
      const line = listed.split("\n").find((l) => l.startsWith(`${containerId} `));
      if (!line) throw new Error(`containerd runs no task ${containerId}:\n${listed}`);
      return Number(line.trim().split(/\s+/)[1]);
    },
    containerCgroup,
    logs,
    stop,
    [Symbol.asyncDispose]: async () => {
      await stop();
    },
  };

  try {
    await Deno.mkdir(paths.logs, { recursive: true });
    await addLoAddress(nodeIp);
    await makeRealNodeCertificates(paths.pki, { name: layout.nodeName, ip: nodeIp });
    plane.caCert = await Deno.readTextFile(plane.caFile);
    await Deno.writeTextFile(paths.tokens, `${token},real-node-admin,real-node-admin,"system:masters"\n`);
    await Deno.writeTextFile(paths.adminKubeconfig, kubeconfigText(apiUrl, plane.caCert, token));
    await Deno.writeTextFile(paths.kubeletKubeconfig, clientCertKubeconfig(layout, "kubelet"));
    await run("skopeo", [
      "copy",
      "--quiet",
      "--dest-tls-verify=false",
      `oci:${nodeBinaries}/pause-image:${PAUSE_IMAGE_TAG}`,
      `docker://${registry.url}/pause:${PAUSE_IMAGE_TAG}`,
    ]);

    const etcd = start("etcd", testBinaries.etcd, etcdArgs(layout));
    await untilAlive("etcd", 30_000, () => answers(`${plane.etcdUrl}/health`), [etcd]);
    const apiserver = start("kube-apiserver", testBinaries.kubeApiserver, apiserverArgs(layout, timings));
    httpClient.current = Deno.createHttpClient({ caCerts: [plane.caCert] });
    await untilAlive("kube-apiserver", 90_000, async () => {
      const response = await fetch(`${apiUrl}/readyz`, {
        headers: { authorization: `Bearer ${token}` },
        client: httpClient.current,
      });
      await response.body?.cancel();
      return response.ok;
    }, [etcd, apiserver]);
    const controllerManager = start(
      "kube-controller-manager",
      `${nodeBinaries}/kube-controller-manager`,
      controllerManagerArgs(layout, timings),
    );
    const scheduler = start("kube-scheduler", `${nodeBinaries}/kube-scheduler`, schedulerArgs(layout));

    await Deno.mkdir(`${dir}/containerd`, { recursive: true });
    for (const d of [paths.cniConf, paths.cniBin, paths.kubeletRoot, paths.podLogs]) {
      await Deno.mkdir(d, { recursive: true });
    }
    await Deno.writeTextFile(paths.containerdConfig, containerdConfig(layout));
    for (const [path, text] of Object.entries(registryHosts(layout))) {
      await Deno.mkdir(`${paths.containerdCerts}/${path.split("/")[0]}`, { recursive: true });
      await Deno.writeTextFile(`${paths.containerdCerts}/${path}`, text);
    }
    const containerdPath = `PATH=${nodeBinaries}:${Deno.env.get("PATH") ?? "/usr/sbin:/usr/bin:/sbin:/bin"}`;
    const containerd = start("containerd", "env", [
      containerdPath,
      `${nodeBinaries}/containerd`,
      "--config",
      paths.containerdConfig,
    ]);
    await untilAlive("containerd", 30_000, async () => {
      await run(`${nodeBinaries}/ctr`, ["--address", paths.containerdSocket, "version"]);
      return true;
    }, [containerd]);

    await Deno.writeTextFile(paths.kubeletConfig, kubeletConfig(layout));
    const kubelet = start("kubelet", `${nodeBinaries}/kubelet`, kubeletArgs(layout));
    await untilAlive(
      "kubelet /healthz",
      60_000,
      () => answers(`http://127.0.0.1:${layout.kubeletHealthzPort}/healthz`),
      [kubelet, containerd],
    );
    await untilAlive(`Node ${layout.nodeName}`, 60_000, async () => {
      return (await kubeRequest(plane, "GET", `/api/v1/nodes/${layout.nodeName}`)).status === 200;
    }, [kubelet]);

    await Deno.writeTextFile(paths.proxyConfig, kubeProxyConfig(layout));
    const proxy = start("kube-proxy", kubeProxyBinary, [`--config=${paths.proxyConfig}`, "--v=2"]);
    await untilAlive(
      "kube-proxy synced",
      60_000,
      () => answers(`http://127.0.0.1:${layout.proxyHealthzPort}/healthz`),
      [
        proxy,
      ],
    );
    // What a pod of the chart needs besides the node: the projected token's CA ConfigMap, the ServiceAccount
    // controller's default account (both from kube-controller-manager).
    await untilAlive("kube-root-ca.crt in kube-system", 60_000, async () => {
      return (await kubeRequest(plane, "GET", "/api/v1/namespaces/kube-system/configmaps/kube-root-ca.crt")).status ===
        200;
    }, [controllerManager, scheduler]);
    const script = crashCleanupScript({
      parent: Deno.pid,
      // The registry's process too (found by its configuration file: registry.ts does not expose it).
      pids: [...processes.values()].map((p) => p.child.pid).concat(processesWithArgument(`${registry.dir}/config.yml`)),
      dir,
      nodeIp,
      kubeProxy: kubeProxyBinary,
      runc,
      otherDirs: [registry.dir],
    });
    watchdog = new Deno.Command("sh", { args: ["-c", script], stdin: "null", stdout: "null", stderr: "null" }).spawn();
    watchdog.unref();
    return node;
  } catch (cause) {
    const text = await logs(30);
    await stop();
    throw new Error(`the real node did not start: ${cause instanceof Error ? cause.message : cause}\n${text}`);
  }
}
