/**
 * Nodes that are not Ankra servers in a hybrid cluster (on-premises machines, another provider's servers without a
 * providerID): labelled `node.ankra.cloud/managed=false`, such a node is never looked up in Ankra Cloud, never
 * initialised, tainted or deleted, never a load balancer member, and produces no event. Pure.
 *
 * @module
 */
import { MANAGED_LABEL } from "../ankra_names.ts";

/** True for a node labelled `node.ankra.cloud/managed=false` (the value in any letter case). */
export function isUnmanagedNode(node: { labels: Record<string, string> }): boolean {
  return node.labels[MANAGED_LABEL]?.toLowerCase() === "false";
}
