/**
 * `externalTrafficPolicy: Local`: such a Service is served only by the nodes that hold a ready endpoint of it, so
 * traffic reaches a pod on the node it arrives at and the client address is kept. The Ankra API has no health-check
 * port, but members are explicit: the member candidates are narrowed to those nodes before the usual member rules
 * (eligibility, providerID, network, the member cap) apply.
 *
 * Never an empty backend because of this rule: when no candidate node holds a ready endpoint (none is ready at all,
 * or the ready ones run on nodes that cannot be members: excluded, being removed, not Ankra servers), or before the EndpointSlices are known, every node stays a
 * candidate, as for `Cluster`. Pure.
 *
 * @module
 */
import type { SlimNode, SlimService } from "../../kube/slim.ts";
import { classifyProviderId } from "../provider_id.ts";
import { eligibleNodes } from "./service_nodes.ts";

/** True when the Service asks for `externalTrafficPolicy: Local`. */
export function isLocalTraffic(service: Pick<SlimService, "externalTrafficPolicy">): boolean {
  return service.externalTrafficPolicy === "Local";
}

/**
 * The nodes that may serve `service`: all of `nodes` for `Cluster`; for `Local`, those in `readyNodes` (node names
 * holding a ready endpoint; undefined while unknown) — or all of `nodes` when that would leave no eligible node.
 */
export function trafficNodes(
  service: Pick<SlimService, "externalTrafficPolicy">,
  nodes: readonly SlimNode[],
  readyNodes: ReadonlySet<string> | undefined,
): readonly SlimNode[] {
  if (!isLocalTraffic(service) || !readyNodes) return nodes;
  const local = nodes.filter((node) => readyNodes.has(node.name));
  const servable = eligibleNodes(local).some((node) => classifyProviderId(node.providerID) === "ours");
  return servable ? local : nodes;
}
