/**
 * The edge steps of the service controller: a Service with `load-balancer.ankra.cloud/edge` keeps its members on a
 * combined edge beside everyone else's ({@linkcode planEdge} decides), the edge in use is recorded in the annotation
 * `ccm.ankra.cloud/edge`, a dedicated load balancer the Service had before is retired, and leaving an edge removes
 * the Service's members from it.
 *
 * @module
 */
import type { AnkraCloudClient } from "../cloud/client.ts";
import { isNotFound } from "../cloud/errors.ts";
import { isAnkraId } from "../cloud/ids.ts";
import type { KubeWriteTarget } from "../kube/object_writes.ts";
import { recordServiceEdge, setServiceFinalizer, writeServiceIngress } from "../kube/service_writes.ts";
import { EDGE_IN_USE_ANNOTATION, type SlimService } from "../kube/slim.ts";
import * as log from "../log.ts";
import { edgeMembersWithout, planEdge } from "../provider/edge_plan.ts";
import { edgeMemberPrefix } from "../provider/load_balancer_names.ts";
import { FINALIZER, type ServiceIntent } from "../provider/service_plan.ts";
import { WaitingForUser } from "../runtime/waiting_for_user.ts";
import type { CloudCallSender } from "./cloud_call_executor.ts";
import type { ServiceReporter } from "./service_reporter.ts";

/** What the edge steps use. */
export interface ServiceEdgeOptions {
  /** Reads edges. */
  cloud: Pick<AnkraCloudClient, "getEdge">;
  /** Sends (or, in a dry run, describes) the calls. */
  send: CloudCallSender;
  /** Where Kubernetes writes go. */
  writes: KubeWriteTarget;
  /** The Service's events. */
  reporter: ServiceReporter;
  /** `--cluster-name`. */
  clusterName: string;
  /** Retires the Service's dedicated load balancer, if it has one. */
  retireDedicated(service: SlimService, intent: ServiceIntent): Promise<unknown>;
  /** Look again after this long once served (the drift check). */
  driftCheckMs: number;
  /** Look again after this long while the edge has no address. */
  provisioningPollMs: number;
}

/** The edge steps. */
export class ServiceEdge {
  readonly #o: ServiceEdgeOptions;

  /** Creates the steps. */
  constructor(options: ServiceEdgeOptions) {
    this.#o = options;
  }

  /** One pass over a Service on edge `edgeId`; `served` when the edge serves the Service's address. */
  async ensure(
    service: SlimService,
    intent: ServiceIntent,
    target: { edgeId: string; ipMode?: "Proxy" | "VIP" },
  ): Promise<{ requeueAfterMs: number; served: boolean }> {
    const { edgeId } = target;
    const o = this.#o;
    let edge;
    try {
      edge = await o.cloud.getEdge(edgeId);
    } catch (cause) {
      if (isNotFound(cause)) {
        throw new WaitingForUser(
          "SyncLoadBalancerFailed",
          `edge ${edgeId} (load-balancer.ankra.cloud/edge) does not exist in the account`,
        );
      }
      throw cause;
    }
    const recordChanges = service.annotations[EDGE_IN_USE_ANNOTATION] !== edgeId;
    const plan = planEdge(edge, intent, {
      currentIngress: service.ingress,
      ensuringOpen: o.reporter.ensuringOpen(service),
      recordChanges,
      ipMode: target.ipMode,
    });
    if (!plan.ok) throw new WaitingForUser("SyncLoadBalancerFailed", plan.problem);
    o.reporter.planned(service, plan.events, "before");
    if (plan.calls.length > 0 || plan.ingress || recordChanges) {
      await setServiceFinalizer(o.writes, service, FINALIZER, true);
    }
    if (recordChanges) await recordServiceEdge(o.writes, service, edgeId);
    await o.send(intent.key, plan.calls);
    if (plan.calls.length > 0 && !o.writes.dryRun) {
      log.info(1, "updated edge members", { edge: edgeId, service: intent.key });
    }
    await o.retireDedicated(service, intent);
    if (plan.ingress) await writeServiceIngress(o.writes, service, plan.ingress);
    o.reporter.planned(service, plan.events, "after");
    return { requeueAfterMs: plan.served ? o.driftCheckMs : o.provisioningPollMs, served: plan.served };
  }

  /**
   * Removes the Service's members from an edge it no longer uses, then forgets that edge. A recorded edge that is not
   * an Ankra Cloud id (the annotation was edited by hand) cannot hold members of ours: it is forgotten, unasked.
   */
  async leave(service: SlimService, edgeId: string): Promise<void> {
    const key = `${service.namespace}/${service.name}`;
    if (isAnkraId(edgeId)) await this.#removeMembers(service, key, edgeId);
    else {
      log.warn("the Service's recorded edge is not an Ankra Cloud id; it is forgotten without a request", {
        service: key,
        annotation: EDGE_IN_USE_ANNOTATION,
      });
    }
    if (!service.deletionTimestamp) await recordServiceEdge(this.#o.writes, service, null);
  }

  async #removeMembers(service: SlimService, key: string, edgeId: string): Promise<void> {
    const o = this.#o;
    try {
      const edge = await o.cloud.getEdge(edgeId);
      const rest = edgeMembersWithout(edge, edgeMemberPrefix(o.clusterName, service.namespace, service.name));
      if (rest) {
        await o.send(key, [{ operation: "update_edge", edgeId, body: { members: rest } }]);
        if (!o.writes.dryRun) {
          log.info(1, "removed the Service's members from its former edge", { service: key, edge: edgeId });
        }
      }
    } catch (cause) {
      if (!isNotFound(cause)) throw cause;
    }
  }
}
