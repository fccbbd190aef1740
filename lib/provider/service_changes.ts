/**
 * Change filters of the service controller, as named pure functions: which node changes can change a load balancer's
 * members (the others wake no Service), and which Service changes are a reason to read the real load balancer
 * instead of trusting the cached document (a change of the spec or of an owned annotation: the user changed
 * something, so the controller looks at what really exists before it acts).
 *
 * @module
 */
import type { SlimNode, SlimService } from "../kube/slim.ts";
import { AUTOSCALER_TAINT, EXCLUDE_LABEL } from "./service_plan.ts";

const ZONE_LABEL = "topology.kubernetes.io/zone";

/** True when a node change can change a load balancer's members (or what its Service is told). */
export function nodeChangeMatters(old: SlimNode, node: SlimNode): boolean {
  return old.providerID !== node.providerID || old.k3sNodeArgs !== node.k3sNodeArgs ||
    Boolean(old.deletionTimestamp) !== Boolean(node.deletionTimestamp) ||
    old.labels[EXCLUDE_LABEL] !== node.labels[EXCLUDE_LABEL] ||
    old.labels[ZONE_LABEL] !== node.labels[ZONE_LABEL] ||
    old.taints.some((t) => t.key === AUTOSCALER_TAINT) !== node.taints.some((t) => t.key === AUTOSCALER_TAINT) ||
    JSON.stringify(old.addresses) !== JSON.stringify(node.addresses);
}

/** The parts of a Service a user changes on purpose: its spec as the controller reads it, and its owned annotations. */
function intentParts(service: SlimService): unknown[] {
  const annotations = Object.entries(service.annotations).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return [
    annotations,
    service.type,
    service.loadBalancerClass,
    service.ports,
    service.ipFamilies,
    service.sessionAffinity,
    service.externalTrafficPolicy,
    service.loadBalancerSourceRanges,
    service.allocateLoadBalancerNodePorts,
  ];
}

/**
 * True when a Service change is a reason to read its real load balancer: its spec (ports, type, class, families,
 * policies) or one of this controller's annotations changed. A status or finalizer change is not (those are mostly
 * the controller's own writes).
 */
export function serviceChangeNeedsRead(old: SlimService, service: SlimService): boolean {
  return JSON.stringify(intentParts(old)) !== JSON.stringify(intentParts(service));
}
