/**
 * Releasing a Service's load balancer instead of deleting it (`load-balancer.ankra.cloud/preserve-on-delete`): its
 * address is kept, nothing of the Service is left on it. The calls, in order: each frontend this controller made
 * (`tcp-<port>`) deleted, then each such backend (a backend cannot go while a frontend forwards to it) — so no
 * traffic reaches node ports another Service may get next — then one `update_load_balancer` that renames it (the
 * Service's name is free again) and replaces its labels: the Service label gives way to
 * `ccm.ankra.cloud/released=<namespace>.<name>`, the cluster's name and UID stay (so no sweep, adoption by name or
 * other cluster takes it). Frontends and backends made by hand stay. Pure.
 *
 * @module
 */
import { CLUSTER_UID_LABEL, RELEASED_LABEL, SERVICE_LABEL } from "../../ankra_names.ts";
import type { LoadBalancer } from "../../cloud/schemas.ts";
import type { CloudCall } from "./cloud_calls.ts";
import { isManagedListener, releasedName } from "./load_balancer_names.ts";

/** The value of {@linkcode RELEASED_LABEL} for Service `<namespace>/<name>`: `<namespace>.<name>`. */
export function releasedLabelValue(service: { namespace: string; name: string }): string {
  return `${service.namespace}.${service.name}`;
}

/** The calls that release `lb`, the load balancer of `service`, for the cluster with UID `clusterUid`. */
export function planRelease(
  lb: Pick<LoadBalancer, "id" | "name" | "labels" | "frontends" | "backends">,
  service: { namespace: string; name: string },
  clusterUid: string,
): CloudCall[] {
  const ref = { id: lb.id };
  const calls: CloudCall[] = [];
  for (const frontend of lb.frontends) {
    if (!isManagedListener(frontend.name)) continue;
    calls.push({
      operation: "delete_load_balancer_frontend",
      loadBalancer: ref,
      frontendId: frontend.id,
      name: frontend.name,
    });
  }
  for (const backend of lb.backends) {
    if (!isManagedListener(backend.name)) continue;
    calls.push({
      operation: "delete_load_balancer_backend",
      loadBalancer: ref,
      backend: { id: backend.id },
      name: backend.name,
    });
  }
  const labels: Record<string, string> = {
    ...lb.labels,
    [CLUSTER_UID_LABEL]: clusterUid,
    [RELEASED_LABEL]: releasedLabelValue(service),
  };
  delete labels[SERVICE_LABEL];
  calls.push({
    operation: "update_load_balancer",
    loadBalancer: ref,
    body: { name: releasedName(lb.name, lb.id), labels },
  });
  return calls;
}
