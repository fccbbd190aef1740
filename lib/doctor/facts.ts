/**
 * What the doctor found, as plain data: everything the Ankra Cloud API ({@linkcode CloudFacts}) and the Kubernetes
 * API ({@linkcode ClusterFacts}) answered, each read as its value or its failure (`fetched.ts`). The checks are pure
 * functions of these facts (see `checklist.ts`); every request is made in `gather_facts.ts`, so each check is tested
 * without a network. What the doctor reads of the configuration is in `doctor_settings.ts`, the operate probe it sends
 * in `operate_probe.ts`, and the permissions it asks about in `required_permissions.ts`.
 *
 * @module
 */
import type { Network, Server, ZoneCapabilities } from "../cloud/client.ts";
import type { SlimNode, SlimService } from "../kube/slim.ts";
import { objectKey } from "../kube/object_key.ts";
import type { Fetched, Reachability } from "./fetched.ts";
import type { ProbeOutcome } from "./operate_probe.ts";
import type { AccessAnswer } from "./required_permissions.ts";

/** Namespace of the other cloud controllers' Leases. */
export const CLOUD_CONTROLLER_LEASE_NAMESPACE = "kube-system";
/** The upstream cloud-controller-manager's default Lease name. */
export const UPSTREAM_CLOUD_CONTROLLER_LEASE = "cloud-controller-manager";
/** k3s's embedded cloud controller manager's Lease name. */
export const K3S_CLOUD_CONTROLLER_LEASE = "k3s-cloud-controller-manager";

/** A Lease as the doctor reads it. */
export interface LeaseFacts {
  /** `kube-system` for the other cloud controllers' Leases; `--leader-elect-resource-namespace` for ours. */
  namespace: string;
  /** The upstream or k3s cloud controller's Lease name, or `--leader-elect-resource-name` for ours. */
  name: string;
  /** `spec.holderIdentity`; undefined or empty when released. */
  holder?: string;
  /** `spec.renewTime` (RFC 3339, possibly with microseconds). */
  renewTime?: string;
  /** `spec.acquireTime`. */
  acquireTime?: string;
  /** `spec.leaseDurationSeconds`. */
  durationSeconds?: number;
}

/** A load balancer as the doctor lists it; fields an older API leaves out count as empty. */
export interface ListedLoadBalancerFacts {
  /** Ankra Cloud id. */
  id: string;
  /** Its labels. */
  labels: Record<string, string>;
  /** Its name. */
  name?: string;
  /** Life-cycle state. */
  state?: string;
  /** Creation time (RFC 3339). */
  created_at?: string;
  /** Floating IPv4 address. */
  public_ipv4?: string | null;
  /** First IPv6 address. */
  public_ipv6?: string | null;
  /** Every VM's IPv6 address. */
  public_ipv6_addresses?: string[];
}

/** What the Ankra Cloud API answered. Reads after a failed first one are not made (undefined). */
export interface CloudFacts {
  /** The unauthenticated request that tells whether the API answers at all, with TLS verified. */
  reachability: Reachability;
  /** `list_zones` with the token: tells whether the token is valid. */
  zones?: Fetched<{ name: string }[]>;
  /** `list_servers`, every page. */
  servers?: Fetched<Server[]>;
  /** `list_networks`, then `get_network` of each (with members); only when no network is configured. */
  networks?: Fetched<Network[]>;
  /** `get_network` of ANKRA_CLOUD_NETWORK_ID, when set; a `not_found` failure when it names no network. */
  configuredNetwork?: Fetched<Network>;
  /** The account's load balancers (`list_load_balancers`, every page). */
  loadBalancers?: Fetched<ListedLoadBalancerFacts[]>;
  /** The operate probe's outcome. */
  probe?: ProbeOutcome;
  /** `get_zone_capabilities` of each zone asked about, by zone name. */
  capabilities: Record<string, Fetched<ZoneCapabilities>>;
}

/** What the Kubernetes API answered. Reads after a failed first one are not made (undefined). */
export interface ClusterFacts {
  /** API server URL. */
  server: string;
  /** Where the connection settings came from (kubeconfig path or in-cluster). */
  source: string;
  /** The unauthenticated `GET /version` that tells whether the API server answers, with TLS verified. */
  reachability: Reachability;
  /** `SelfSubjectReview`: who the credentials are (`unauthorized` when they are refused). */
  identity?: Fetched<string | undefined>;
  /** `GET /version` with the credentials: the server's `gitVersion`. */
  version?: Fetched<string>;
  /** Every Node, slimmed. */
  nodes?: Fetched<SlimNode[]>;
  /** Every Service, slimmed, with what MetalLB wrote on it (for the node-address check). */
  services?: Fetched<ServiceFacts[]>;
  /** The pods that take ports on their node's addresses; only read when node-address mode is in use. */
  pods?: Fetched<HostPortPod[]>;
  /** The `kube-system` namespace's UID: the cluster's identity on its load balancers. */
  clusterUid?: Fetched<string>;
  /** Leases asked about by `namespace/name`; `null` when the Lease does not exist. */
  leases: Record<string, Fetched<LeaseFacts | null>>;
  /** One `SelfSubjectAccessReview` answer per permission the controller needs. */
  access?: Fetched<AccessAnswer[]>;
}

/**
 * The annotation MetalLB's controller writes on every Service it gives an address (`metallb.io/…` since MetalLB moved
 * its API group, `metallb.universe.tf/…` before): proof that MetalLB runs and serves that Service.
 */
export const METALLB_ALLOCATION_ANNOTATIONS = [
  "metallb.io/ip-allocated-from-pool",
  "metallb.universe.tf/ip-allocated-from-pool",
] as const;

/** A Service as the doctor reads it: the controller's slim view, MetalLB's mark on it, and its pod selector. */
export interface ServiceFacts extends SlimService {
  /** `<annotation>=<pool>` of {@linkcode METALLB_ALLOCATION_ANNOTATIONS}, when MetalLB gave the Service an address. */
  metalLbAllocation?: string;
  /** `spec.selector`: its own pods (a hostNetwork pod behind the Service takes its port without harm). */
  selector?: Record<string, string>;
}

/**
 * A pod that takes ports on its node's own addresses: with `hostNetwork` every container port, otherwise each
 * `hostPort`. Only scheduled pods that have not ended.
 */
export interface HostPortPod {
  /** Its namespace. */
  namespace: string;
  /** Its name. */
  name: string;
  /** `spec.nodeName`. */
  nodeName: string;
  /** `spec.hostNetwork`. */
  hostNetwork: boolean;
  /** Its labels (a Service's selector may pick it). */
  labels: Record<string, string>;
  /** The ports it takes on the node (protocol upper case). */
  ports: { port: number; protocol: string }[];
}

/** The key of a Lease in {@linkcode ClusterFacts.leases}. */
export function leaseKey(namespace: string, name: string): string {
  return objectKey({ namespace, name });
}
