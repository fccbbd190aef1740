/**
 * Step 6 of a pass over a Service's dedicated load balancer: apply the plan — the events before, the cleanup finalizer
 * (before any cloud call), the calls, the status, the events after — and say what the pass found for the Service's
 * Ready condition. A load balancer still provisioning is handed to the tracker, which writes its address when it runs.
 *
 * @module
 */
import type { LoadBalancer } from "../../cloud/client.ts";
import { CloudApiError } from "../../cloud/errors.ts";
import type { ServiceWriter } from "../../kube/service_writes.ts";
import type { SlimService } from "../../kube/slim.ts";
import * as log from "../../log.ts";
import { type LoadBalancerPlan, singleNodeMessage } from "../../provider/service/load_balancer_plan.ts";
import { notReady, type ReadyState, servingState } from "../../provider/service/ready_condition.ts";
import { FINALIZER, type ServiceIntent } from "../../provider/service/service_plan.ts";
import type { ReconcileResult } from "../../runtime/work_queue.ts";
import type { CloudCallSender } from "../cloud_call_executor.ts";
import type { LoadBalancerDirectory } from "./load_balancer_directory.ts";
import type { Placement } from "./load_balancer_placement.ts";
import type { ProvisioningTracker } from "./provisioning_tracker.ts";
import type { ServiceReporter } from "./service_reporter.ts";
import { DEFAULTS } from "../../defaults.ts";

/** What the apply step works on: the plan, and the load balancer it changes or the placement of a new one. */
export interface PlannedPass {
  plan: LoadBalancerPlan;
  current?: LoadBalancer;
  placement?: Placement;
}

/** What the apply step uses. */
export interface ServiceApplyOptions {
  /** Where the Service's writes go. */
  writes: ServiceWriter;
  /** Which load balancer is each Service's. */
  directory: LoadBalancerDirectory;
  /** Polls load balancers until they run. */
  tracker: ProvisioningTracker;
  /** Events and notices. */
  reporter: ServiceReporter;
  /** Sends the planned calls (describes them in a dry run). */
  send: CloudCallSender;
  /** Drift-check period: the next look at a served Service. */
  driftCheckMs: number;
  /** True in a dry run. */
  dryRun: boolean;
}

/** Applies plans. */
export class ServiceApply {
  readonly #o: ServiceApplyOptions;

  /** Keeps only `options`; the directory and tracker in them are shared with the other steps (`service_steps.ts`). */
  constructor(options: ServiceApplyOptions) {
    this.#o = options;
  }

  /** Applies one pass's plan; the next look and the Ready state. */
  async apply(
    service: SlimService,
    intent: ServiceIntent,
    pass: PlannedPass,
  ): Promise<{ result: ReconcileResult; state: ReadyState }> {
    const o = this.#o;
    const { plan, placement } = pass;
    o.reporter.planned(service, plan.events, "before");
    if (plan.calls.length > 0 || plan.ingress) await o.writes.setFinalizer(service, FINALIZER, true);
    let result;
    try {
      result = await o.send(intent.key, plan.calls, {
        current: pass.current,
        onCreated: (lb) => o.directory.remember(intent.loadBalancerKey, lb, { document: "none" }),
      });
    } catch (cause) {
      // Whatever failed (a 404 above all), the next pass reads the real load balancer.
      o.directory.invalidate(intent.loadBalancerKey);
      if (cause instanceof CloudApiError && cause.reason?.startsWith("idempotency_key_")) {
        o.directory.markUncertain(intent.loadBalancerKey);
      }
      throw o.reporter.failed(service, plan.membersOnly ? "update" : "ensure", cause);
    }
    const lb = result.loadBalancer;
    if (lb && !o.dryRun) o.directory.remember(intent.loadBalancerKey, lb, { document: "written" });
    if (result.created && lb && placement) {
      log.info(0, "created load balancer", {
        service: intent.key,
        loadBalancer: lb.id,
        zone: lb.zone,
        highAvailability: placement.create.high_availability !== false,
        publicIPv4: intent.settings.ipv4,
      });
      if (placement.singleReason) {
        o.reporter.provider(
          service,
          "Normal",
          "SingleNodeLoadBalancer",
          singleNodeMessage(lb.id, placement.singleReason),
        );
      }
    }
    if (plan.ingress) await o.writes.writeIngress(service, plan.ingress);
    o.reporter.planned(service, plan.events, "after");
    const id = lb?.id ?? pass.current?.id ?? "";
    const addresses = (plan.ingress ?? service.ingress).flatMap((i) => (i.ip ? [i.ip] : []));
    const state = plan.served || (o.dryRun && addresses.length > 0)
      ? servingState(`load balancer ${id}`, addresses)
      : notReady("Creating", `load balancer ${id || intent.loadBalancerName} is being created`);
    if (plan.served || o.dryRun || !lb) return { result: { requeueAfterMs: o.driftCheckMs }, state };
    o.tracker.track(lb.id, intent.key);
    // The tracker writes the address; this is only the fallback if it never reports.
    return { result: { requeueAfterMs: DEFAULTS.provisioningFallbackMs }, state };
  }
}
