/**
 * What a node should look like once linked to its server: providerID, instance-type/zone/region labels (with their
 * beta twins), addresses; and the taints the node controllers manage. Pure functions over slim nodes.
 *
 * @module
 */
import type { NodeAddress, SlimNode, Taint } from "../kube/slim.ts";

/** The taint a kubelet with `--cloud-provider=external` registers its node with. */
export const UNINITIALIZED_TAINT = "node.cloudprovider.kubernetes.io/uninitialized";
/** The taint on nodes whose server is shut down. */
export const SHUTDOWN_TAINT = "node.cloudprovider.kubernetes.io/shutdown";

/** What the cloud says about a node's server. */
export interface InstanceMetadata {
  /** `ankracloud://<zone>/<server-id>`. */
  providerID: string;
  /** Server plan. */
  instanceType: string;
  /** Server zone. */
  zone: string;
  /** Region of the zone, when known. */
  region?: string;
  /** Addresses, IPv6 first. */
  addresses: NodeAddress[];
}

/** GA label → beta twin. */
export const TOPOLOGY_LABELS = {
  instanceType: ["node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"],
  zone: ["topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"],
  region: ["topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region"],
} as const;

/** The labels the metadata asks for (empty values are not written). */
export function topologyLabels(metadata: InstanceMetadata): Record<string, string> {
  const labels: Record<string, string> = {};
  const set = (keys: readonly string[], value: string | undefined) => {
    if (value) { for (const key of keys) labels[key] = value; }
  };
  set(TOPOLOGY_LABELS.instanceType, metadata.instanceType);
  set(TOPOLOGY_LABELS.zone, metadata.zone);
  set(TOPOLOGY_LABELS.region, metadata.region);
  return labels;
}

/** The topology labels whose value on the node differs from the metadata's (other labels are never touched). */
export function labelChanges(node: SlimNode, metadata: InstanceMetadata): Record<string, string> {
  const changes: Record<string, string> = {};
  for (const [key, value] of Object.entries(topologyLabels(metadata))) {
    if (node.labels[key] !== value) changes[key] = value;
  }
  return changes;
}

/** True when the node still waits for the cloud controller. */
export function isUninitialized(node: SlimNode): boolean {
  return node.taints.some((t) => t.key === UNINITIALIZED_TAINT);
}

/** True when the node carries the shutdown taint. */
export function hasShutdownTaint(node: SlimNode): boolean {
  return node.taints.some((t) => t.key === SHUTDOWN_TAINT);
}

/** The shutdown taint as the framework adds it. */
export function shutdownTaint(now: Date): Taint {
  return { key: SHUTDOWN_TAINT, effect: "NoSchedule", timeAdded: now.toISOString().replace(/\.\d+Z$/, "Z") };
}

/** Hostnames to look a node up by: its name, then the first DNS label of an FQDN name. */
export function hostnameCandidates(nodeName: string): string[] {
  const dot = nodeName.indexOf(".");
  if (dot > 0) return [nodeName, nodeName.slice(0, dot)];
  return [nodeName];
}
