/**
 * Writes to Nodes the way the framework's helpers do them, with optimistic concurrency: read the Node, compute a
 * change, send it as a merge patch carrying the resourceVersion, and on a conflict read again and retry (5 tries).
 * Addresses go through the status subresource as a strategic merge patch with `$patch: replace`, so the list is
 * replaced, never merged by type.
 *
 * @module
 */
import type { V1Node } from "@kubernetes/client-node";
import { abortableSleep } from "../runtime/request_budget.ts";
import { isKubeError, type KubeClient } from "./client.ts";
import type { NodeAddress } from "./slim.ts";

/** A change computed from the current Node: a merge patch body without metadata.resourceVersion, or nothing. */
export type NodeChange = (node: V1Node) => Record<string, unknown> | undefined;

/**
 * Applies `change` to the current Node with a resourceVersion precondition, retrying on conflict. Returns false when
 * there was nothing to change or the Node is gone.
 */
export async function updateNode(kube: KubeClient, name: string, change: NodeChange): Promise<boolean> {
  for (let attempt = 1;; attempt++) {
    let node: V1Node;
    try {
      node = await kube.get<V1Node>(`/api/v1/nodes/${encodeURIComponent(name)}`);
    } catch (cause) {
      if (isKubeError(cause, "not_found")) return false;
      throw cause;
    }
    const patch = change(node);
    if (!patch) return false;
    const metadata = {
      ...(patch.metadata as Record<string, unknown> ?? {}),
      resourceVersion: node.metadata!.resourceVersion,
    };
    try {
      await kube.request("PATCH", `/api/v1/nodes/${encodeURIComponent(name)}`, {
        patch: "merge",
        body: { ...patch, metadata },
      });
      return true;
    } catch (cause) {
      if (isKubeError(cause, "conflict") && attempt < 5) {
        await abortableSleep(50 * attempt * (1 + Math.random()));
        continue;
      }
      if (isKubeError(cause, "not_found")) return false;
      throw cause;
    }
  }
}

/** Replaces the Node's `status.addresses` through the status subresource. */
export async function replaceNodeAddresses(kube: KubeClient, name: string, addresses: NodeAddress[]): Promise<void> {
  await kube.request("PATCH", `/api/v1/nodes/${encodeURIComponent(name)}/status`, {
    patch: "strategic",
    body: { status: { addresses: [{ $patch: "replace" }, ...addresses] } },
  });
}
