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
  taints: Taint[];
  addresses: NodeAddress[];
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
  finalizers: string[];
  type: string;
  loadBalancerClass?: string;
  ports: SlimServicePort[];
  ipFamilies: string[];
  sessionAffinity?: string;
  externalTrafficPolicy?: string;
  healthCheckNodePort?: number;
  loadBalancerSourceRanges: string[];
  allocateLoadBalancerNodePorts?: boolean;
  ingress: { ip?: string; hostname?: string; ipMode?: string }[];
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
  ].map((value) => [value, value]),
);

/** The kept copy of `value` when it is a common one, else `value` itself. */
function common(value: string): string {
  return COMMON_VALUES.get(value) ?? value;
}

/**
 * One copy of a value many Nodes repeat that no table can list (an instance type, a zone, a pool name): V8 keeps one
 * internalized copy of every property name, weakly (it goes once nothing holds it), so the value used as a name comes
 * back as that copy. A decoded document holds a fresh copy of each label value; a thousand Nodes of one instance
 * type keep one.
 */
function shared(value: string): string {
  return COMMON_VALUES.get(value) ?? Object.keys({ [value]: 0 })[0];
}

/** Slims a Node. */
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
    taints: (node.spec?.taints ?? []).map((t) => ({
      key: common(t.key),
      value: t.value,
      effect: common(t.effect),
      timeAdded: t.timeAdded ? toIso(t.timeAdded) : undefined,
    })),
    addresses: (node.status?.addresses ?? []).map((a) => ({ type: common(a.type), address: named(a.address) })),
    ready: ready === "True" ? "True" : ready === "False" ? "False" : ready === "Unknown" ? "Unknown" : undefined,
  };
}

/** Slims a Service. */
export function slimService(service: V1Service): SlimService {
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(service.metadata?.annotations ?? {})) {
    if (key.startsWith(ANNOTATION_PREFIX) || key === EDGE_IN_USE_ANNOTATION || key === SHARE_IN_USE_ANNOTATION) {
      annotations[key] = value;
    }
  }
  const spec = service.spec ?? {};
  return {
    namespace: service.metadata!.namespace!,
    name: service.metadata!.name!,
    uid: service.metadata!.uid ?? "",
    resourceVersion: service.metadata!.resourceVersion ?? "",
    creationTimestamp: service.metadata?.creationTimestamp ? toIso(service.metadata.creationTimestamp) : undefined,
    deletionTimestamp: service.metadata?.deletionTimestamp ? toIso(service.metadata.deletionTimestamp) : undefined,
    annotations,
    finalizers: [...service.metadata?.finalizers ?? []],
    type: common(spec.type ?? "ClusterIP"),
    loadBalancerClass: spec.loadBalancerClass,
    ports: (spec.ports ?? []).map((p) => ({
      name: p.name === undefined ? undefined : common(p.name),
      protocol: common(p.protocol ?? "TCP"),
      port: p.port,
      nodePort: p.nodePort,
      appProtocol: p.appProtocol === undefined ? undefined : common(p.appProtocol),
    })),
    ipFamilies: (spec.ipFamilies ?? []).map(common),
    sessionAffinity: spec.sessionAffinity === undefined ? undefined : common(spec.sessionAffinity),
    externalTrafficPolicy: spec.externalTrafficPolicy === undefined ? undefined : common(spec.externalTrafficPolicy),
    healthCheckNodePort: spec.healthCheckNodePort,
    loadBalancerSourceRanges: [...spec.loadBalancerSourceRanges ?? []],
    allocateLoadBalancerNodePorts: spec.allocateLoadBalancerNodePorts,
    ingress: (service.status?.loadBalancer?.ingress ?? []).map((i) => ({
      ip: i.ip,
      hostname: i.hostname,
      ipMode: i.ipMode,
    })),
    ...readyConditionOf(service),
  };
}

function readyConditionOf(service: V1Service): { generation?: number; readyCondition?: SlimCondition } {
  const generation = service.metadata?.generation;
  const found = (service.status?.conditions ?? []).find((c) => c.type === READY_CONDITION_TYPE);
  const readyCondition: SlimCondition | undefined = found && (found.status === "True" || found.status === "False")
    ? {
      type: READY_CONDITION_TYPE,
      status: found.status,
      reason: found.reason ?? "",
      message: found.message ?? "",
      observedGeneration: found.observedGeneration,
      lastTransitionTime: toIso(found.lastTransitionTime),
    }
    : undefined;
  return {
    ...(generation === undefined ? {} : { generation }),
    ...(readyCondition ? { readyCondition } : {}),
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
