/**
 * Change filters of the service controller, as named pure functions: which node changes can change a load balancer's
 * members (the others wake no Service), and which Service changes are a reason to read the real load balancer
 * instead of trusting the cached document (a change of the spec or of an owned annotation: the user changed
 * something, so the controller looks at what really exists before it acts).
 *
 * @module
 */
import type { SlimNode, SlimService } from "../../kube/slim.ts";
import { AUTOSCALER_TAINT } from "./service_nodes.ts";
import { SHUTDOWN_TAINT, UNINITIALIZED_TAINT } from "../node/node_plan.ts";

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => b[key] === a[key]);
}

/**
 * True when a node change can change a load balancer's members (or what its Service is told): its providerID, its
 * labels (the exclusion and `node.ankra.cloud/managed` labels, the zone, any label a `node-selector` may name),
 * deletion, the autoscaler's, shutdown and uninitialized taints, its addresses, and its Ready status (which nodes
 * serve a node-address Service).
 */
export function nodeChangeMatters(old: SlimNode, node: SlimNode): boolean {
  return old.providerID !== node.providerID || old.k3sNodeArgs !== node.k3sNodeArgs ||
    Boolean(old.deletionTimestamp) !== Boolean(node.deletionTimestamp) ||
    !sameLabels(old.labels, node.labels) ||
    old.ready !== node.ready ||
    [AUTOSCALER_TAINT, SHUTDOWN_TAINT, UNINITIALIZED_TAINT].some((key) =>
      old.taints.some((t) => t.key === key) !== node.taints.some((t) => t.key === key)
    ) ||
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

/**
 * True when a Service change is a reason for a pass: anything but this controller's own Ready condition (its write
 * must not wake the Service again: a failed pass would be retried at once instead of after its backoff).
 */
export function serviceChangeMatters(old: SlimService, service: SlimService): boolean {
  const { readyCondition: _old, resourceVersion: _oldVersion, ...before } = old;
  const { readyCondition: _new, resourceVersion: _newVersion, ...after } = service;
  return JSON.stringify(before) !== JSON.stringify(after);
}
