/**
 * Whether the identity the doctor runs as may do everything the controller does, from one
 * `SelfSubjectAccessReview` per permission ({@linkcode accessChecks}). The answer is about that identity: run the
 * doctor with the controller's own kubeconfig or ServiceAccount to check the controller's permissions (an admin's
 * kubeconfig passes everything).
 *
 * @module
 */
import type { Fetched } from "./facts.ts";
import { type CheckName, fail, type Finding, pass, plural, skip } from "./finding.ts";
import { type AccessAnswer, describeAccess } from "./required_permissions.ts";

/** The check of RBAC permissions. */
export const RBAC: CheckName = { id: "rbac", title: "RBAC permissions of the controller" };

/** The finding of RBAC permissions, for `identity` when known. */
export function rbacFinding(access: Fetched<AccessAnswer[]>, identity?: string): Finding {
  const who = identity ? ` ${identity}` : " this identity";
  if (!access.ok) return skip(RBAC, `skipped: the access reviews failed: ${access.failure.message}`);
  const missing = access.value.filter((answer) => !answer.allowed).map((answer) => describeAccess(answer.check));
  if (missing.length === 0) {
    return pass(RBAC, `${who.trim()} may do all ${access.value.length} things the controller does`);
  }
  return fail(
    RBAC,
    `${who.trim()} lacks ${plural(missing.length, "permission")}: ${missing.join(", ")}`,
    "bind the ClusterRole system:ankra-cloud-ccm of chart/templates/rbac.yaml (and system:auth-delegator for " +
      "--metrics-authorization=delegated) to the controller's identity (the Helm chart does this for its " +
      "ServiceAccount), or add the missing verbs to its role",
  );
}
