/**
 * A real Kubernetes control plane for tests: etcd and kube-apiserver started on free loopback ports with generated
 * certificates, an admin identity (bearer token and client certificate, group `system:masters`), RBAC authorization
 * and service-account token signing. Stopped by {@linkcode ControlPlane.stop}, by the test process's signal
 * handlers, and — when the test process dies without cleaning up — by a watchdog process that kills the servers
 * once their parent is gone.
 *
 * @module
 */

import { untilAlive } from "../wait/until_alive.ts";
import { kubeconfigText, makeControlPlaneCertificates, randomToken } from "./control_plane_credentials.ts";
import {
  type ControlPlaneBinaries,
  findBinaries,
  freePort,
  type Started,
  startProcess,
  startWatchdog,
  stopProcess,
} from "./control_plane_processes.ts";
import type { SharedControlPlane } from "./shared_control_plane.ts";

// The control plane's parts, exported from here too: the harness, scripts and tests import them from this module.
export { kubeconfigText } from "./control_plane_credentials.ts";
export {
  type ControlPlaneBinaries,
  findBinaries,
  freePort,
  isExecutable,
  type Started,
  startProcess,
  stopProcess,
} from "./control_plane_processes.ts";
export {
  CONTROL_PLANE_ENV,
  controlPlaneEnv,
  type SharedControlPlane,
  testControlPlane,
  uniqueName,
} from "./shared_control_plane.ts";

/** A running control plane: what a test run shares of it, and what only its starter holds. */
export interface ControlPlane extends SharedControlPlane {
  /** PEM client certificate and key of the admin identity (for mTLS tests). */
  adminCert: { cert: string; key: string };
  /** PEM of the CA and key, for tests that mint their own client certificates. */
  caKeyFile: string;
  /** An HTTP client that trusts the CA. */
  httpClient: Deno.HttpClient;
  /** Time from start to a ready apiserver, milliseconds. */
  startupMs: number;
  /** Stops kube-apiserver, then etcd, and removes the directory. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 90_000;

/** True when the host has a default route; kube-apiserver needs one to pick its advertise address. */
async function hasDefaultRoute(): Promise<boolean> {
  try {
    const text = await Deno.readTextFile("/proc/net/route");
    return text.split("\n").slice(1).some((line) => line.split(/\s+/)[1] === "00000000");
  } catch {
    return true;
  }
}

/**
 * Starts etcd and kube-apiserver and waits until `/readyz` answers 200 for the admin. On failure everything started
 * is stopped, the directory (with `etcd.log` and `kube-apiserver.log`) is kept and named in the error.
 */
export async function startControlPlane(
  options: {
    binaries?: ControlPlaneBinaries;
    /**
     * Run the servers in their own process group, so a Ctrl-C in the terminal reaches only the caller, which then
     * stops them in order (the demo).
     */
    ownProcessGroup?: boolean;
  } = {},
): Promise<ControlPlane> {
  const binaries = options.binaries ?? findBinaries();
  const started = performance.now();
  const dir = await Deno.makeTempDir({ prefix: "ccm-control-plane-" });
  const processes: Started[] = [];
  let watchdog: Deno.ChildProcess | undefined;
  let httpClient: Deno.HttpClient | undefined;
  const stopAll = async () => {
    for (const p of [...processes].reverse()) await stopProcess(p, 15_000);
    try {
      watchdog?.kill("SIGKILL");
    } catch { /* gone */ }
  };
  try {
    await makeControlPlaneCertificates(dir, {
      ca: "test-control-plane-ca",
      admin: "test-admin",
      ips: ["127.0.0.1", "10.96.0.1"],
    });
    const token = randomToken();
    await Deno.writeTextFile(`${dir}/tokens.csv`, `${token},test-admin,test-admin-uid,"system:masters"\n`);
    const etcdPort = freePort();
    const apiPort = freePort();
    const etcd = await startEtcd(binaries.etcd, { dir, port: etcdPort, ownProcessGroup: options.ownProcessGroup });
    processes.push(etcd);

    const args = apiserverArgs(dir, { etcdPort, apiPort });
    if (!(await hasDefaultRoute())) args.push("--advertise-address=198.51.100.10");
    const apiserver = startProcess(binaries.kubeApiserver, args, `${dir}/kube-apiserver.log`, options.ownProcessGroup);
    processes.push(apiserver);
    watchdog = startWatchdog(Deno.pid, processes.map((p) => p.child.pid));

    const caCert = await Deno.readTextFile(`${dir}/ca.crt`);
    httpClient = Deno.createHttpClient({ caCerts: [caCert] });
    const url = `https://127.0.0.1:${apiPort}`;
    const client = httpClient;
    await untilAlive("kube-apiserver", READY_TIMEOUT_MS, async () => {
      const response = await fetch(`${url}/readyz`, { headers: { authorization: `Bearer ${token}` }, client });
      await response.body?.cancel();
      return response.status === 200;
    }, [etcd, apiserver]);
    const kubeconfigPath = `${dir}/kubeconfig`;
    await Deno.writeTextFile(kubeconfigPath, kubeconfigText(url, caCert, token));
    let stopped = false;
    return {
      url,
      token,
      caCert,
      caFile: `${dir}/ca.crt`,
      caKeyFile: `${dir}/ca.key`,
      adminCert: {
        cert: await Deno.readTextFile(`${dir}/admin.crt`),
        key: await Deno.readTextFile(`${dir}/admin.key`),
      },
      kubeconfigPath,
      dir,
      etcdUrl: `http://127.0.0.1:${etcdPort}`,
      httpClient: client,
      startupMs: Math.round(performance.now() - started),
      async stop() {
        if (stopped) return;
        stopped = true;
        await stopAll();
        client.close();
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      },
    };
  } catch (cause) {
    await stopAll();
    httpClient?.close();
    const message = cause instanceof Error ? cause.message : String(cause);
    throw new Error(
      `control plane did not start (${message}); logs kept in ${dir}/etcd.log and ${dir}/kube-apiserver.log`,
    );
  }
}

/** Starts etcd on loopback `port` with its data and log in `dir`; resolves once it is healthy. */
async function startEtcd(
  binary: string,
  options: { dir: string; port: number; ownProcessGroup?: boolean },
): Promise<Started> {
  const { dir, port } = options;
  const etcd = startProcess(
    binary,
    [
      `--data-dir=${dir}/etcd-data`,
      `--listen-client-urls=http://127.0.0.1:${port}`,
      `--advertise-client-urls=http://127.0.0.1:${port}`,
      "--listen-peer-urls=http://127.0.0.1:0",
      "--unsafe-no-fsync=true",
      "--log-level=warn",
    ],
    `${dir}/etcd.log`,
    options.ownProcessGroup,
  );
  try {
    await untilAlive("etcd", 30_000, async () => {
      const response = await fetch(`http://127.0.0.1:${port}/health`);
      const body = await response.text();
      return response.ok && body.includes('"true"');
    }, [etcd]);
  } catch (cause) {
    await stopProcess(etcd, 15_000);
    throw cause;
  }
  return etcd;
}

/** kube-apiserver's command line for the test control plane in `dir`. */
function apiserverArgs(dir: string, ports: { etcdPort: number; apiPort: number }): string[] {
  return [
    `--etcd-servers=http://127.0.0.1:${ports.etcdPort}`,
    "--bind-address=127.0.0.1",
    `--secure-port=${ports.apiPort}`,
    `--tls-cert-file=${dir}/apiserver.crt`,
    `--tls-private-key-file=${dir}/apiserver.key`,
    `--client-ca-file=${dir}/ca.crt`,
    `--token-auth-file=${dir}/tokens.csv`,
    "--authorization-mode=RBAC",
    // Dual-stack, so tests can create IPv4-only, IPv6-only and dual-stack Services.
    "--service-cluster-ip-range=10.96.0.0/16,fd00:10:96::/108",
    `--service-account-issuer=https://127.0.0.1:${ports.apiPort}`,
    `--service-account-key-file=${dir}/sa.pub`,
    `--service-account-signing-key-file=${dir}/sa.key`,
    "--disable-admission-plugins=ServiceAccount",
    "--profiling=false",
    // ConfigMaps have no watch cache here, so a test can reach etcd's compaction through a watch (410 Gone);
    // the controllers never read ConfigMaps.
    "--watch-cache-sizes=configmaps#0",
    `--cert-dir=${dir}/cert-dir`,
  ];
}
