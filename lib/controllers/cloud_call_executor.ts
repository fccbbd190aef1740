/**
 * Sends a plan's Ankra Cloud calls in order, resolving references to what earlier calls of the same plan made (the
 * new load balancer, backends by name), and keeps the load balancer's full document in step with every answer, so
 * the next pass needs no read. A 404 on a delete counts as done. In a dry run nothing is sent: each call is described
 * in the {@linkcode DryRunReport} instead.
 *
 * @module
 */
import type { AnkraCloudClient, Backend, LoadBalancer } from "../cloud/client.ts";
import { CloudApiError, isNotFound } from "../cloud/errors.ts";
import type { BackendRef, CloudCall, LoadBalancerRef } from "../provider/service/cloud_calls.ts";
import { describeCall } from "../provider/service/cloud_calls.ts";
import type { DryRunReport } from "../runtime/dry_run.ts";

/** What the calls left behind. */
interface CallsResult {
  /** The load balancer after the calls (the created one, or the current one with every change applied). */
  loadBalancer?: LoadBalancer;
  /** True when the plan created the load balancer. */
  created: boolean;
  /** Calls made before the result, counted as each starts; 0 in a dry run, where nothing is sent. */
  sent: number;
}

/** Options of {@linkcode applyCloudCalls}. */
interface ApplyOptions {
  /** The load balancer the calls change (full document), when it exists. */
  current?: LoadBalancer;
  /** In a dry run: where the calls are described instead of sent. */
  dryRun?: DryRunReport;
  /** Controller and object, for the dry-run report. */
  owner?: { controller: string; object: string };
  /** Aborts the call in flight and skips the rest; calls already made are not undone. */
  signal?: AbortSignal;
  /** Called as soon as the plan's `create_load_balancer` succeeded (before the calls that follow it). */
  onCreated?: (lb: LoadBalancer) => void;
}

/** The client operations the calls use (the whole client in production; a recorder in unit tests). */
export type CloudCallTarget = Pick<
  AnkraCloudClient,
  | "createLoadBalancer"
  | "updateLoadBalancer"
  | "deleteLoadBalancer"
  | "createBackend"
  | "updateBackend"
  | "deleteBackend"
  | "replaceMembers"
  | "createFrontend"
  | "deleteFrontend"
  | "updateEdge"
>;

function ignoreNotFound(cause: unknown): void {
  if (!isNotFound(cause)) throw cause;
}

/** Sends `calls` in order; see the module documentation. */
export async function applyCloudCalls(
  cloud: CloudCallTarget,
  calls: CloudCall[],
  options: ApplyOptions = {},
): Promise<CallsResult> {
  if (options.dryRun) {
    for (const call of calls) {
      options.dryRun.would({
        controller: options.owner?.controller ?? "service",
        object: options.owner?.object ?? "",
        action: call.operation,
        detail: describeCall(call),
      });
    }
    return { loadBalancer: options.current, created: false, sent: 0 };
  }
  const signal = options.signal;
  let lb: LoadBalancer | undefined = options.current
    ? { ...options.current, frontends: [...options.current.frontends], backends: [...options.current.backends] }
    : undefined;
  let created = false;
  let sent = 0;
  const lbId = (ref: LoadBalancerRef): string => {
    if ("id" in ref) return ref.id;
    if (!lb) throw new Error("internal: a call refers to a load balancer the plan did not create");
    return lb.id;
  };
  const backendId = (ref: BackendRef): string => {
    if ("id" in ref) return ref.id;
    const backend = lb?.backends.find((b) => b.name === ref.createdName);
    if (!backend) throw new Error(`internal: backend ${ref.createdName} was not created before its use`);
    return backend.id;
  };
  const putBackend = (backend: Backend) => {
    if (lb) lb.backends = [...lb.backends.filter((b) => b.id !== backend.id), backend];
  };
  for (const call of calls) {
    sent++;
    switch (call.operation) {
      case "create_load_balancer":
        lb = (await cloud.createLoadBalancer(call.body, signal)).loadBalancer;
        lb = { ...lb, frontends: [...lb.frontends], backends: [...lb.backends] };
        created = true;
        // Known before anything else can fail: a later failure must not lead to a second load balancer.
        options.onCreated?.(lb);
        break;
      case "update_load_balancer":
        lb = { ...(await cloud.updateLoadBalancer(lbId(call.loadBalancer), call.body, signal)), ...pick(lb) };
        break;
      case "delete_load_balancer":
        await cloud.deleteLoadBalancer(lbId(call.loadBalancer), signal).catch(ignoreNotFound);
        if (lb) lb = { ...lb, state: "deleting" };
        break;
      case "create_load_balancer_backend":
        putBackend(await cloud.createBackend(lbId(call.loadBalancer), call.body, signal));
        break;
      case "update_load_balancer_backend":
        putBackend(await cloud.updateBackend(lbId(call.loadBalancer), backendId(call.backend), call.body, signal));
        break;
      case "delete_load_balancer_backend": {
        const id = backendId(call.backend);
        await cloud.deleteBackend(lbId(call.loadBalancer), id, signal).catch(ignoreNotFound);
        if (lb) lb.backends = lb.backends.filter((b) => b.id !== id);
        break;
      }
      case "replace_load_balancer_members": {
        const id = backendId(call.backend);
        const members = await cloud.replaceMembers(lbId(call.loadBalancer), id, call.body.members, signal);
        const backend = lb?.backends.find((b) => b.id === id);
        if (backend) putBackend({ ...backend, members });
        break;
      }
      case "create_load_balancer_frontend": {
        const frontend = await cloud.createFrontend(
          lbId(call.loadBalancer),
          { ...call.body, backend_id: backendId(call.backend) },
          signal,
        );
        if (lb) lb.frontends = [...lb.frontends, frontend];
        break;
      }
      case "delete_load_balancer_frontend":
        await cloud.deleteFrontend(lbId(call.loadBalancer), call.frontendId, signal).catch(ignoreNotFound);
        if (lb) lb.frontends = lb.frontends.filter((f) => f.id !== call.frontendId);
        break;
      case "update_edge":
        await cloud.updateEdge(call.edgeId, call.body, signal);
        break;
    }
  }
  return { loadBalancer: lb, created, sent };
}

/** The listener parts of a document (an `update_load_balancer` answer carries them too, but may omit them). */
function pick(lb: LoadBalancer | undefined): Partial<LoadBalancer> {
  return lb ? { frontends: lb.frontends, backends: lb.backends } : {};
}

/** Sends one object's calls for a controller whose client and dry run are bound once ({@linkcode cloudCallSender}). */
export type CloudCallSender = (
  object: string,
  calls: CloudCall[],
  options?: Omit<ApplyOptions, "dryRun" | "owner">,
) => Promise<CallsResult>;

/** Binds {@linkcode applyCloudCalls} to a client, a controller name and the dry run, so each use names only its calls. */
export function cloudCallSender(
  cloud: CloudCallTarget,
  options: { controller: string; dryRun?: DryRunReport },
): CloudCallSender {
  return (object, calls, more = {}) =>
    applyCloudCalls(cloud, calls, {
      ...more,
      dryRun: options.dryRun,
      owner: { controller: options.controller, object },
    });
}

/**
 * True when the API refused a request as invalid (HTTP 400, or 422 other than an exceeded quota or a reused
 * idempotency key): sending it again changes nothing until the user changes the Service, its nodes or the account.
 */
export function refusedAsInvalid(cause: unknown): cause is CloudApiError {
  return cause instanceof CloudApiError && (cause.kind === "bad_request" || cause.kind === "unprocessable");
}
