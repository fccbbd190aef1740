/**
 * The doctor's list of the controller's permissions is the chart's ClusterRole, read from the chart itself.
 */
import assert from "node:assert/strict";
import { loadAll } from "js-yaml";
import {
  accessChecks,
  AUTH_DELEGATOR_ROLE,
  CONTROLLER_RULES,
  describeAccess,
  selfSubjectAccessReview,
} from "../../lib/doctor/facts.ts";

const RBAC_YAML = new URL("../../chart/templates/rbac.yaml", import.meta.url);

interface Manifest {
  kind: string;
  metadata: { name: string };
  rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
  roleRef?: { kind: string; name: string };
}

/** The chart's RBAC documents, with Helm's template actions replaced by placeholders. */
function chartManifests(): Manifest[] {
  const text = Deno.readTextFileSync(RBAC_YAML)
    .split("\n")
    .filter((line) => !/^\s*\{\{.*\}\}\s*$/.test(line))
    .join("\n")
    .replace(/\{\{[^}]*\}\}/g, "templated");
  return loadAll(text).filter(Boolean) as Manifest[];
}

Deno.test("CONTROLLER_RULES equals the rules of the chart's ClusterRole system:ankra-cloud-ccm", () => {
  const role = chartManifests().find((m) => m.kind === "ClusterRole" && m.metadata.name === "system:ankra-cloud-ccm");
  assert.ok(role, "the chart has the ClusterRole");
  assert.deepEqual(role.rules, CONTROLLER_RULES);
});

Deno.test("the chart binds system:auth-delegator, whose TokenReview and SubjectAccessReview the doctor checks", () => {
  const binding = chartManifests().find((m) =>
    m.kind === "ClusterRoleBinding" && m.roleRef?.name === AUTH_DELEGATOR_ROLE
  );
  assert.ok(binding, "the chart binds system:auth-delegator");
  const delegated = accessChecks({ leaseNamespace: "kube-system", leaderElect: true, delegatedAuthorization: true })
    .filter((c) => c.resource === "tokenreviews" || c.resource === "subjectaccessreviews").map(describeAccess);
  assert.deepEqual(delegated, [
    "create tokenreviews (authentication.k8s.io)",
    "create subjectaccessreviews (authorization.k8s.io)",
  ]);
});

Deno.test("each rule becomes one check per verb and resource; Leases in their namespace; options trim the list", () => {
  const all = accessChecks({ leaseNamespace: "ccm", leaderElect: true, delegatedAuthorization: true });
  const verbs = CONTROLLER_RULES.reduce((sum, rule) => sum + rule.verbs.length * rule.resources.length, 0);
  assert.equal(all.length, verbs + 2);
  assert.ok(all.map(describeAccess).includes("patch nodes/status"));
  assert.ok(all.map(describeAccess).includes("create events (events.k8s.io)"));
  assert.ok(all.map(describeAccess).includes("update leases (coordination.k8s.io) in ccm"));
  const noLease = accessChecks({ leaseNamespace: "ccm", leaderElect: false, delegatedAuthorization: false });
  assert.equal(noLease.length, verbs - 5);
  assert.ok(!noLease.some((c) => c.resource === "leases" || c.resource === "tokenreviews"));
});

Deno.test("a SelfSubjectAccessReview names group, resource, subresource, verb and namespace", () => {
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
  });
  assert.deepEqual((lease.spec as { resourceAttributes: unknown }).resourceAttributes, {
    group: "coordination.k8s.io",
    resource: "leases",
    verb: "update",
    namespace: "kube-system",
  });
});
