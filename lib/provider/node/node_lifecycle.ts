/**
 * What the cloud-node-lifecycle controller does with a node on one pass ({@linkcode lifecycleAction}), from the node
 * and what the shared server view knows: Ready nodes lose a shutdown taint they had; a NotReady node whose server is
 * shut down gets it; one whose server is gone with proof is deleted; one whose server the view never listed is asked
 * about first. Nodes of another provider, unlinked nodes, unmanaged nodes and anything while the view is not synced
 * are left alone (nothing proves their server is gone). Pure.
 *
 * @module
 */
import type { SlimNode } from "../../kube/slim.ts";
import { hasShutdownTaint } from "./node_plan.ts";
import { isUnmanagedNode } from "../node_management.ts";
import { parseProviderId } from "../provider_id.ts";
import { serverPresence } from "./server_state.ts";

/** What the lifecycle decision reads of the shared server view. */
interface ServerPresenceFacts {
  /** True after the view's first complete list. */
  readonly synced: boolean;
  /** The server with `id` as last listed, if listed. */
  server(id: string): { state: string } | undefined;
  /** True when the server is proven gone (absent from two complete lists some time apart, or a 404). */
  isGone(id: string): boolean;
}

/** The decision for one node on one pass. */
type LifecycleAction = "none" | "remove-shutdown-taint" | "add-shutdown-taint" | "delete" | "check-unknown";

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

/** A question upstream's lifecycle controller asks the cloud about a NotReady node, with its answer. */
export interface CloudProviderCall {
  /** `instance_exists`, then `instance_shutdown` for a server that exists. */
  operation: "instance_exists" | "instance_shutdown";
  /** `success`, `instance_not_found` (the server is gone) or `error` (nothing proves either). */
  result: "success" | "instance_not_found" | "error";
}

/**
 * The questions a pass answered for `node`, as upstream counts them in
 * `cloud_node_lifecycle_controller_cloud_provider_calls_total`: none for a node the pass does not ask about (Ready,
 * unmanaged, unlinked, being deleted, or before the view's first list) or whose server the view has not listed yet
 * (`check-unknown`: asked once the look-up is back); `instance_exists` → `instance_not_found` for a server gone;
 * `instance_exists` and `instance_shutdown` → `success` for one that exists. Here they are answered from the shared
 * server list, not by a request each.
 */
export function answeredCalls(node: SlimNode, view: ServerPresenceFacts): CloudProviderCall[] {
  if (isUnmanagedNode(node) || node.ready === "True" || node.deletionTimestamp || !view.synced) return [];
  const id = parseProviderId(node.providerID ?? "")?.serverId;
  if (!id) return [];
  const server = view.server(id);
  const gone = server ? !serverPresence(server.state).exists : view.isGone(id);
  if (gone) return [{ operation: "instance_exists", result: "instance_not_found" }];
  if (!server) return [];
  return [{ operation: "instance_exists", result: "success" }, { operation: "instance_shutdown", result: "success" }];
}
