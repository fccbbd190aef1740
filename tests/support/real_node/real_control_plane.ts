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

/** The binaries the control plane runs: etcd and kube-apiserver from the test binaries, the rest from the node's. */
export interface ControlPlaneParts {
  /** etcd, kube-apiserver. */
  testBinaries: ControlPlaneBinaries;
  /** The directory holding kube-controller-manager and kube-scheduler. */
  nodeBinaries: string;
}

/** Starts kube-apiserver and waits until it is ready, failing at once when it (or a process of `alive`) exits. */
export async function startApiserver(
  state: RealControlPlaneState,
  parts: ControlPlaneParts,
  start: StartProcess,
  alive: Started[] = [],
): Promise<void> {
  const apiserver = start(
    "kube-apiserver",
    parts.testBinaries.kubeApiserver,
    apiserverArgs(state.layout, state.timings),
  );
  await apiserverReady(state, [...alive, apiserver]);
}

/** Starts kube-controller-manager (its node lifecycle timings are `state.timings`'). */
export function startControllerManager(
  state: RealControlPlaneState,
  parts: ControlPlaneParts,
  start: StartProcess,
): Started {
  return start(
    "kube-controller-manager",
    `${parts.nodeBinaries}/kube-controller-manager`,
    controllerManagerArgs(state.layout, state.timings),
  );
}

/**
 * etcd, kube-apiserver (ready), kube-controller-manager and kube-scheduler: etcd and kube-apiserver from the test
 * binaries, the other two from the node binaries' directory.
 */
export async function startRealControlPlane(
  state: RealControlPlaneState,
  binaries: ControlPlaneParts,
  start: StartProcess,
): Promise<void> {
  const { layout, plane } = state;
  const etcd = start("etcd", binaries.testBinaries.etcd, etcdArgs(layout));
  await untilAlive("etcd", 30_000, async () => {
    const response = await fetch(`${plane.etcdUrl}/health`);
    await response.body?.cancel();
    return response.ok;
  }, [etcd]);
  await startApiserver(state, binaries, start, [etcd]);
  startControllerManager(state, binaries, start);
  start("kube-scheduler", `${binaries.nodeBinaries}/kube-scheduler`, schedulerArgs(layout));
}
