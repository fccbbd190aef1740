/**
 * The writes of a pass over a Service's dedicated (or shared) load balancer, in one place. **Apply** a plan
 * ({@linkcode ServiceApply.apply}): the cleanup finalizer (before any cloud call), the calls, the status — with the
 * plan's events before and after them going into the pass's report — and what the pass found for the Ready condition;
 * a load balancer still provisioning is handed to the tracker once the pass is told. **Served**
 * ({@linkcode ServiceApply.served}): the tracker saw the load balancer get its address, so the status is written now,
 * outside the work queue.
 *
 * @module
 */
import type { LoadBalancer } from "../../cloud/client.ts";
import { CloudApiError } from "../../cloud/errors.ts";
import type { ServiceWriter } from "../../kube/service_writes.ts";
import * as log from "../../log.ts";
import { type LoadBalancerPlan, planServed, singleNodeMessage } from "../../provider/service/load_balancer_plan.ts";
import { loadBalancerKeyOf } from "../../provider/service/load_balancer_sharing.ts";
import { notReady, servingState } from "../../provider/service/ready_condition.ts";
import type { IngressStyle } from "../../provider/service/service_ingress.ts";
import { FINALIZER, type LoadBalancerIntent } from "../../provider/service/service_plan.ts";
import type { ReconcileResult } from "../../runtime/work_queue.ts";
import { DEFAULTS } from "../../defaults.ts";
import type { CloudCallSender } from "../cloud_call_executor.ts";
import type { LoadBalancerDirectory } from "./load_balancer_directory.ts";
import type { Placement } from "./load_balancer_placement.ts";
import type { PassReport } from "./pass_report.ts";

/** What the apply step works on: the plan, and the load balancer it changes or the placement of a new one. */
export interface PlannedPass {
  /** The calls, status and events ({@linkcode planLoadBalancer}). */
  plan: LoadBalancerPlan;
  /** The load balancer the calls change, when it exists. */
  current?: LoadBalancer;
  /** Where a new one goes, when the plan creates it. */
  placement?: Placement;
}

/** What the apply step uses. */
interface ServiceApplyOptions {
  /** Where the Service's writes go. */
  writes: ServiceWriter;
  /** Which load balancer is each Service's. */
  directory: LoadBalancerDirectory;
  /** Sends the planned calls (describes them in a dry run). */
  send: CloudCallSender;
  /** Drift-check period: the next look at a served Service. */
  driftCheckMs: number;
  /** True in a dry run. */
  dryRun: boolean;
}

/** Applies plans, and writes a served address. */
export class ServiceApply {
  readonly #writes: ServiceWriter;
  readonly #directory: LoadBalancerDirectory;
  readonly #send: CloudCallSender;
  readonly #driftCheckMs: number;
  readonly #dryRun: boolean;

  /** Keeps what it uses; the directory in it is shared with the other steps (`service_steps.ts`). */
  constructor(options: ServiceApplyOptions) {
    this.#writes = options.writes;
    this.#directory = options.directory;
    this.#send = options.send;
    this.#driftCheckMs = options.driftCheckMs;
    this.#dryRun = options.dryRun;
  }

  /** Applies one pass's plan; the next look. The Ready state and a load balancer to track go into `report`. */
  async apply(report: PassReport, intent: LoadBalancerIntent, pass: PlannedPass): Promise<ReconcileResult> {
    const { plan, placement } = pass;
    const service = report.service;
    report.planned(plan.events, "before");
    if (plan.calls.length > 0 || plan.ingress) await this.#writes.setFinalizer(service, FINALIZER, true);
    let result;
    try {
      result = await this.#send(intent.key, plan.calls, {
        current: pass.current,
        onCreated: (lb) => this.#directory.remember(intent.loadBalancerKey, lb, { document: "none" }),
      });
    } catch (cause) {
      // Whatever failed (a 404 above all), the next pass reads the real load balancer; a create of the load balancer
      // whose outcome is unknown (its answer unreadable or lost, a 5xx: it may exist) is looked up by the API's label
      // filter before another is made.
      this.#directory.invalidate(intent.loadBalancerKey);
      if (cause instanceof CloudApiError && cause.outcomeUnknown && cause.operation === "create_load_balancer") {
        this.#directory.markUncertain(intent.loadBalancerKey);
      }
      throw report.failed(plan.membersOnly ? "update" : "ensure", cause);
    }
    const lb = result.loadBalancer;
    if (lb && !this.#dryRun) this.#directory.remember(intent.loadBalancerKey, lb, { document: "written" });
    if (result.created && lb && placement) {
      log.info(0, "created load balancer", {
        service: intent.key,
        loadBalancer: lb.id,
        zone: lb.zone,
        highAvailability: placement.create.high_availability !== false,
        publicIPv4: intent.settings.ipv4,
      });
      if (placement.singleReason) {
        report.event("provider", "Normal", "SingleNodeLoadBalancer", singleNodeMessage(lb.id, placement.singleReason));
      }
    }
    if (plan.ingress) await this.#writes.writeIngress(service, plan.ingress);
    report.planned(plan.events, "after");
    const id = lb?.id ?? pass.current?.id ?? "";
    const addresses = (plan.ingress ?? service.ingress).flatMap((i) => (i.ip ? [i.ip] : []));
    report.state = plan.served || (this.#dryRun && addresses.length > 0)
      ? servingState(`load balancer ${id}`, addresses)
      : notReady("Creating", `load balancer ${id || intent.loadBalancerName} is being created`);
    if (plan.served || this.#dryRun || !lb) return { requeueAfterMs: this.#driftCheckMs };
    report.track = lb.id;
    // The tracker writes the address; this is only the fallback if it never reports.
    return { requeueAfterMs: DEFAULTS.provisioningFallbackMs };
  }

  /**
   * The tracker saw the Service's load balancer get its address (`summary`): the directory learns it, the status is
   * written, and the events and the Ready state go into `report`.
   */
  async served(
    report: PassReport,
    summary: LoadBalancer,
    options: { ensuringOpen: boolean; ingressStyle: IngressStyle },
  ): Promise<void> {
    const service = report.service;
    this.#directory.update(loadBalancerKeyOf(service), summary);
    const plan = planServed(service.ingress, summary, options);
    if (plan.ingress) await this.#writes.writeIngress(service, plan.ingress);
    report.planned(plan.events, "before");
    report.planned(plan.events, "after");
    const addresses = (plan.ingress ?? service.ingress).flatMap((i) => (i.ip ? [i.ip] : []));
    report.state = servingState(`load balancer ${summary.id}`, addresses);
  }
}
