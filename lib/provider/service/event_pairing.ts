/**
 * The framework's `EnsuringLoadBalancer` and `EnsuredLoadBalancer` events always come as a pair, whatever
 * interleaves: a pass over a Service and the provisioning tracker may both see the load balancer's address first, and
 * a pass may fail between the two. The rule, as a pure function over "is an Ensuring open for this Service": an
 * Ensuring is recorded only when none is open (and opens one), an Ensured only to close an open one; every other
 * event is recorded as planned.
 *
 * @module
 */
import type { PlannedEvent } from "./load_balancer_plan.ts";

/** The events to record now and whether an `EnsuringLoadBalancer` stays open afterwards. */
interface PairedEvents {
  /** Events to record, in order. */
  record: PlannedEvent[];
  /** True when an `EnsuringLoadBalancer` has no `EnsuredLoadBalancer` yet after these. */
  open: boolean;
}

/**
 * Of `events`, those planned for `when`, kept paired given whether an Ensuring is `open`.
 *
 * @example
 * ```ts
 * const ensured = { when: "after", type: "Normal", reason: "EnsuredLoadBalancer", message: "Ensured load balancer" };
 * pairEvents([ensured], "after", false); // { record: [], open: false }: nothing to close
 * ```
 */
export function pairEvents(events: PlannedEvent[], when: PlannedEvent["when"], open: boolean): PairedEvents {
  const record: PlannedEvent[] = [];
  for (const event of events) {
    if (event.when !== when) continue;
    if (event.reason === "EnsuringLoadBalancer") {
      if (open) continue;
      open = true;
    } else if (event.reason === "EnsuredLoadBalancer") {
      if (!open) continue;
      open = false;
    }
    record.push(event);
  }
  return { record, open };
}
