/**
 * Whether the Kubernetes API server answers, with its certificate verified against the kubeconfig's (or the
 * in-cluster) CA, and takes the credentials. Pure function of the reads.
 *
 * @module
 */
import type { ClusterFacts } from "./facts.ts";
import { type CheckName, fail, type Finding, pass } from "./finding.ts";

/** The check of the Kubernetes API. */
export const KUBERNETES_API: CheckName = { id: "kubernetes-api", title: "Kubernetes API reachable" };

/** The finding when no connection could be configured at all (`problem` names the kubeconfig or in-cluster issue). */
export function kubernetesConnectionFinding(problem: string): Finding {
  return fail(
    KUBERNETES_API,
    problem,
    "pass --kubeconfig=<file> (on k3s: /etc/rancher/k3s/k3s.yaml), or run the doctor in a Pod with the " +
      "controller's ServiceAccount",
  );
}

/** The finding of the Kubernetes API, from the reachability request, the identity and the version. */
export function kubernetesApiFinding(
  facts: Pick<ClusterFacts, "server" | "source" | "reachability" | "identity" | "version">,
): Finding {
  const { server, source, reachability } = facts;
  if (!reachability.ok) {
    if (reachability.kind === "tls") {
      return fail(
        KUBERNETES_API,
        `TLS verification failed for ${server}: ${reachability.message}`,
        `the CA of ${source} (certificate-authority or certificate-authority-data) must be the one that signed the ` +
          "API server's certificate, and the server's address must be in that certificate",
      );
    }
    return fail(
      KUBERNETES_API,
      `could not reach ${server} (from ${source}): ${reachability.message}`,
      "check the server address in the kubeconfig (or --master) and that this host reaches the API server",
    );
  }
  if (facts.identity && !facts.identity.ok && facts.identity.failure.status === 401) {
    return fail(
      KUBERNETES_API,
      `the API server refuses the credentials of ${source} (HTTP 401)`,
      "renew the kubeconfig's credentials (token, client certificate or exec plugin), or use another kubeconfig",
    );
  }
  const version = facts.version?.ok ? `Kubernetes ${facts.version.value}` : "version unknown";
  const who = facts.identity?.ok && facts.identity.value ? `, as ${facts.identity.value}` : "";
  return pass(KUBERNETES_API, `${server} answered (${version}${who})`);
}
