/**
 * The Kubernetes objects of the burst benchmark (bench/burst_bench.ts): kubelet-shaped Nodes and two-port
 * LoadBalancer Services, created and deleted in bulk with the harness's bounded concurrency.
 *
 * @module
 */
import { kubeletNode } from "../tests/support/http/kube_http.ts";
import { UNINITIALIZED_TAINT } from "../lib/provider/node/node_plan.ts";
import { KUBE_CONCURRENCY } from "./burst_settings.ts";
import { kube, type KubeObject, pool, waitUntil } from "./burst_kube.ts";

/** True once the controller initialised `node`: a providerID and no uninitialized taint. */
export function nodeInitialised(node: KubeObject): boolean {
  return Boolean(node.spec?.providerID) && !(node.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT);
}

/** Creates `names` as kubelets would register them, labelled with `runLabel`; records each creation time. */
export async function createNodes(names: string[], runLabel: string, createdAt: Map<string, number>): Promise<void> {
  await pool(names, KUBE_CONCURRENCY, async (name) => {
    await kube("POST", "/api/v1/nodes", kubeletNode(name, { labels: { bench: "burst", "bench-run": runLabel } }));
    createdAt.set(name, Date.now());
  });
}

/** Deletes the nodes labelled with `runLabel` and waits until they are gone. */
export async function deleteNodes(runLabel: string): Promise<void> {
  const selector = `labelSelector=${encodeURIComponent(`bench-run=${runLabel}`)}`;
  await kube("DELETE", `/api/v1/nodes?${selector}`);
  await waitUntil(
    `nodes of ${runLabel} to be gone`,
    120_000,
    async () => (await kube<{ items: unknown[] }>("GET", `/api/v1/nodes?${selector}&limit=1`)).items.length === 0,
  );
}

/** Strips finalizers (the controller is stopped by now), deletes every Service in `namespace` and waits. */
export async function deleteServices(namespace: string): Promise<void> {
  const path = `/api/v1/namespaces/${namespace}/services`;
  const services = (await kube<{ items: KubeObject[] }>("GET", path)).items;
  await pool(services, KUBE_CONCURRENCY, async (s) => {
    if (s.metadata.finalizers?.length) {
      await kube(
        "PATCH",
        `${path}/${s.metadata.name}`,
        { metadata: { finalizers: null } },
        (x) => x < 300 || x === 404,
      );
    }
    await kube("DELETE", `${path}/${s.metadata.name}`, undefined, (x) => x < 300 || x === 404);
  });
  await waitUntil(
    `Services in ${namespace} to be gone`,
    120_000,
    async () => (await kube<{ items: unknown[] }>("GET", `${path}?limit=1`)).items.length === 0,
  );
}

/** Service `svc-<i>`: type LoadBalancer, TCP ports 80 and 443. */
export function serviceBody(i: number): Record<string, unknown> {
  const name = `svc-${String(i).padStart(4, "0")}`;
  return {
    metadata: { name, labels: { bench: "burst", app: name } },
    spec: {
      type: "LoadBalancer",
      selector: { app: name },
      ports: [
        { name: "http", protocol: "TCP", port: 80, targetPort: 8080 },
        { name: "https", protocol: "TCP", port: 443, targetPort: 8443 },
      ],
    },
  };
}
