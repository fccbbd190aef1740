/**
 * The doctor's list of the controller's permissions is the chart's ClusterRole and leader-election Role, read from
 * the chart itself, and its checks ask about the one Lease by name.
 */
import assert from "node:assert/strict";
import { loadAll } from "js-yaml";
import {
  accessChecks,
  AUTH_DELEGATOR_ROLE,
  CONTROLLER_RULES,
  describeAccess,
  LEADER_ELECTION_ROLE,
  leaderElectionRules,
  selfSubjectAccessReview,
} from "../../../lib/doctor/required_permissions.ts";

const RBAC_YAML = new URL("../../../chart/templates/rbac.yaml", import.meta.url);
const HELPERS = new URL("../../../chart/templates/_helpers.tpl", import.meta.url);

interface Manifest {
  kind: string;
  metadata: { name: string };
  rules?: { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] }[];
  roleRef?: { kind: string; name: string };
}

/** The chart's RBAC documents, with Helm's comments dropped and its template actions replaced by placeholders. */
function chartManifests(): Manifest[] {
  const text = Deno.readTextFileSync(RBAC_YAML)
    .replace(/\{\{-?\s*\/\*[\s\S]*?\*\/\s*-?\}\}\n?/g, "")
    .split("\n")
    .filter((line) => !/^\s*\{\{.*\}\}\s*$/.test(line))
    .join("\n")
    .replace(/\{\{[^}]*\}\}/g, "templated");
  return loadAll(text).filter(Boolean) as Manifest[];
}

const SETTINGS = { leaseNamespace: "kube-system", leaseName: "ankra-cloud-ccm", leaderElect: true };

Deno.test("CONTROLLER_RULES equals the rules of the chart's ClusterRole system:ankra-cloud-ccm", () => {
  const role = chartManifests().find((m) => m.kind === "ClusterRole" && m.metadata.name === "system:ankra-cloud-ccm");
  assert.ok(role, "the chart has the ClusterRole");
  assert.deepEqual(role.rules, CONTROLLER_RULES);
  const verbs = role.rules!.flatMap((rule) => rule.verbs);
  assert.ok(!verbs.includes("update") && !verbs.includes("*"), "every write is a patch: no update, no wildcard");
  assert.ok(!role.rules!.some((rule) => rule.resources.includes("leases")), "no Lease in the ClusterRole");
});

Deno.test("the chart's Role for the Lease is leaderElectionRules, on the name the Deployment passes", () => {
  const role = chartManifests().find((m) => m.kind === "Role" && m.metadata.name === LEADER_ELECTION_ROLE);
  assert.ok(role, `the chart has the Role ${LEADER_ELECTION_ROLE}`);
  assert.deepEqual(role.rules, leaderElectionRules("templated"));
  const binding = chartManifests().find((m) => m.kind === "RoleBinding" && m.roleRef?.name === LEADER_ELECTION_ROLE);
  assert.equal(binding?.roleRef?.kind, "Role");
  const helpers = Deno.readTextFileSync(HELPERS);
  assert.match(helpers, /define "ankra-cloud-ccm\.leaseName" -\}\}ankra-cloud-ccm\{\{- end/);
});

Deno.test("the chart binds system:auth-delegator, whose TokenReview and SubjectAccessReview the doctor checks", () => {
  const binding = chartManifests().find((m) =>
    m.kind === "ClusterRoleBinding" && m.roleRef?.name === AUTH_DELEGATOR_ROLE
  );
  assert.ok(binding, "the chart binds system:auth-delegator");
  const delegated = accessChecks({ ...SETTINGS, delegatedAuthorization: true })
    .filter((c) => c.resource === "tokenreviews" || c.resource === "subjectaccessreviews").map(describeAccess);
  assert.deepEqual(delegated, [
    "create tokenreviews (authentication.k8s.io)",
    "create subjectaccessreviews (authorization.k8s.io)",
  ]);
});

Deno.test("each rule becomes one check per verb and resource; the Lease by name in its namespace; options trim", () => {
  const all = accessChecks({ ...SETTINGS, leaseNamespace: "ccm", leaseName: "mine", delegatedAuthorization: true });
  const described = all.map(describeAccess);
  assert.equal(all.length, 16 + 5 + 2);
  assert.ok(described.includes("get namespaces named kube-system"), "the kube-system namespace, for its UID");
  assert.ok(described.includes("patch nodes/status"));
  assert.ok(described.includes("create events"));
  assert.ok(!described.some((d) => d.includes("events.k8s.io")), "events only in the core group");
  assert.deepEqual(described.filter((d) => d.includes("leases")), [
    "create leases (coordination.k8s.io) in ccm",
    "get leases (coordination.k8s.io) named mine in ccm",
    "update leases (coordination.k8s.io) named mine in ccm",
    "list leases (coordination.k8s.io) named mine in ccm",
    "watch leases (coordination.k8s.io) named mine in ccm",
  ]);
  const noLease = accessChecks({ ...SETTINGS, leaderElect: false, delegatedAuthorization: false });
  assert.equal(noLease.length, 16);
  assert.ok(!noLease.some((c) => c.resource === "leases" || c.resource === "tokenreviews"));
});

Deno.test("a SelfSubjectAccessReview names group, resource, subresource, verb, namespace and name", () => {
  assert.deepEqual(selfSubjectAccessReview({ group: "", resource: "nodes", subresource: "status", verb: "patch" }), {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SelfSubjectAccessReview",
    spec: { resourceAttributes: { group: "", resource: "nodes", subresource: "status", verb: "patch" } },
  });
  const lease = selfSubjectAccessReview({
    group: "coordination.k8s.io",
    resource: "leases",
    verb: "update",
    namespace: "kube-system",
    name: "ankra-cloud-ccm",
  });
  assert.deepEqual((lease.spec as { resourceAttributes: unknown }).resourceAttributes, {
    group: "coordination.k8s.io",
    resource: "leases",
    verb: "update",
    namespace: "kube-system",
    name: "ankra-cloud-ccm",
  });
});
