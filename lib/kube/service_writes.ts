/**
 * Every write the service controller makes to a Service, in one place: the cleanup finalizer (added before any cloud
 * create, removed once the load balancer is gone), the status ingress, the `load-balancer.ankra.cloud/Ready` status
 * condition (a strategic merge patch: the other conditions stay), and the annotation recording which edge holds the
 * Service's members. Finalizer changes carry the resourceVersion and retry on conflict; the status is a merge
 * patch of the status subresource; a Service that is gone is not an error. In a dry run each write is described in
 * the report instead of being sent.
 *
 * @module
 */
import { EDGE_IN_USE_ANNOTATION, READY_CONDITION_TYPE, SHARE_IN_USE_ANNOTATION } from "../ankra_names.ts";
import type { V1Service } from "@kubernetes/client-node";
import { isKubeError } from "./errors.ts";
import { describedInDryRun, type KubeWriteTarget, updateObject } from "./object_writes.ts";
import { objectKey } from "./object_key.ts";
import { type SlimCondition } from "./slim.ts";

function described(target: KubeWriteTarget, service: ServiceName, action: string, detail: string): boolean {
  return describedInDryRun(target, {
    controller: "service",
    object: objectKey(service),
    action,
    detail,
  });
}

/** A Service, by namespace and name. */
export interface ServiceName {
  /** URL-encoded into the Service's API path ({@linkcode servicePath}). */
  namespace: string;
  /** URL-encoded into the Service's API path ({@linkcode servicePath}). */
  name: string;
}

/** The API path of a Service (or its status subresource). */
function servicePath(service: ServiceName, subresource?: "status"): string {
  const base = `/api/v1/namespaces/${encodeURIComponent(service.namespace)}/services/${
    encodeURIComponent(service.name)
  }`;
  return subresource ? `${base}/${subresource}` : base;
}

/**
 * Adds `finalizer` (`present`) unless the Service has it, or removes it; false when there was nothing to do or the
 * Service is gone.
 */
async function setServiceFinalizer(
  target: KubeWriteTarget,
  service: ServiceName,
  finalizer: string,
  present: boolean,
): Promise<boolean> {
  const name = objectKey(service);
  const detail = present
    ? `add finalizer ${finalizer} to Service ${name}`
    : `remove finalizer ${finalizer} from Service ${name}`;
  if (described(target, service, present ? "add_finalizer" : "remove_finalizer", detail)) return true;
  return await updateObject<V1Service>(target.kube, servicePath(service), (current) => {
    const finalizers = current.metadata?.finalizers ?? [];
    if (finalizers.includes(finalizer) === present) return undefined;
    return {
      metadata: { finalizers: present ? [...finalizers, finalizer] : finalizers.filter((f) => f !== finalizer) },
    };
  });
}

/** Sets `status.loadBalancer.ingress` (null clears it). A Service that is gone is ignored. */
async function writeServiceIngress(
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
      `set the status of Service ${objectKey(service)} to ${text}`,
    )
  ) {
    return;
  }
  try {
    await target.kube.send("PATCH", servicePath(service, "status"), {
      patch: "merge",
      body: { status: { loadBalancer: { ingress } } },
    });
  } catch (cause) {
    if (!isKubeError(cause, "not_found")) throw cause;
  }
}

/**
 * Sets this controller's condition in `status.conditions` (merged by type: other conditions stay), or removes it
 * (`null`). A Service that is gone is ignored.
 */
async function writeServiceCondition(
  target: KubeWriteTarget,
  service: ServiceName,
  condition: SlimCondition | null,
): Promise<void> {
  const text = condition
    ? `${condition.type}=${condition.status} (${condition.reason})`
    : `no ${READY_CONDITION_TYPE} condition`;
  if (described(target, service, "write_condition", `set Service ${objectKey(service)} ${text}`)) return;
  const body = condition ?? { type: READY_CONDITION_TYPE, $patch: "delete" };
  try {
    await target.kube.send("PATCH", servicePath(service, "status"), {
      patch: "strategic",
      body: { status: { conditions: [body] } },
    });
  } catch (cause) {
    if (!isKubeError(cause, "not_found")) throw cause;
  }
}

/** Records in the Service's `ccm.ankra.cloud/edge` annotation which edge holds its members (null removes it). */
async function recordServiceEdge(
  target: KubeWriteTarget,
  service: ServiceName,
  edgeId: string | null,
): Promise<void> {
  if (
    described(
      target,
      service,
      "annotate",
      `${edgeId ? `record edge ${edgeId} in` : "remove the edge record from"} Service ${objectKey(service)}`,
    )
  ) return;
  try {
    await target.kube.send("PATCH", servicePath(service), {
      patch: "merge",
      body: { metadata: { annotations: { [EDGE_IN_USE_ANNOTATION]: edgeId } } },
    });
  } catch (cause) {
    if (!isKubeError(cause, "not_found")) throw cause;
  }
}

/**
 * Records in the Service's `ccm.ankra.cloud/share` annotation the share key of the load balancer holding its
 * listeners (null removes it): the group it must leave when its `load-balancer.ankra.cloud/share` changes or goes.
 */
async function recordServiceShare(
  target: KubeWriteTarget,
  service: ServiceName,
  shareKey: string | null,
): Promise<void> {
  const detail = `${shareKey ? `record share ${shareKey} in` : "remove the share record from"} Service ${
    objectKey(service)
  }`;
  if (described(target, service, "annotate", detail)) return;
  try {
    await target.kube.send("PATCH", servicePath(service), {
      patch: "merge",
      body: { metadata: { annotations: { [SHARE_IN_USE_ANNOTATION]: shareKey } } },
    });
  } catch (cause) {
    if (!isKubeError(cause, "not_found")) throw cause;
  }
}

/**
 * Every write the service controller makes to Services, as the one interface it is handed: {@linkcode serviceWriter}
 * builds it over the API server (or a dry run's report); tests hand a plain object that records the writes.
 */
export interface ServiceWriter {
  /** True in a dry run: writes are described in the report and nothing is sent. */
  readonly dryRun: boolean;
  /** Adds (`present`) or removes `finalizer`; false when there was nothing to do or the Service is gone. */
  setFinalizer(service: ServiceName, finalizer: string, present: boolean): Promise<boolean>;
  /** Sets `status.loadBalancer.ingress` (null clears it). */
  writeIngress(service: ServiceName, ingress: { ip: string; ipMode?: string }[] | null): Promise<void>;
  /** Sets or removes (null) this controller's status condition. */
  writeCondition(service: ServiceName, condition: SlimCondition | null): Promise<void>;
  /** Records (or, with null, forgets) the edge holding the Service's members. */
  recordEdge(service: ServiceName, edgeId: string | null): Promise<void>;
  /** Records (or, with null, forgets) the share key of the load balancer holding the Service's listeners. */
  recordShare(service: ServiceName, shareKey: string | null): Promise<void>;
}

/** The {@linkcode ServiceWriter} over `target` (the API server, or in a dry run the report). */
export function serviceWriter(target: KubeWriteTarget): ServiceWriter {
  return {
    dryRun: target.dryRun !== undefined,
    setFinalizer: (service, finalizer, present) => setServiceFinalizer(target, service, finalizer, present),
    writeIngress: (service, ingress) => writeServiceIngress(target, service, ingress),
    writeCondition: (service, condition) => writeServiceCondition(target, service, condition),
    recordEdge: (service, edgeId) => recordServiceEdge(target, service, edgeId),
    recordShare: (service, shareKey) => recordServiceShare(target, service, shareKey),
  };
}
