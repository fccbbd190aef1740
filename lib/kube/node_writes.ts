/**
 * Writes to Nodes the way the framework's helpers do them, with optimistic concurrency: read the Node, compute a
 * change, send it as a merge patch carrying the resourceVersion, and on a conflict read again and retry (5 tries).
 * Addresses go through the status subresource as a strategic merge patch with `$patch: replace`, so the list is
 * replaced, never merged by type.
 *
 * @module
 */
import type { V1Node } from "@kubernetes/client-node";
import type { KubeClient } from "./client.ts";
import { type ObjectChange, updateObject } from "./object_writes.ts";
import type { NodeAddress } from "./slim.ts";

/** A change computed from the current Node: a merge patch body without metadata.resourceVersion, or nothing. */
export type NodeChange = ObjectChange<V1Node>;

/**
 * Applies `change` to the current Node with a resourceVersion precondition, retrying on conflict. Returns false when
 * there was nothing to change or the Node is gone.
 */
export function updateNode(kube: KubeClient, name: string, change: NodeChange): Promise<boolean> {
  return updateObject<V1Node>(kube, `/api/v1/nodes/${encodeURIComponent(name)}`, change);
}

/** Replaces the Node's `status.addresses` through the status subresource. */
export async function replaceNodeAddresses(kube: KubeClient, name: string, addresses: NodeAddress[]): Promise<void> {
  await kube.request("PATCH", `/api/v1/nodes/${encodeURIComponent(name)}/status`, {
    patch: "strategic",
    body: { status: { addresses: [{ $patch: "replace" }, ...addresses] } },
  });
}
