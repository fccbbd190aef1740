/**
 * What the doctor read, as plain data: every read's answer or its failure. The checks are pure functions of these
 * facts (see `checklist.ts`); all requests are made in one place (`gather_facts.ts`), so every check can be tested
 * without a network.
 *
 * @module
 */
import type { Network, Server, ZoneCapabilities } from "../cloud/client.ts";
import type { SlimNode } from "../kube/slim.ts";
import type { ProbeOutcome } from "./operate_probe.ts";
import type { Reachability } from "./reachability.ts";
import type { AccessAnswer } from "./required_permissions.ts";

/** A failed read, as the checks see it. */
export interface ReadFailure {
  /** The error kind of the client (`unauthorized`, `forbidden`, `not_found`, `network`, …). */
  kind: string;
  /** HTTP status, when an answer arrived. */
  status?: number;
  /** The problem document's `reason` (Ankra Cloud) or the Status `reason` (Kubernetes). */
  reason?: string;
  /** One line naming the operation and what happened (never the token). */
  message: string;
}

/** The answer of one read: its value, or why there is none. */
export type Fetched<T> = { ok: true; value: T } | { ok: false; failure: ReadFailure };

/** A successful read. */
export function fetched<T>(value: T): Fetched<T> {
  return { ok: true, value };
}

/** A failed read. */
export function failedRead<T = never>(failure: ReadFailure): Fetched<T> {
  return { ok: false, failure };
}

/** A Lease as the doctor reads it. */
export interface LeaseFacts {
  /** Namespace. */
  namespace: string;
  /** Name. */
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
  /** How many load balancers the account has (`list_load_balancers`, every page). */
  loadBalancerCount?: Fetched<number>;
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
  /** Leases asked about by `namespace/name`; `null` when the Lease does not exist. */
  leases: Record<string, Fetched<LeaseFacts | null>>;
  /** One `SelfSubjectAccessReview` answer per permission the controller needs. */
  access?: Fetched<AccessAnswer[]>;
}

/** The key of a Lease in {@linkcode ClusterFacts.leases}. */
export function leaseKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}
