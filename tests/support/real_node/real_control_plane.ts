/**
 * The control plane of a real node or of the real two-node cluster, on the host — the one setup both build: its admin
 * access ({@linkcode adminPlane}: a random bearer token, the CA and kubeconfig in the directory's PKI), and its start
 * ({@linkcode startRealControlPlane}): etcd until healthy, kube-apiserver until `/readyz` answers the admin,
 * kube-controller-manager and kube-scheduler — each by the caller's process starter, which keeps its processes by name
 * and its logs where the caller keeps them. The configuration is `real_node_files.ts`'s.
 *
 * @module
 */
import type { ControlPlaneBinaries, SharedControlPlane, Started } from "../control_plane/control_plane.ts";
import { untilAlive } from "../wait/until_alive.ts";
import {
  apiserverArgs,
  controllerManagerArgs,
  etcdArgs,
  type RealNodeLayout,
  realNodePaths,
  type RealNodeTimings,
  schedulerArgs,
} from "./real_node_files.ts";

/** The admin's access to the control plane of `layout`; `caCert` stays empty until the caller has read the CA. */
export function adminPlane(layout: RealNodeLayout): SharedControlPlane {
  const paths = realNodePaths(layout.dir);
  return {
    url: `https://127.0.0.1:${layout.apiPort}`,
    token: crypto.randomUUID().replaceAll("-", ""),
    caCert: "",
    caFile: `${paths.pki}/ca.crt`,
    kubeconfigPath: paths.adminKubeconfig,
    dir: layout.dir,
    etcdUrl: `http://127.0.0.1:${layout.etcdPort}`,
  };
}

/** What the control plane's start reads of a real node's or cluster's state. */
export interface RealControlPlaneState {
  /** Addresses and ports. */
  layout: RealNodeLayout;
  /** Node lifecycle timings. */
  timings: RealNodeTimings;
  /** Admin access. */
  plane: SharedControlPlane;
  /** An HTTP client trusting the cluster's CA. */
  httpClient?: Deno.HttpClient;
}

/** Starts a named process of the control plane the way the caller keeps its processes. */
export type StartProcess = (name: string, command: string, args: string[]) => Started;

/** Waits until kube-apiserver is ready for the admin, failing at once when a process of `alive` exits. */
export function apiserverReady(state: RealControlPlaneState, alive: Started[]): Promise<void> {
  return untilAlive("kube-apiserver", 90_000, async () => {
    const response = await fetch(`${state.plane.url}/readyz`, {
      headers: { authorization: `Bearer ${state.plane.token}` },
      client: state.httpClient,
    });
    await response.body?.cancel();
    return response.ok;
  }, alive);
}

/**
 * etcd, kube-apiserver (ready), kube-controller-manager and kube-scheduler: etcd and kube-apiserver from the test
 * binaries, the other two from the node binaries' directory.
 */
export async function startRealControlPlane(
  state: RealControlPlaneState,
  binaries: { testBinaries: ControlPlaneBinaries; nodeBinaries: string },
  start: StartProcess,
): Promise<void> {
  const { layout, timings, plane } = state;
  const etcd = start("etcd", binaries.testBinaries.etcd, etcdArgs(layout));
  await untilAlive("etcd", 30_000, async () => {
    const response = await fetch(`${plane.etcdUrl}/health`);
    await response.body?.cancel();
    return response.ok;
  }, [etcd]);
  const apiserver = start("kube-apiserver", binaries.testBinaries.kubeApiserver, apiserverArgs(layout, timings));
  await apiserverReady(state, [etcd, apiserver]);
  start(
    "kube-controller-manager",
    `${binaries.nodeBinaries}/kube-controller-manager`,
    controllerManagerArgs(layout, timings),
  );
  start("kube-scheduler", `${binaries.nodeBinaries}/kube-scheduler`, schedulerArgs(layout));
}
