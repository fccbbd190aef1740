/**
 * Slim copies of Nodes and Services: only the fields the controllers read. A kubelet-written Node carries ~40
 * image entries, managed fields and heartbeat times; none of that is kept, and two slim copies compare equal when
 * nothing the controllers care about changed (so a heartbeat does not wake any controller).
 *
 * @module
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import {
  ANNOTATION_PREFIX,
  EDGE_IN_USE_ANNOTATION,
  READY_CONDITION_TYPE,
  SHARE_IN_USE_ANNOTATION,
} from "../ankra_names.ts";
import { sharedString } from "../runtime/shared_string.ts";

/** Annotation a kubelet with `--node-ip` writes. */
const PROVIDED_NODE_IP_ANNOTATION = "alpha.kubernetes.io/provided-node-ip";
/** k3s's record of a node's arguments (tells whether ServiceLB runs). */
const K3S_NODE_ARGS_ANNOTATION = "k3s.io/node-args";

/** This controller's condition in a Service's `status.conditions`, as the store keeps it. */
export interface SlimCondition {
  /** Always {@linkcode READY_CONDITION_TYPE}. */
  type: string;
  /** `True` or `False`. */
  status: "True" | "False";
  /** CamelCase reason. */
  reason: string;
  /** What the user reads. */
  message: string;
  /** The generation it was written for. */
  observedGeneration?: number;
  /** When the status last changed. */
  lastTransitionTime: string;
}

/** A node address. */
export interface NodeAddress {
  /** `InternalIP`, `ExternalIP`, `Hostname`, … */
  type: string;
  /** As the Node reports it: an IP in text, or a host name for `Hostname`. */
  address: string;
}

/** A taint. */
export interface Taint {
  /** E.g. `node.cloudprovider.kubernetes.io/uninitialized`; the node controllers look taints up by it. */
  key: string;
  /** Optional; the taints the controllers set carry none. */
  value?: string;
  /** `NoSchedule`, `PreferNoSchedule` or `NoExecute`. */
  effect: string;
  /** When it was added. */
  timeAdded?: string;
}

/** The fields of a Node the controllers read. */
export interface SlimNode {
  name: string;
  uid: string;
  resourceVersion: string;
  deletionTimestamp?: string;
  providerID?: string;
  labels: Record<string, string>;
  /** The provided node IP annotation, when set. */
  providedNodeIP?: string;
  /** k3s's `k3s.io/node-args` annotation (k3s nodes only). */
  k3sNodeArgs?: string;
  taints: readonly Taint[];
  addresses: readonly NodeAddress[];
  /** Status of the Ready condition; undefined when there is none. */
  ready?: "True" | "False" | "Unknown";
}

/** A Service port. */
interface SlimServicePort {
  name?: string;
  protocol: string;
  port: number;
  nodePort?: number;
  appProtocol?: string;
}

/** The fields of a Service the load balancer controller reads. */
export interface SlimService {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** `metadata.creationTimestamp` (RFC 3339): the earlier of two Services sharing a load balancer wins a conflict. */
  creationTimestamp?: string;
  /** `metadata.generation`: bumped by every change of the spec. */
  generation?: number;
  deletionTimestamp?: string;
  /** Only this controller's annotations (`load-balancer.ankra.cloud/…`, `ccm.ankra.cloud/edge` and `…/share`). */
  annotations: Record<string, string>;
  finalizers: readonly string[];
  type: string;
  loadBalancerClass?: string;
  ports: readonly SlimServicePort[];
  ipFamilies: readonly string[];
  sessionAffinity?: string;
  externalTrafficPolicy?: string;
  healthCheckNodePort?: number;
  loadBalancerSourceRanges: readonly string[];
  allocateLoadBalancerNodePorts?: boolean;
  ingress: readonly { ip?: string; hostname?: string; ipMode?: string }[];
  /** This controller's `load-balancer.ankra.cloud/Ready` condition, when the Service has it. */
  readyCondition?: SlimCondition;
}

/**
 * Values that stand on every Node or Service (address types, taint keys and effects, Service types, …). A decoded
 * document holds its own copy of each string; the slim copies hold the one kept here, so a thousand Nodes carry one
 * `node.cloudprovider.kubernetes.io/uninitialized`, not a thousand.
 */
const COMMON_VALUES = new Map(
  [
    "InternalIP",
    "ExternalIP",
    "Hostname",
    "InternalDNS",
    "ExternalDNS",
    "NoSchedule",
    "PreferNoSchedule",
    "NoExecute",
    "node.cloudprovider.kubernetes.io/uninitialized",
    "node.cloudprovider.kubernetes.io/shutdown",
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/network-unavailable",
    "node-role.kubernetes.io/control-plane",
    "LoadBalancer",
    "ClusterIP",
    "NodePort",
    "ExternalName",
    "TCP",
    "UDP",
    "SCTP",
    "IPv4",
    "IPv6",
    "None",
    "ClientIP",
    "Cluster",
    "Local",
    "http",
    "https",
    "amd64",
    "arm64",
    "linux",
    "True",
    "False",
    "Unknown",
    "VIP",
    "Proxy",
  ].map((value) => [value, value]),
);

/** The kept copy of `value` when it is a common one, else `value` itself. */
function common(value: string): string {
  return COMMON_VALUES.get(value) ?? value;
}

/**
 * One copy of a value many objects repeat that no table can list (an instance type, a zone, a condition's message):
 * a decoded document holds a fresh copy of each; a thousand Nodes of one instance type keep one ({@linkcode
 * sharedString}).
 */
function shared(value: string): string {
  return COMMON_VALUES.get(value) ?? sharedString(value);
}

/** The one empty list every slim object without taints, finalizers, source ranges or ingress holds (frozen). */
const NONE: readonly never[] = Object.freeze([]);

/** `items`, or {@linkcode NONE} when there are none. */
function listOf<T>(items: readonly T[] | undefined): readonly T[] {
  return items && items.length > 0 ? items : NONE;
}

/** Most distinct taint lists and IP family lists kept for sharing; past it a slim object keeps its own. */
const SHARED_LISTS_LIMIT = 256;

/**
 * The kept copy of a list of values that many objects repeat exactly (a node's `uninitialized` taint, a Service's
 * `IPv4` family), frozen, found by `key`; a new list is kept while fewer than {@linkcode SHARED_LISTS_LIMIT} are.
 */
function sharedList<T>(lists: Map<string, readonly T[]>, key: string, make: () => readonly T[]): readonly T[] {
  const known = lists.get(key);
  if (known) return known;
  const made = Object.freeze(make());
  if (lists.size < SHARED_LISTS_LIMIT) lists.set(key, made);
  return made;
}

const TAINT_LISTS = new Map<string, readonly Taint[]>();
const FAMILY_LISTS = new Map<string, readonly string[]>();

/**
 * A node's taints: shared with every node of the same taints when none has a time (the `uninitialized` taint of a
 * joining node, the control plane's), the node's own otherwise.
 */
function slimTaints(taints: NonNullable<V1Node["spec"]>["taints"]): readonly Taint[] {
  if (!taints || taints.length === 0) return NONE;
  const slim = () =>
    taints.map((t) =>
      Object.freeze({
        key: common(t.key),
        value: t.value,
        effect: common(t.effect),
        timeAdded: t.timeAdded ? toIso(t.timeAdded) : undefined,
      })
    );
  if (taints.some((t) => t.timeAdded)) return slim();
  return sharedList(TAINT_LISTS, JSON.stringify(taints.map((t) => [t.key, t.value, t.effect])), slim);
}

/**
 * Slims a Node. Every field is written in one literal, `undefined` where it has no value: a field added afterwards
 * would give the object a second block for its fields (a property array) and a shape of its own.
 */
export function slimNode(node: V1Node): SlimNode {
  const name = node.metadata!.name!;
  // The kubelet repeats the node's name as its hostname label and Hostname address: keep one string.
  const named = (value: string) => value === name ? name : common(value);
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(node.metadata?.labels ?? {})) {
    labels[key] = value === name ? name : shared(value);
  }
  const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status;
  return {
    name,
    uid: node.metadata!.uid ?? "",
    resourceVersion: node.metadata!.resourceVersion ?? "",
    deletionTimestamp: node.metadata?.deletionTimestamp ? toIso(node.metadata.deletionTimestamp) : undefined,
    providerID: node.spec?.providerID || undefined,
    labels,
    providedNodeIP: node.metadata?.annotations?.[PROVIDED_NODE_IP_ANNOTATION],
    k3sNodeArgs: node.metadata?.annotations?.[K3S_NODE_ARGS_ANNOTATION],
    taints: slimTaints(node.spec?.taints),
    addresses: listOf((node.status?.addresses ?? []).map((a) => ({ type: common(a.type), address: named(a.address) }))),
    ready: ready === "True" || ready === "False" || ready === "Unknown"
      ? common(ready) as SlimNode["ready"]
      : undefined,
  };
}

/** A Service's IP families, shared with every Service of the same families. */
function slimFamilies(families: string[] | undefined): readonly string[] {
  if (!families || families.length === 0) return NONE;
  return sharedList(FAMILY_LISTS, families.join(), () => families.map(common));
}

/** Slims a Service: every field in one literal (as {@linkcode slimNode}); strings many Services repeat kept once. */
export function slimService(service: V1Service): SlimService {
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(service.metadata?.annotations ?? {})) {
    if (key.startsWith(ANNOTATION_PREFIX) || key === EDGE_IN_USE_ANNOTATION || key === SHARE_IN_USE_ANNOTATION) {
      annotations[key] = shared(value);
    }
  }
  const metadata = service.metadata!;
  const spec = service.spec ?? {};
  return {
    namespace: shared(metadata.namespace!),
    name: metadata.name!,
    uid: metadata.uid ?? "",
    resourceVersion: metadata.resourceVersion ?? "",
    creationTimestamp: metadata.creationTimestamp ? shared(toIso(metadata.creationTimestamp)) : undefined,
    generation: metadata.generation,
    deletionTimestamp: metadata.deletionTimestamp ? toIso(metadata.deletionTimestamp) : undefined,
    annotations,
    finalizers: listOf(metadata.finalizers?.map(shared)),
    type: common(spec.type ?? "ClusterIP"),
    loadBalancerClass: spec.loadBalancerClass === undefined ? undefined : shared(spec.loadBalancerClass),
    ports: listOf((spec.ports ?? []).map((p) => ({
      name: p.name === undefined ? undefined : common(p.name),
      protocol: common(p.protocol ?? "TCP"),
      port: p.port,
      nodePort: p.nodePort,
      appProtocol: p.appProtocol === undefined ? undefined : common(p.appProtocol),
    }))),
    ipFamilies: slimFamilies(spec.ipFamilies),
    sessionAffinity: spec.sessionAffinity === undefined ? undefined : common(spec.sessionAffinity),
    externalTrafficPolicy: spec.externalTrafficPolicy === undefined ? undefined : common(spec.externalTrafficPolicy),
    healthCheckNodePort: spec.healthCheckNodePort,
    loadBalancerSourceRanges: listOf(spec.loadBalancerSourceRanges),
    allocateLoadBalancerNodePorts: spec.allocateLoadBalancerNodePorts,
    ingress: listOf((service.status?.loadBalancer?.ingress ?? []).map((i) => ({
      ip: i.ip,
      hostname: i.hostname,
      ipMode: i.ipMode === undefined ? undefined : common(i.ipMode),
    }))),
    readyCondition: readyConditionOf(service),
  };
}

/**
 * This controller's condition of the Service, when it has one; its words and time are kept once however many
 * Services say the same (an outage tells every Service the same thing).
 */
function readyConditionOf(service: V1Service): SlimCondition | undefined {
  const found = (service.status?.conditions ?? []).find((c) => c.type === READY_CONDITION_TYPE);
  if (!found || (found.status !== "True" && found.status !== "False")) return undefined;
  return {
    type: READY_CONDITION_TYPE,
    status: common(found.status) as SlimCondition["status"],
    reason: shared(found.reason ?? ""),
    message: shared(found.message ?? ""),
    observedGeneration: found.observedGeneration,
    lastTransitionTime: shared(toIso(found.lastTransitionTime)),
  };
}

function toIso(value: Date | string | undefined): string {
  if (!value) return "";
  return typeof value === "string" ? value : value.toISOString();
}

/** True when two slim objects are equal apart from their resourceVersion. */
export function sameExceptVersion<T extends { resourceVersion: string }>(a: T, b: T): boolean {
  return JSON.stringify({ ...a, resourceVersion: "" }) === JSON.stringify({ ...b, resourceVersion: "" });
}
