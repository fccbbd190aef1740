/**
 * The chart's ServiceAccount and RBAC (`templates/serviceaccount.yaml`, `templates/rbac.yaml`), rendered by `helm
 * template` for a namespace, with the cluster-scoped names given a suffix so that nothing collides with a Helm release
 * of another test; applied and removed with kubectl.
 *
 * @module
 */
import { loadAll } from "js-yaml";
import { helmOk, kubectl, kubectlOk } from "./helm.ts";

const CHART = new URL("../../../chart", import.meta.url).pathname;

/** A rendered object, as far as the renaming needs it. */
export interface Doc {
  /** Its kind. */
  kind: string;
  /** Its name and namespace. */
  metadata: { name: string; namespace?: string };
  /** A binding's role. */
  roleRef?: { kind: string; name: string };
}

/** The chart's ServiceAccount and RBAC for `namespace`, cluster-scoped names suffixed with `suffix`. */
export async function chartRbac(namespace: string, suffix: string, values: string[] = []): Promise<Doc[]> {
  const rendered = await helmOk([
    "template",
    "ankra-cloud-ccm",
    CHART,
    "--namespace",
    namespace,
    "--set",
    "api.token=x",
    ...values,
    "--show-only",
    "templates/serviceaccount.yaml",
    "--show-only",
    "templates/rbac.yaml",
  ]);
  return (loadAll(rendered) as (Doc | null)[]).filter((d): d is Doc => d !== null).map((doc) => {
    if (doc.kind === "ClusterRole" || doc.kind === "ClusterRoleBinding") {
      doc.metadata.name = `${doc.metadata.name}-${suffix}`;
    }
    if (doc.roleRef?.kind === "ClusterRole" && doc.roleRef.name === "system:ankra-cloud-ccm") {
      doc.roleRef.name = `${doc.roleRef.name}-${suffix}`;
    }
    if (doc.kind === "ServiceAccount") doc.metadata.namespace = namespace;
    return doc;
  });
}

/** Applies `docs` with kubectl; the file to remove them with. */
export async function applyDocs(docs: Doc[]): Promise<string> {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(file, JSON.stringify({ apiVersion: "v1", kind: "List", items: docs }));
  try {
    await kubectlOk(["apply", "-f", file]);
  } catch (error) {
    await Deno.remove(file);
    throw error;
  }
  return file;
}

/** Removes what `applyDocs` applied (not waiting for it to go). */
export async function removeDocs(file: string): Promise<void> {
  await kubectl(["delete", "--ignore-not-found", "--wait=false", "-f", file]);
  await Deno.remove(file);
}
