/**
 * What the cloud-node-lifecycle controller does with a node on one pass ({@linkcode lifecycleAction}), from the node
 * and what the shared server view knows: Ready nodes lose a shutdown taint they had; a NotReady node whose server is
 * shut down gets it; one whose server is gone with proof is deleted; one whose server the view never listed is asked
 * about first. Nodes of another provider, unlinked nodes, unmanaged nodes and anything while the view is not synced
 * are left alone (nothing proves their server is gone). Pure.
 *
 * @module
 */
import type { SlimNode } from "../kube/slim.ts";
import { hasShutdownTaint } from "./node_plan.ts";
import { isUnmanagedNode } from "./node_management.ts";
import { parseProviderId } from "./provider_id.ts";
import { serverPresence } from "./server_state.ts";

/** What the lifecycle decision reads of the shared server view. */
export interface ServerPresenceFacts {
  /** True after the view's first complete list. */
  readonly synced: boolean;
  /** The server with `id` as last listed, if listed. */
  server(id: string): { state: string } | undefined;
  /** True when the server is proven gone (absent from two complete lists some time apart, or a 404). */
  isGone(id: string): boolean;
}

/** The decision for one node on one pass. */
export type LifecycleAction = "none" | "remove-shutdown-taint" | "add-shutdown-taint" | "delete" | "check-unknown";

/** Decides what to do with a node (see the module documentation). */
export function lifecycleAction(node: SlimNode, view: ServerPresenceFacts): LifecycleAction {
  if (isUnmanagedNode(node)) return "none";
  if (node.ready === "True") return hasShutdownTaint(node) ? "remove-shutdown-taint" : "none";
  if (node.deletionTimestamp || !node.providerID) return "none";
  const id = parseProviderId(node.providerID)?.serverId;
  if (!id || !view.synced) return "none";
  const server = view.server(id);
  if (!server) return view.isGone(id) ? "delete" : "check-unknown";
  const presence = serverPresence(server.state);
  if (!presence.exists) return "delete";
  if (presence.shutdown && !hasShutdownTaint(node)) return "add-shutdown-taint";
  return "none";
}
