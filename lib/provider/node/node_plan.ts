/**
 * What a node should look like once linked to its server, and what the cloud-node controller writes to get it there
 * ({@linkcode planNode}): providerID, instance-type/zone/region labels (with their beta twins), the server's labels
 * when `--node-labels-from-server` selects them (`server_labels.ts`), addresses, the `uninitialized` taint removed;
 * which node changes call for a pass ({@linkcode nodeChangeNeedsPass}); and the taints the node controllers manage.
 * Pure functions over slim nodes and what the cloud says.
 *
 * @module
 */
import { REGION_LABEL, ZONE_LABEL } from "../../ankra_names.ts";
import type { NodeAddress, SlimNode, Taint } from "../../kube/slim.ts";
import {
  applyProvidedNodeIp,
  type LegSource,
  sameAddresses,
  serverAddresses,
  withKubeletHostname,
} from "./node_addresses.ts";
import { keepKubeProxyNodeIps } from "./kube_proxy_node_ips.ts";
import { formatProviderId } from "../provider_id.ts";
import { hostnameCandidates, type ServerMatch } from "../server_match.ts";
import { planServerLabels, type ServerLabelSelector, type SkippedServerLabel } from "./server_labels.ts";

/** The taint a kubelet with `--cloud-provider=external` registers its node with. */
export const UNINITIALIZED_TAINT = "node.cloudprovider.kubernetes.io/uninitialized";
/** The taint on nodes whose server is shut down. */
export const SHUTDOWN_TAINT = "node.cloudprovider.kubernetes.io/shutdown";

/** What the cloud says about a node's server. */
interface InstanceMetadata {
  /** `ankracloud://<zone>/<server-id>`. */
  providerID: string;
  /** The server's `plan`, written to the `node.kubernetes.io/instance-type` label. */
  instanceType: string;
  /** The server's zone, written to the `topology.kubernetes.io/zone` label. */
  zone: string;
  /** Region of the zone, when known. */
  region?: string;
  /** Addresses, IPv6 first. */
  addresses: NodeAddress[];
}

/** GA label → beta twin. */
const TOPOLOGY_LABELS = {
  instanceType: ["node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"],
  zone: [ZONE_LABEL, "failure-domain.beta.kubernetes.io/zone"],
  region: [REGION_LABEL, "failure-domain.beta.kubernetes.io/region"],
} as const;

/** The labels the metadata asks for (empty values are not written). */
function topologyLabels(metadata: InstanceMetadata): Record<string, string> {
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

/** The server of a node as the cloud describes it: what {@linkcode planNode} reads. */
export interface NodeServerFacts {
  /** The server. */
  server: {
    id: string;
    zone: string;
    plan: string;
    hostname: string;
    public_ipv6?: string | null;
    public_ipv6_is_private?: boolean;
    public_ipv4?: string | null;
    /** Its Ankra labels (copied when `--node-labels-from-server` selects them). */
    labels?: Record<string, string>;
  };
  /** Its private legs. */
  interfaces: LegSource[];
  /** The region of its zone, when known. */
  region?: string;
}

/** The single update that initialises a node: providerID (unless it has one), labels, and the taint removed. */
interface NodeInitialisation {
  /** `ankracloud://<zone>/<server-id>`. */
  providerID: string;
  /** The labels to set (a value) or remove (`null`): topology labels and server labels. */
  labels: Record<string, string | null>;
  /** The taint to remove ({@linkcode UNINITIALIZED_TAINT}). */
  taintKey: string;
}

/**
 * What to do with a node, from the node and its server:
 * - `refused`: the node cannot be brought in step (the kubelet's `--node-ip` is not the server's): one Warning event;
 *   `waits` when the node is still uninitialised (it keeps its taint until the user acts);
 * - `update`: the writes, in order — `addresses` (replace the list; kube-proxy's node IPs kept where the server still
 *   has them, `kube_proxy_node_ips.ts`) when they differ, then `initialise` for a node
 *   that still carries the `uninitialized` taint, else `labels` (the topology labels that changed, and the server
 *   labels to set or remove, `null` removing one). Nothing set: the node is in step. `skippedLabels`: selected server
 *   labels that cannot be Kubernetes labels (each gets a Warning event), whatever else the plan holds.
 */
type NodePlan =
  | { kind: "refused"; reason: "NodeIPNotFound"; message: string; waits: boolean }
  | {
    kind: "update";
    addresses?: NodeAddress[];
    initialise?: NodeInitialisation;
    labels?: Record<string, string | null>;
    skippedLabels?: SkippedServerLabel[];
  };

/** What the node controller's flags add to a plan. */
interface NodePlanOptions {
  /** `--node-labels-from-server`: the server labels copied onto the node; undefined copies none (and removes none). */
  serverLabels?: ServerLabelSelector;
}

/** Plans one pass of the cloud-node controller over `node`, whose server is `facts` (see {@linkcode NodePlan}). */
export function planNode(node: SlimNode, facts: NodeServerFacts, options: NodePlanOptions = {}): NodePlan {
  const { server } = facts;
  const metadata: InstanceMetadata = {
    providerID: formatProviderId({ zone: server.zone, serverId: server.id }),
    instanceType: server.plan,
    zone: server.zone,
    region: facts.region,
    addresses: serverAddresses(server, facts.interfaces),
  };
  const initialising = isUninitialized(node);
  const addresses = withKubeletHostname(metadata.addresses, node.addresses);
  const provided = applyProvidedNodeIp(addresses, node.providedNodeIP);
  if (!provided.ok) {
    const message = `the kubelet's --node-ip (alpha.kubernetes.io/provided-node-ip ${node.providedNodeIP}) ` +
      `is not an address of server ${server.zone}/${server.id}: ${provided.missing.join(", ")} not among ` +
      `${addresses.filter((a) => a.type !== "Hostname").map((a) => a.address).join(", ")}` +
      (initialising ? "; the node stays tainted until --node-ip names one of them" : "");
    return { kind: "refused", reason: "NodeIPNotFound", message, waits: initialising };
  }
  const plan: NodePlan = { kind: "update" };
  const written = keepKubeProxyNodeIps(node.addresses, provided.addresses);
  if (!sameAddresses(node.addresses, written)) plan.addresses = written;
  const labels: Record<string, string | null> = labelChanges(node, metadata);
  if (options.serverLabels) {
    const copied = planServerLabels(node.labels, server.labels ?? {}, options.serverLabels);
    Object.assign(labels, copied.changes);
    if (copied.skipped.length > 0) plan.skippedLabels = copied.skipped;
  }
  if (initialising) plan.initialise = { providerID: metadata.providerID, labels, taintKey: UNINITIALIZED_TAINT };
  else if (Object.keys(labels).length > 0) plan.labels = labels;
  return plan;
}

/**
 * Why a node's server was not found, as the event it gets says it (reason, message): an unknown id from its
 * providerID, a hostname no server has, or one several have.
 */
export function serverNotFound(
  node: { name: string; providerID?: string },
  match: ServerMatch<{ id: string; hostname: string; zone: string }>,
): { reason: "InstanceNotFound" | "AmbiguousHostname"; message: string } {
  if (match.kind === "ambiguous") {
    return {
      reason: "AmbiguousHostname",
      message: `${match.servers.length} Ankra Cloud servers have hostname ${match.hostname} (${
        match.servers.map((s) => `${s.zone}/${s.id}`).join(", ")
      }); set the node's spec.providerID to ankracloud://<zone>/<server-id>`,
    };
  }
  if (match.kind === "missing" && match.serverId) {
    return {
      reason: "InstanceNotFound",
      message: `no Ankra Cloud server has id ${match.serverId} (from spec.providerID ${node.providerID}); ` +
        "check the providerID",
    };
  }
  return {
    reason: "InstanceNotFound",
    message: `no Ankra Cloud server has hostname ${hostnameCandidates(node.name).join(" or ")}; name the node ` +
      "after its server or set spec.providerID to ankracloud://<zone>/<server-id>",
  };
}

/**
 * True when a change of a node calls for a pass of the cloud-node controller: a new node, one still uninitialised,
 * or a change of its providerID, labels or addresses (a kubelet heartbeat is none of these).
 */
export function nodeChangeNeedsPass(
  change: { type: "added"; object: SlimNode } | { type: "updated"; object: SlimNode; old: SlimNode },
): boolean {
  const node = change.object;
  if (change.type === "added" || isUninitialized(node)) return true;
  const old = change.old;
  return old.providerID !== node.providerID || JSON.stringify(old.labels) !== JSON.stringify(node.labels) ||
    JSON.stringify(old.addresses) !== JSON.stringify(node.addresses);
}
