/**
 * How a Service is served, once its mode is decided (`service_decision.ts`): one of two implementations with the same
 * shape — {@linkcode LoadBalancerServing} (an Ankra load balancer, an edge, or a share group's load balancer: move →
 * find → plan → apply) and {@linkcode NodeAddressServing} (its nodes' own public addresses, no Ankra write) — as k3s
 * serves ServiceLB as one implementation of the cloud provider's load balancer interface. Each owns what it keeps
 * between passes (drains, what it published) and forgets it when the Service goes or is served the other way.
 *
 * @module
 */
import type { ServiceIntent } from "../../provider/service/service_plan.ts";
import type { IngressStyle } from "../../provider/service/service_ingress.ts";
import type { ReconcileResult } from "../../runtime/work_queue.ts";
import type { PassReport } from "./pass_report.ts";

/** One way of serving a Service: steps 2–5 of a pass (move, find, plan, apply). */
export interface ServingStrategy<I extends ServiceIntent> {
  /**
   * Serves the Service of `report` as `intent` asks, its ingress written in `style`; the next look. The events, the
   * notices and the Ready state go into `report`; a refusal throws `WaitingForUser`.
   */
  ensure(report: PassReport, intent: I, style: IngressStyle): Promise<ReconcileResult>;
  /** Forgets what it keeps of the Service `key` (gone, or served the other way now). */
  forget(key: string): void;
}
