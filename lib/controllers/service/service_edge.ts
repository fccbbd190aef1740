/**
 * The edge steps of the service controller: a Service with `load-balancer.ankra.cloud/edge` keeps its members on a
 * combined edge beside everyone else's ({@linkcode planEdge} decides), the edge in use is recorded in the annotation
 * `ccm.ankra.cloud/edge`, a dedicated load balancer the Service had before is retired, and leaving an edge removes
 * the Service's members from it (`edge_membership.ts`).
 *
 * @module
 */
import type { AnkraCloudClient } from "../../cloud/client.ts";
import { isNotFound } from "../../cloud/errors.ts";
import type { ServiceWriter } from "../../kube/service_writes.ts";
import { EDGE_IN_USE_ANNOTATION, type SlimService } from "../../kube/slim.ts";
import * as log from "../../log.ts";
import { planEdge } from "../../provider/service/edge_plan.ts";
import { FINALIZER, type ServiceIntent } from "../../provider/service/service_plan.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";
import type { IngressStyle } from "../../provider/service/service_ingress.ts";
import type { CloudCallSender } from "../cloud_call_executor.ts";
import type { ServiceCleanup } from "./service_cleanup.ts";
import type { ServiceReporter } from "./service_reporter.ts";

/** What the edge steps use. */
export interface ServiceEdgeOptions {
  /** Reads edges. */
  cloud: Pick<AnkraCloudClient, "getEdge">;
  /** Sends (or, in a dry run, describes) the calls. */
  send: CloudCallSender;
  /** Where the Service's writes go. */
  writes: ServiceWriter;
  /** The Service's events. */
  reporter: ServiceReporter;
  /** Retires the Service's dedicated load balancer, if it has one. */
  cleanup: Pick<ServiceCleanup, "retireDedicated">;
  /** Look again after this long once served (the drift check). */
  driftCheckMs: number;
  /** Look again after this long while the edge has no address. */
  provisioningPollMs: number;
}

/** The edge steps. */
export class ServiceEdge {
  readonly #o: ServiceEdgeOptions;

  /** Keeps only `options`: the edge is read afresh on every pass, nothing about it is cached here. */
  constructor(options: ServiceEdgeOptions) {
    this.#o = options;
  }

  /** One pass over a Service on edge `edgeId`; `served` when the edge serves the Service's address. */
  async ensure(
    service: SlimService,
    intent: ServiceIntent,
    target: { edgeId: string; ingressStyle?: IngressStyle },
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
      ingressStyle: target.ingressStyle,
    });
    if (!plan.ok) throw new WaitingForUser("SyncLoadBalancerFailed", plan.problem);
    o.reporter.planned(service, plan.events, "before");
    if (plan.calls.length > 0 || plan.ingress || recordChanges) {
      await o.writes.setFinalizer(service, FINALIZER, true);
    }
    if (recordChanges) await o.writes.recordEdge(service, edgeId);
    await o.send(intent.key, plan.calls);
    if (plan.calls.length > 0 && !o.writes.dryRun) {
      log.info(1, "updated edge members", { edge: edgeId, service: intent.key });
    }
    await o.cleanup.retireDedicated(service, {
      key: intent.key,
      labels: intent.labels,
      name: intent.loadBalancerName,
    });
    if (plan.ingress) await o.writes.writeIngress(service, plan.ingress);
    o.reporter.planned(service, plan.events, "after");
    return { requeueAfterMs: plan.served ? o.driftCheckMs : o.provisioningPollMs, served: plan.served };
  }
}
