/**
 * The identity the in-process controllers of the suite run as: a ServiceAccount bound by the chart's own ClusterRole
 * and leader-election Role (rendered by `helm template`, `../chart/chart_rbac.ts`) in a namespace of its own — not the
 * control plane's admin. A test doing what the chart's role does not allow fails the way a user's cluster would.
 * Made once per control plane and test process; its token lasts a day. Controller processes (`controller_process.ts`)
 * run as it too, with a kubeconfig of its token, holding the Lease the chart's Role names.
 *
 * @module
 */
import { applyDocs, chartRbac } from "../chart/chart_rbac.ts";
import { kubeconfigText, type SharedControlPlane, testControlPlane } from "../control_plane/control_plane.ts";
import { kubeOk, kubeRequest } from "../http/kube_http.ts";

/** The namespace of the suite's controller ServiceAccount (`ankra-cloud-ccm`). */
export const CONTROLLER_NAMESPACE = "ccm-suite-controller";

const tokens = new Map<string, Promise<string>>();
const kubeconfigs = new Map<string, Promise<string>>();

async function makeIdentity(plane: SharedControlPlane): Promise<string> {
  const namespace = await kubeRequest(plane, "POST", "/api/v1/namespaces", {
    body: { metadata: { name: CONTROLLER_NAMESPACE } },
  });
  if (namespace.status !== 201 && namespace.status !== 409) {
    throw new Error(`creating namespace ${CONTROLLER_NAMESPACE} answered ${namespace.status}`);
  }
  // kubectl works against the test run's control plane only; another plane gets its objects through the API.
  const docs = await chartRbac(CONTROLLER_NAMESPACE, "suite");
  if (plane === testControlPlane()) await applyDocs(docs);
  else {
    for (const doc of docs) {
      const path = apiPath(doc);
      const answer = await kubeRequest(plane, "POST", path, { body: doc });
      if (answer.status !== 201 && answer.status !== 409) throw new Error(`POST ${path} answered ${answer.status}`);
    }
  }
  const answer = await kubeOk<{ status: { token: string } }>(
    plane,
    "POST",
    `/api/v1/namespaces/${CONTROLLER_NAMESPACE}/serviceaccounts/ankra-cloud-ccm/token`,
    { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 86_400 } } },
  );
  return answer.status.token;
}

function apiPath(doc: { kind: string; metadata: { namespace?: string } }): string {
  const ns = doc.metadata.namespace ?? CONTROLLER_NAMESPACE;
  switch (doc.kind) {
    case "ServiceAccount":
      return `/api/v1/namespaces/${ns}/serviceaccounts`;
    case "ClusterRole":
      return "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    case "ClusterRoleBinding":
      return "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";
    case "Role":
      return `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`;
    case "RoleBinding":
      return `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`;
    default:
      throw new Error(`the chart's RBAC holds an unexpected ${doc.kind}`);
  }
}

/** What `make` gives for `key`, made once per test process; forgotten when it fails, so the next call tries again. */
function once<T>(cache: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let value = cache.get(key);
  if (!value) {
    value = make();
    value.catch(() => cache.delete(key));
    cache.set(key, value);
  }
  return value;
}

/** A bearer token of the suite's controller identity on `plane` (the chart's RBAC, nothing more). */
export function controllerToken(plane: SharedControlPlane = testControlPlane()): Promise<string> {
  return once(tokens, plane.url, () => makeIdentity(plane));
}

/** The leader Lease the chart's Role lets the identity hold: `ankra-cloud-ccm` in the identity's own namespace. */
export const CONTROLLER_LEASE = { namespace: CONTROLLER_NAMESPACE, name: "ankra-cloud-ccm" } as const;

/**
 * A kubeconfig file of the suite's controller identity on the test control plane, reaching it at `url` (default the
 * plane's own; a test cutting the API off gives its proxy's).
 */
export function controllerKubeconfig(url?: string): Promise<string> {
  const plane = testControlPlane();
  const server = url ?? plane.url;
  return once(kubeconfigs, server, async () => {
    // In the control plane's directory: removed with it.
    const path = await Deno.makeTempFile({ dir: plane.dir, prefix: "controller-", suffix: ".kubeconfig" });
    await Deno.writeTextFile(path, kubeconfigText(server, plane.caCert, await controllerToken(plane)));
    return path;
  });
}

/** Deletes the identity's leader Lease (as the admin), so the next replica does not wait out a killed one's term. */
export async function freshLease(): Promise<void> {
  const { namespace, name } = CONTROLLER_LEASE;
  const answer = await kubeRequest(
    testControlPlane(),
    "DELETE",
    `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`,
  );
  if (answer.status !== 200 && answer.status !== 404) throw new Error(`deleting the Lease answered ${answer.status}`);
}
