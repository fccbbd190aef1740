/**
 * The edge steps of a pass over a Service with `load-balancer.ankra.cloud/edge`: its members live on a combined edge
 * beside everyone else's. **Find** reads the edge afresh ({@linkcode ServiceEdge.find}; nothing about it is cached),
 * {@linkcode planEdge} **plans** the member update and the events, and **apply** ({@linkcode ServiceEdge.apply})
 * records the edge in use in the annotation `ccm.ankra.cloud/edge`, sends the update, retires a dedicated load balancer
 * the Service had before and writes the status. Leaving an edge is `edge_membership.ts`.
 *
 * @module
 */
import { ANNOTATION_PREFIX } from "../../ankra_names.ts";
import type { AnkraCloudClient, Edge } from "../../cloud/client.ts";
import { isNotFound } from "../../cloud/errors.ts";
import type { ServiceWriter } from "../../kube/service_writes.ts";
import * as log from "../../log.ts";
import type { EdgePlan } from "../../provider/service/edge_plan.ts";
import { FINALIZER, type LoadBalancerIntent } from "../../provider/service/service_plan.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";
import type { CloudCallSender } from "../cloud_call_executor.ts";
import type { PassReport } from "./pass_report.ts";
import type { ServiceCleanup } from "./service_cleanup.ts";

/** What the edge steps use. */
interface ServiceEdgeOptions {
  /** Reads edges. */
  cloud: Pick<AnkraCloudClient, "getEdge">;
  /** Sends (or, in a dry run, describes) the calls. */
  send: CloudCallSender;
  /** Where the Service's writes go. */
  writes: ServiceWriter;
  /** Retires the Service's dedicated load balancer, if it has one. */
  cleanup: Pick<ServiceCleanup, "retireDedicated">;
}

/** A planned pass over a Service's members on an edge. */
export interface PlannedEdge {
  /** The edge's id. */
  edgeId: string;
  /** The member update, status and events ({@linkcode planEdge}), when the edge can hold the Service. */
  plan: Extract<EdgePlan, { ok: true }>;
  /** True when the annotation does not name this edge yet: it is recorded before anything is sent. */
  recordChanges: boolean;
}

/** The edge steps. */
export class ServiceEdge {
  readonly #cloud: ServiceEdgeOptions["cloud"];
  readonly #send: CloudCallSender;
  readonly #writes: ServiceWriter;
  readonly #cleanup: ServiceEdgeOptions["cleanup"];

  /** Keeps only what it uses: the edge is read afresh on every pass, nothing about it is cached here. */
  constructor(options: ServiceEdgeOptions) {
    this.#cloud = options.cloud;
    this.#send = options.send;
    this.#writes = options.writes;
    this.#cleanup = options.cleanup;
  }

  /** Find: the edge `edgeId` as it is now; the Service waits for the user when the account has none. */
  async find(edgeId: string): Promise<Edge> {
    try {
      return await this.#cloud.getEdge(edgeId);
    } catch (cause) {
      if (isNotFound(cause)) {
        throw new WaitingForUser(
          "SyncLoadBalancerFailed",
          `edge ${edgeId} (${ANNOTATION_PREFIX}edge) does not exist in the account`,
        );
      }
      throw cause;
    }
  }

  /**
   * Apply: the finalizer and the edge record first (before anything is sent), the member update, the retirement of a
   * dedicated load balancer the Service had, the status; the plan's events go into `report` around them.
   */
  async apply(report: PassReport, intent: LoadBalancerIntent, planned: PlannedEdge): Promise<void> {
    const { edgeId, plan, recordChanges } = planned;
    const service = report.service;
    report.planned(plan.events, "before");
    if (plan.calls.length > 0 || plan.ingress || recordChanges) {
      await this.#writes.setFinalizer(service, FINALIZER, true);
    }
    if (recordChanges) await this.#writes.recordEdge(service, edgeId);
    await this.#send(intent.key, plan.calls);
    if (plan.calls.length > 0 && !this.#writes.dryRun) {
      log.info(1, "updated edge members", { edge: edgeId, service: intent.key });
    }
    await this.#cleanup.retireDedicated(report, {
      key: intent.key,
      labels: intent.labels,
      name: intent.loadBalancerName,
    });
    if (plan.ingress) await this.#writes.writeIngress(service, plan.ingress);
    report.planned(plan.events, "after");
  }
}
