/**
 * The Kubernetes permissions the controller needs, in one list: {@linkcode CONTROLLER_RULES} is the chart's ClusterRole
 * `system:ankra-cloud-ccm` (`chart/templates/rbac.yaml`; a test keeps the two equal), and
 * {@linkcode DELEGATED_AUTHORIZATION_RULES} what the chart's binding to `system:auth-delegator` gives for
 * `--metrics-authorization=delegated`. Each rule is expanded into one {@linkcode AccessCheck} per verb and resource,
 * asked of the API server as a `SelfSubjectAccessReview`.
 *
 * @module
 */

/** A rule as a ClusterRole writes it. */
export interface PolicyRule {
  /** API groups (`""` is the core group). */
  apiGroups: string[];
  /** Resources, `resource/subresource` for a subresource. */
  resources: string[];
  /** Verbs. */
  verbs: string[];
}

/** The rules of the chart's ClusterRole `system:ankra-cloud-ccm`, in its order. */
export const CONTROLLER_RULES: readonly PolicyRule[] = [
  { apiGroups: [""], resources: ["events"], verbs: ["create", "patch", "update"] },
  { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch", "update"] },
  { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch", "update", "patch", "delete"] },
  { apiGroups: [""], resources: ["nodes/status"], verbs: ["patch", "update"] },
  { apiGroups: [""], resources: ["services"], verbs: ["get", "list", "watch", "patch", "update"] },
  { apiGroups: [""], resources: ["services/status"], verbs: ["patch", "update"] },
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create", "get", "list", "watch", "update"] },
];

/** The ClusterRole the chart binds for delegated authorization of `/metrics`. */
export const AUTH_DELEGATOR_ROLE = "system:auth-delegator";

/** What {@linkcode AUTH_DELEGATOR_ROLE} gives that the controller uses (TokenReview and SubjectAccessReview). */
export const DELEGATED_AUTHORIZATION_RULES: readonly PolicyRule[] = [
  { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
  { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
];

/** One permission to ask about. */
export interface AccessCheck {
  /** API group (`""` for core). */
  group: string;
  /** Resource. */
  resource: string;
  /** Subresource, e.g. `status`. */
  subresource?: string;
  /** Verb. */
  verb: string;
  /** Namespace; undefined for cluster-scoped resources and for "in every namespace". */
  namespace?: string;
}

/** The API server's answer about one permission. */
export interface AccessAnswer {
  /** What was asked. */
  check: AccessCheck;
  /** Whether it is allowed. */
  allowed: boolean;
}

/** What the controller's configuration changes in the list. */
export interface PermissionOptions {
  /** Namespace of the leader-election Lease (`--leader-elect-resource-namespace`). */
  leaseNamespace: string;
  /** Whether the controller takes part in leader election (without it, it needs no Lease). */
  leaderElect: boolean;
  /** Whether `/metrics` is authorized by the API server (`--metrics-authorization=delegated`). */
  delegatedAuthorization: boolean;
}

/** One check per verb and resource of the rules the configuration needs, Leases in their namespace. */
export function accessChecks(options: PermissionOptions): AccessCheck[] {
  const rules = [
    ...CONTROLLER_RULES.filter((rule) => options.leaderElect || !rule.apiGroups.includes("coordination.k8s.io")),
    ...(options.delegatedAuthorization ? DELEGATED_AUTHORIZATION_RULES : []),
  ];
  const checks: AccessCheck[] = [];
  for (const rule of rules) {
    for (const group of rule.apiGroups) {
      for (const full of rule.resources) {
        const [resource, subresource] = full.split("/");
        for (const verb of rule.verbs) {
          const check: AccessCheck = { group, resource, verb };
          if (subresource) check.subresource = subresource;
          if (resource === "leases") check.namespace = options.leaseNamespace;
          checks.push(check);
        }
      }
    }
  }
  return checks;
}

/** A permission in words: `patch nodes/status`, `create events (events.k8s.io)`, `update leases … in kube-system`. */
export function describeAccess(check: AccessCheck): string {
  const resource = check.subresource ? `${check.resource}/${check.subresource}` : check.resource;
  const group = check.group ? ` (${check.group})` : "";
  const namespace = check.namespace ? ` in ${check.namespace}` : "";
  return `${check.verb} ${resource}${group}${namespace}`;
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
      },
    },
  };
}
