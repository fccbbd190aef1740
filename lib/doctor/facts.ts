/**
 * What the doctor reads and asks, as plain data: every read's answer or its failure (the checks are pure functions
 * of these facts, see `checklist.ts`; every request is made in `gather_facts.ts`, so each check is tested without a
 * network), the operate probe it sends, the Leases it looks at, and the Kubernetes permissions the controller needs.
 *
 * **The operate probe** is the doctor's one request that is not a read. The Ankra Cloud API has no route that tells
 * a token its own scope, so write permission shows only as the answer to a write: a `create_load_balancer` the API
 * must refuse — its zone does not exist and its `network_id` is empty, two independent reasons, either of which
 * stops a create — with a body that is otherwise well-formed, so it gets past what the API checks before the zone:
 * the token (401), its scope (403 for a read-only token), the body's shape (400), the billing gates of a billable
 * create (403 `email_unverified`, 402 `payment_method_required`, `owner_approval_required`, `account_suspended`),
 * then the zone (404) and the network (400). That is the simulator's order (`simulator/operation_route.ts`,
 * `simulator/routes/load_balancers.ts`, `simulator/load_balancers.ts`). Where an API checks in another order, an
 * answer can say less (a 404 or 400 then does not prove the billing gates pass), never something false about the
 * scope: a 403 without `email_unverified` is the read-only answer. It asks for the cheapest kind (`public_ipv4:
 * false`, `high_availability: false`) and carries a label naming it.
 *
 * **The permissions**: {@linkcode CONTROLLER_RULES} is the chart's ClusterRole `system:ankra-cloud-ccm`,
 * {@linkcode leaderElectionRules} its Role for the one Lease (`chart/templates/rbac.yaml`; a test keeps them equal)
 * and {@linkcode DELEGATED_AUTHORIZATION_RULES} what the chart's binding to `system:auth-delegator` gives for
 * `--metrics-authorization=delegated`; each rule is expanded into one {@linkcode AccessCheck} per verb and resource
 * (and name), asked as a `SelfSubjectAccessReview`.
 *
 * @module
 */
import { DOCTOR_PROBE_LABEL } from "../ankra_names.ts";
import type { Network, Server, ZoneCapabilities } from "../cloud/client.ts";
import type { CreateLoadBalancerInput } from "../cloud/load_balancers.ts";
import type { Config } from "../config/config.ts";
import type { SlimNode, SlimService } from "../kube/slim.ts";
import type { ServingMode } from "../provider/service/annotations.ts";
import type { ReservedRange } from "../provider/service/reserved_ports.ts";
import type { HighAvailabilityMode } from "../provider/service/service_plan.ts";
import { objectKey } from "../kube/object_key.ts";

/** What the checks need from the configuration. */
export interface DoctorSettings {
  /** Ankra Cloud API base URL. */
  apiUrl: string;
  /** ANKRA_CLOUD_CA_BUNDLE, when set. */
  caBundlePath?: string;
  /** ANKRA_CLOUD_NETWORK_ID. */
  networkId?: string;
  /** ANKRA_CLOUD_ZONE. */
  zone?: string;
  /** ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY. */
  highAvailability: HighAvailabilityMode;
  /** `--leader-elect`. */
  leaderElect: boolean;
  /** `--leader-elect-resource-name`. */
  leaseName: string;
  /** `--leader-elect-resource-namespace`. */
  leaseNamespace: string;
  /** `--metrics-authorization=delegated`. */
  delegatedAuthorization: boolean;
  /** `--cluster-name`. */
  clusterName: string;
  /** `--default-load-balancer-mode`; undefined: load-balancer. */
  defaultLoadBalancerMode?: ServingMode;
  /** `--load-balancer-class`: which Services the controller serves besides class-less ones. */
  loadBalancerClass?: string;
  /** `--require-load-balancer-class`. */
  requireLoadBalancerClass?: boolean;
  /** `--node-address-reserved-ports`, parsed; undefined: not checked. */
  nodeAddressReservedPorts?: readonly ReservedRange[];
}

/** The checks' settings from a configuration. */
export function doctorSettings(config: Config): DoctorSettings {
  return {
    apiUrl: config.cloud.apiUrl,
    caBundlePath: config.cloud.caBundlePath,
    networkId: config.cloud.networkId,
    zone: config.cloud.zone,
    highAvailability: config.cloud.loadBalancerHighAvailability,
    leaderElect: config.leaderElect,
    leaseName: config.leaderElectResourceName,
    leaseNamespace: config.leaderElectResourceNamespace,
    delegatedAuthorization: config.metricsAuthorization === "delegated",
    clusterName: config.clusterName,
    defaultLoadBalancerMode: config.defaultLoadBalancerMode,
    loadBalancerClass: config.loadBalancerClass,
    requireLoadBalancerClass: config.requireLoadBalancerClass,
    nodeAddressReservedPorts: config.nodeAddressReservedPorts,
  };
}

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

/** Why an endpoint did not answer. */
export type UnreachableKind = "tls" | "dns" | "refused" | "timeout" | "network";

/** The outcome of one reachability request. */
export type Reachability =
  | { ok: true; url: string; status: number; body: string }
  | { ok: false; url: string; kind: UnreachableKind; message: string };

/** The zone of the operate probe: a name no Ankra zone has (zones are named like `de-fsn1`). */
const OPERATE_PROBE_ZONE = "ankra-cloud-ccm-doctor-no-such-zone";

/** The operate probe's body: well-formed, refused for its zone and its empty network. */
export const OPERATE_PROBE: CreateLoadBalancerInput = {
  zone: OPERATE_PROBE_ZONE,
  name: "ankra-cloud-ccm-doctor-probe",
  network_id: "",
  labels: { [DOCTOR_PROBE_LABEL]: "true" },
  high_availability: false,
  public_ipv4: false,
};

/** What the probe got: refused (the expected outcome) with the API's answer, or — never expected — created. */
export type ProbeOutcome =
  | { created: false; failure: ReadFailure }
  | { created: true; loadBalancerId: string };

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
  /** The account's load balancers, by their labels (`list_load_balancers`, every page). */
  loadBalancers?: Fetched<{ id: string; labels: Record<string, string> }[]>;
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

/** A Service as the doctor reads it: the controller's slim view, and MetalLB's mark on it. */
export interface ServiceFacts extends SlimService {
  /** `<annotation>=<pool>` of {@linkcode METALLB_ALLOCATION_ANNOTATIONS}, when MetalLB gave the Service an address. */
  metalLbAllocation?: string;
}

/** The key of a Lease in {@linkcode ClusterFacts.leases}. */
export function leaseKey(namespace: string, name: string): string {
  return objectKey({ namespace, name });
}

/** A rule as a ClusterRole or Role writes it. */
interface PolicyRule {
  /** API groups (`""` is the core group). */
  apiGroups: string[];
  /** Resources, `resource/subresource` for a subresource. */
  resources: string[];
  /** Only objects of these names; absent: every object. */
  resourceNames?: string[];
  /** Kubernetes verbs (`get`, `patch`, …); each becomes its own {@linkcode AccessCheck}. */
  verbs: string[];
}

/**
 * The rules of the chart's ClusterRole `system:ankra-cloud-ccm`, in its order: the verbs lib/kube/ calls and no
 * other (no `update`: every write is a patch; events only in the core group); `get` on the `kube-system` namespace
 * alone, for its UID (the cluster's identity on its load balancers).
 */
export const CONTROLLER_RULES: readonly PolicyRule[] = [
  { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
  { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch", "patch", "delete"] },
  { apiGroups: [""], resources: ["nodes/status"], verbs: ["patch"] },
  { apiGroups: [""], resources: ["services"], verbs: ["get", "list", "watch", "patch"] },
  { apiGroups: [""], resources: ["services/status"], verbs: ["patch"] },
  { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
  { apiGroups: [""], resources: ["namespaces"], resourceNames: ["kube-system"], verbs: ["get"] },
];

/** The name of the chart's Role for the leader-election Lease, in the Lease's namespace. */
export const LEADER_ELECTION_ROLE = "system:ankra-cloud-ccm:leader-election";

/**
 * The rules of the chart's Role {@linkcode LEADER_ELECTION_ROLE} for a Lease named `leaseName`: `create` (which
 * RBAC cannot limit to a name), then reading, renewing and watching that one Lease.
 */
export function leaderElectionRules(leaseName: string): PolicyRule[] {
  return [
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
    {
      apiGroups: ["coordination.k8s.io"],
      resources: ["leases"],
      resourceNames: [leaseName],
      verbs: ["get", "update", "list", "watch"],
    },
  ];
}

/** The ClusterRole the chart binds for delegated authorization of `/metrics`. */
export const AUTH_DELEGATOR_ROLE = "system:auth-delegator";

/** What {@linkcode AUTH_DELEGATOR_ROLE} gives that the controller uses (TokenReview and SubjectAccessReview). */
const DELEGATED_AUTHORIZATION_RULES: readonly PolicyRule[] = [
  { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
  { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
];

/** One permission to ask about. */
interface AccessCheck {
  /** API group (`""` for core). */
  group: string;
  /** Plural resource name as in a rule, e.g. `nodes`, without the subresource. */
  resource: string;
  /** Subresource, e.g. `status`. */
  subresource?: string;
  /** One verb of a rule: each is asked in its own `SelfSubjectAccessReview`. */
  verb: string;
  /** Namespace; undefined for cluster-scoped resources and for "in every namespace". */
  namespace?: string;
  /** The object's name, for a permission granted on named objects only (the Lease). */
  name?: string;
}

/** The API server's answer about one permission. */
export interface AccessAnswer {
  /** What was asked. */
  check: AccessCheck;
  /** Whether it is allowed. */
  allowed: boolean;
}

/** What the controller's configuration changes in the list. */
interface PermissionOptions {
  /** Namespace of the leader-election Lease (`--leader-elect-resource-namespace`). */
  leaseNamespace: string;
  /** Name of the leader-election Lease (`--leader-elect-resource-name`). */
  leaseName: string;
  /** Whether the controller takes part in leader election (without it, it needs no Lease). */
  leaderElect: boolean;
  /** Whether `/metrics` is authorized by the API server (`--metrics-authorization=delegated`). */
  delegatedAuthorization: boolean;
}

/** One check per verb and resource of the rules the configuration needs; Leases in their namespace, by name. */
export function accessChecks(options: PermissionOptions): AccessCheck[] {
  const rules = [
    ...CONTROLLER_RULES,
    ...(options.leaderElect ? leaderElectionRules(options.leaseName) : []),
    ...(options.delegatedAuthorization ? DELEGATED_AUTHORIZATION_RULES : []),
  ];
  const checks: AccessCheck[] = [];
  for (const rule of rules) {
    for (const group of rule.apiGroups) {
      for (const full of rule.resources) {
        const [resource, subresource] = full.split("/");
        for (const name of rule.resourceNames ?? [undefined]) {
          for (const verb of rule.verbs) {
            const check: AccessCheck = { group, resource, verb };
            if (subresource) check.subresource = subresource;
            if (resource === "leases") check.namespace = options.leaseNamespace;
            if (name !== undefined) check.name = name;
            checks.push(check);
          }
        }
      }
    }
  }
  return checks;
}

/**
 * A permission in words: `patch nodes/status`, `create leases (coordination.k8s.io) in kube-system`,
 * `update leases (coordination.k8s.io) named ankra-cloud-ccm in kube-system`.
 */
export function describeAccess(check: AccessCheck): string {
  const resource = check.subresource ? `${check.resource}/${check.subresource}` : check.resource;
  const group = check.group ? ` (${check.group})` : "";
  const name = check.name ? ` named ${check.name}` : "";
  const namespace = check.namespace ? ` in ${check.namespace}` : "";
  return `${check.verb} ${resource}${group}${name}${namespace}`;
}

/** The `SelfSubjectAccessReview` that asks about `check`. */
export function selfSubjectAccessReview(check: AccessCheck): Record<string, unknown> {
  return {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SelfSubjectAccessReview",
    spec: {
      resourceAttributes: {
        group: check.group,
        resource: check.resource,
        ...(check.subresource ? { subresource: check.subresource } : {}),
        verb: check.verb,
        ...(check.namespace ? { namespace: check.namespace } : {}),
        ...(check.name ? { name: check.name } : {}),
      },
    },
  };
}
