/**
 * Every write the service controller makes to a Service, in one place: the cleanup finalizer (added before any cloud
 * create, removed once the load balancer is gone), the status ingress, and the annotation recording which edge holds
 * the Service's members. Finalizer changes carry the resourceVersion and retry on conflict; the status is a merge
 * patch of the status subresource; a Service that is gone is not an error. In a dry run each write is described in
 * the report instead of being sent.
 *
 * @module
 */
import type { V1Service } from "@kubernetes/client-node";
import { isKubeError } from "./client.ts";
import { describedInDryRun, type KubeWriteTarget, updateObject } from "./object_writes.ts";
import { EDGE_IN_USE_ANNOTATION } from "./slim.ts";

function described(target: KubeWriteTarget, service: ServiceName, action: string, detail: string): boolean {
  return describedInDryRun(target, {
    controller: "service",
    object: `${service.namespace}/${service.name}`,
    action,
    detail,
  });
}

/** A Service, by namespace and name. */
export interface ServiceName {
  /** Namespace. */
  namespace: string;
  /** Name. */
  name: string;
}

/** The API path of a Service (or its status subresource). */
export function servicePath(service: ServiceName, subresource?: "status"): string {
  const base = `/api/v1/namespaces/${encodeURIComponent(service.namespace)}/services/${
    encodeURIComponent(service.name)
  }`;
  return subresource ? `${base}/${subresource}` : base;
}

/** Adds `finalizer` unless present; false when there was nothing to do or the Service is gone. */
export async function addServiceFinalizer(
  target: KubeWriteTarget,
  service: ServiceName,
  finalizer: string,
): Promise<boolean> {
  if (
    described(
      target,
      service,
      "add_finalizer",
      `add finalizer ${finalizer} to Service ${service.namespace}/${service.name}`,
    )
  ) {
    return true;
  }
  return await updateObject<V1Service>(target.kube, servicePath(service), (current) => {
    const finalizers = current.metadata?.finalizers ?? [];
    return finalizers.includes(finalizer) ? undefined : { metadata: { finalizers: [...finalizers, finalizer] } };
  });
}

/** Removes `finalizer` when present; false when there was nothing to do or the Service is gone. */
export async function removeServiceFinalizer(
  target: KubeWriteTarget,
  service: ServiceName,
  finalizer: string,
): Promise<boolean> {
  if (
    described(
      target,
      service,
      "remove_finalizer",
      `remove finalizer ${finalizer} from Service ${service.namespace}/${service.name}`,
    )
  ) return true;
  return await updateObject<V1Service>(target.kube, servicePath(service), (current) => {
    const finalizers = current.metadata?.finalizers ?? [];
    return finalizers.includes(finalizer)
      ? { metadata: { finalizers: finalizers.filter((f) => f !== finalizer) } }
      : undefined;
  });
}

/** Sets `status.loadBalancer.ingress` (null clears it). A Service that is gone is ignored. */
export async function writeServiceIngress(
  target: KubeWriteTarget,
  service: ServiceName,
  ingress: { ip: string }[] | null,
): Promise<void> {
  const text = ingress ? ingress.map((i) => i.ip).join(", ") || "(none)" : "(cleared)";
  if (
    described(
      target,
      service,
      "write_status",
      `set the status of Service ${service.namespace}/${service.name} to ${text}`,
    )
  ) {
    return;
  }
  try {
    await target.kube.request("PATCH", servicePath(service, "status"), {
      patch: "merge",
      body: { status: { loadBalancer: { ingress } } },
    });
  } catch (cause) {
    if (!isKubeError(cause, "not_found")) throw cause;
  }
}

/** Records in the Service's `ccm.ankra.cloud/edge` annotation which edge holds its members (null removes it). */
export async function recordServiceEdge(
  target: KubeWriteTarget,
  service: ServiceName,
  edgeId: string | null,
): Promise<void> {
  if (
    described(
      target,
      service,
      "annotate",
      `${
        edgeId ? `record edge ${edgeId} in` : "remove the edge record from"
      } Service ${service.namespace}/${service.name}`,
    )
  ) return;
  try {
    await target.kube.request("PATCH", servicePath(service), {
      patch: "merge",
      body: { metadata: { annotations: { [EDGE_IN_USE_ANNOTATION]: edgeId } } },
    });
  } catch (cause) {
    if (!isKubeError(cause, "not_found")) throw cause;
  }
}
