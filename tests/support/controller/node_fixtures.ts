/**
 * Nodes for the node controllers' integration tests (tests/integration/node_*_test.ts), written to the test control
 * plane as a kubelet would write them, and the waits on the simulator's server lists those tests need.
 *
 * @module
 */
import type { V1Node } from "@kubernetes/client-node";
import { testControlPlane } from "../control_plane/control_plane.ts";
import { eventsFor as eventsForObject, kubeletNode, kubeOk, kubeRequest } from "../http/kube_http.ts";
import { eventually } from "../wait/eventually.ts";
import { moreReads } from "../cloud/cloud_passes.ts";
import type { Simulator } from "../../../simulator/simulator.ts";

/** The taint kubelets with `--cloud-provider=external` register with, removed once the node is initialised. */
export const UNINITIALIZED = "node.cloudprovider.kubernetes.io/uninitialized";
/** The taint the lifecycle controller puts on a NotReady node whose server is shut down. */
export const SHUTDOWN = "node.cloudprovider.kubernetes.io/shutdown";

/** Reads node `name` (fails the test when it is missing). */
export function getNode(name: string): Promise<V1Node> {
  return kubeOk<V1Node>(testControlPlane(), "GET", `/api/v1/nodes/${name}`);
}

/** True while node `name` exists. */
export async function nodeExists(name: string): Promise<boolean> {
  return (await kubeRequest(testControlPlane(), "GET", `/api/v1/nodes/${name}`)).status === 200;
}

/** The events recorded about node `name`. */
export function eventsFor(name: string) {
  return eventsForObject(testControlPlane(), name);
}

/**
 * Resolves once two more server lists have reached the simulator: the node and lifecycle passes that follow the
 * first of them have run (the second starts a period after the first ends).
 */
export function passesAfterNextList(sim: Simulator): Promise<void> {
  return moreReads(sim, { operation: "list_servers" }, { count: 2 });
}

/**
 * Resolves once the server lists the simulator answered with `status` (0: hung) since `fromSeq` span two of the
 * view's confirmation intervals (1 s here): lists that would have proven a server gone, had they succeeded without
 * it, and one more after them.
 */
export function failedListsSpanning(sim: Simulator, status: number, fromSeq: number): Promise<void> {
  return eventually(
    () => {
      const at = sim.log.filter((e) => e.seq > fromSeq && e.operation === "list_servers" && e.status === status)
        .map((e) => e.atMs);
      return at.length >= 2 && at[at.length - 1] - at[0] >= 2_000;
    },
    20_000,
    `server lists answered ${status} over 2 s`,
  );
}

/** True when `node` carries a taint with `key`. */
export function tainted(node: V1Node, key: string): boolean {
  return (node.spec?.taints ?? []).some((t) => t.key === key);
}

/** Creates node `name` as a kubelet registers it (see `kubeletNode` for the options). */
export async function createNode(name: string, options: Parameters<typeof kubeletNode>[1] = {}): Promise<void> {
  await kubeOk(testControlPlane(), "POST", "/api/v1/nodes", { body: kubeletNode(name, options) });
}

/** Sets node `name`'s Ready condition (heartbeat and transition now), as its kubelet or the node lifecycle would. */
export async function setReady(name: string, ready: boolean): Promise<void> {
  const now = new Date().toISOString();
  await kubeOk(testControlPlane(), "PATCH", `/api/v1/nodes/${name}/status`, {
    patch: "strategic",
    body: {
      status: {
        conditions: [{
          type: "Ready",
          status: ready ? "True" : "False",
          reason: ready ? "KubeletReady" : "NodeStatusUnknown",
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        }],
      },
    },
  });
}

/** Deletes node `name`; a missing node is not an error. */
export async function deleteNode(name: string): Promise<void> {
  await kubeRequest(testControlPlane(), "DELETE", `/api/v1/nodes/${name}`);
}
