/**
 * The Kubernetes permissions the controller needs, as the doctor asks about them: {@linkcode CONTROLLER_RULES} is the
 * chart's ClusterRole `system:ankra-cloud-ccm`, {@linkcode leaderElectionRules} its Role for the one Lease
 * (`chart/templates/rbac.yaml`; a test keeps them equal) and {@linkcode DELEGATED_AUTHORIZATION_RULES} what the
 * chart's binding to `system:auth-delegator` gives for `--metrics-authorization=delegated`; each rule is expanded into
 * one {@linkcode AccessCheck} per verb and resource (and name), asked as a `SelfSubjectAccessReview`.
 *
 * @module
 */

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
