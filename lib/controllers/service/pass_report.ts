/**
 * What one pass over a Service will tell its user, gathered while the pass runs and told once at its end
 * ({@linkcode ServiceReporter.tell}, then the Ready condition): the notices of what cannot be honoured, the events its
 * plans decided (`EnsuringLoadBalancer` before the calls, `EnsuredLoadBalancer` after them), the steps' own events
 * (`DeletingLoadBalancer`, `PreservedLoadBalancer`, `SingleNodeLoadBalancer`, …), the failure it ended with and the
 * state for the Ready condition. The steps record here and never call an event sink, so no event is recorded between
 * two decisions of a pass, and the order they are told in is the order the pass decided them.
 *
 * @module
 */
import type { EventType } from "../../kube/events.ts";
import type { SlimService } from "../../kube/slim.ts";
import type { PlannedEvent } from "../../provider/service/load_balancer_plan.ts";
import type { ReadyState } from "../../provider/service/ready_condition.ts";
import type { Notice } from "../../provider/service/service_plan.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";
import { refusedAsInvalid } from "../cloud_call_executor.ts";

/** What failed: the framework has one message per kind. */
type FailedPass = "ensure" | "update" | "delete";

/** Which event source tells: the framework's service controller, or this provider (`ankra-cloud-ccm`). */
type EventSource = "service" | "provider";

/** One thing a pass tells, in the order it was decided. */
type Told =
  | { kind: "notices"; notices: Notice[] }
  | { kind: "planned"; events: PlannedEvent[]; when: PlannedEvent["when"] }
  | { kind: "event"; source: EventSource; type: EventType; reason: string; message: string }
  | { kind: "failed"; failure: FailedPass; cause: unknown; thrown: unknown }
  | { kind: "forget" };

/** The event reason and message of a failed pass, as the framework words them. */
export function failureEvent(cause: unknown, kind: FailedPass): [string, string] {
  const message = cause instanceof Error ? cause.message : String(cause);
  if (cause instanceof WaitingForUser && cause.reason === "ClusterNameCollision") return [cause.reason, message];
  if (kind === "update") return ["UpdateLoadBalancerFailed", `Error updating load balancer with new hosts: ${message}`];
  return ["SyncLoadBalancerFailed", `Error syncing load balancer: failed to ${kind} load balancer: ${message}`];
}

/** The record of one pass over one Service (see the module documentation). */
export class PassReport {
  /** The Service as the pass found it in the store. */
  readonly service: SlimService;
  /** What the pass found for the Service's Ready condition, once it knows (a failure's state otherwise). */
  state?: ReadyState;
  /** A load balancer to watch until it has its address, once the pass is told (the tracker then writes it). */
  track?: string;
  readonly #told: Told[] = [];
  /** Errors this pass already recorded as its failure (a failure is recorded once, wherever it is caught). */
  readonly #failures = new WeakSet<object>();

  /** An empty record for a pass over `service`. */
  constructor(service: SlimService) {
    this.service = service;
  }

  /** What the pass tells, in order. */
  get told(): readonly Told[] {
    return this.#told;
  }

  /** Notices to tell, each once per situation (a notice without a message ends its situation). */
  notices(notices: Notice[]): void {
    this.#told.push({ kind: "notices", notices });
  }

  /** A plan's events for `when` (before or after its calls), kept paired when told. */
  planned(events: PlannedEvent[], when: PlannedEvent["when"]): void {
    this.#told.push({ kind: "planned", events, when });
  }

  /** One event of `source`. */
  event(source: EventSource, type: EventType, reason: string, message: string): void {
    this.#told.push({ kind: "event", source, type, reason, message });
  }

  /** Everything told about the Service so far is forgotten (its load balancer is gone). */
  forget(): void {
    this.#told.push({ kind: "forget" });
  }

  /**
   * Records the pass's failure (once per error) and returns what to throw: a request the API refused as invalid
   * becomes a {@linkcode WaitingForUser} (retrying it changes nothing); anything else is thrown as it is and retried
   * with backoff.
   */
  failed(failure: FailedPass, cause: unknown): unknown {
    if (typeof cause === "object" && cause !== null && this.#failures.has(cause)) return cause;
    let thrown = cause;
    if (refusedAsInvalid(cause)) {
      const [reason, message] = failureEvent(cause, failure);
      thrown = new WaitingForUser(reason, message, { cause });
    }
    this.#told.push({ kind: "failed", failure, cause, thrown });
    if (typeof thrown === "object" && thrown !== null) this.#failures.add(thrown);
    return thrown;
  }
}
