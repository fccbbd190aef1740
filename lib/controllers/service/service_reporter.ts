/**
 * What the service controller tells the user about a Service, in one place: the framework's events (source
 * `service-controller`) kept paired by {@linkcode pairEvents}, each notice of the provider (source `ankra-cloud-ccm`)
 * once per situation, and a failed pass as the framework words it — once per error, and a request the API refused as
 * invalid also as a WARN log line (retrying it changes nothing, so the Service waits for the user).
 *
 * @module
 */
import type { EventSink, EventType, ObjectReference } from "../../kube/events.ts";
import { objectKey } from "../../kube/object_key.ts";
import type { SlimService } from "../../kube/slim.ts";
import * as log from "../../log.ts";
import { pairEvents } from "../../provider/service/event_pairing.ts";
import type { PlannedEvent } from "../../provider/service/load_balancer_plan.ts";
import type { Notice } from "../../provider/service/service_plan.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";
import { refusedAsInvalid } from "../cloud_call_executor.ts";

/** What failed: the framework has one message per kind. */
export type FailedPass = "ensure" | "update" | "delete";

/** The event reason and message of a failed pass, as the framework words them. */
export function failureEvent(cause: unknown, kind: FailedPass): [string, string] {
  const message = cause instanceof Error ? cause.message : String(cause);
  if (cause instanceof WaitingForUser && cause.reason === "ClusterNameCollision") return [cause.reason, message];
  if (kind === "update") return ["UpdateLoadBalancerFailed", `Error updating load balancer with new hosts: ${message}`];
  return ["SyncLoadBalancerFailed", `Error syncing load balancer: failed to ${kind} load balancer: ${message}`];
}

/** The object reference of a Service for its events. */
export function serviceReference(service: SlimService): ObjectReference {
  return { kind: "Service", apiVersion: "v1", name: service.name, namespace: service.namespace, uid: service.uid };
}

/** Records the service controller's events and keeps what it already told each Service. */
export class ServiceReporter {
  readonly #serviceEvents: EventSink;
  readonly #providerEvents: EventSink;
  /** Per Service UID: the message last reported under each notice topic. */
  readonly #reported = new Map<string, Map<string, string>>();
  /** Service UIDs with an `EnsuringLoadBalancer` not yet followed by `EnsuredLoadBalancer`. */
  readonly #ensuring = new Set<string>();
  /** Errors whose event is recorded already (a pass reports its failure once, wherever it is caught). */
  readonly #told = new WeakSet<object>();

  /** Creates the reporter over the two event sources. */
  constructor(events: { serviceEvents: EventSink; providerEvents: EventSink }) {
    this.#serviceEvents = events.serviceEvents;
    this.#providerEvents = events.providerEvents;
  }

  /** True while the Service has an `EnsuringLoadBalancer` without its `EnsuredLoadBalancer`. */
  ensuringOpen(service: SlimService): boolean {
    return this.#ensuring.has(service.uid);
  }

  /** Records the planned events of `when`, kept paired (see {@linkcode pairEvents}). */
  planned(service: SlimService, events: PlannedEvent[], when: PlannedEvent["when"]): void {
    const { record, open } = pairEvents(events, when, this.#ensuring.has(service.uid));
    if (open) this.#ensuring.add(service.uid);
    else this.#ensuring.delete(service.uid);
    for (const e of record) this.#serviceEvents.event(serviceReference(service), e.type, e.reason, e.message);
  }

  /** Records an event of the framework's service controller. */
  service(service: SlimService, type: EventType, reason: string, message: string): void {
    this.#serviceEvents.event(serviceReference(service), type, reason, message);
  }

  /** Records an event of this provider. */
  provider(service: SlimService, type: EventType, reason: string, message: string): void {
    this.#providerEvents.event(serviceReference(service), type, reason, message);
  }

  /** Records each notice once per situation: repeated only when its message changes; cleared when it is over. */
  notices(service: SlimService, notices: Notice[]): void {
    const seen = this.#reported.get(service.uid) ?? new Map<string, string>();
    this.#reported.set(service.uid, seen);
    for (const notice of notices) {
      if (notice.message === undefined) {
        seen.delete(notice.topic);
        continue;
      }
      if (seen.get(notice.topic) === notice.message) continue;
      seen.set(notice.topic, notice.message);
      this.provider(service, "Warning", notice.reason, notice.message);
    }
  }

  /**
   * Reports a failed pass (once per error) and returns what to throw: a request the API refused as invalid becomes
   * a {@linkcode WaitingForUser} (and a WARN line); anything else is thrown as it is and retried with backoff.
   */
  failed(service: SlimService, kind: FailedPass, cause: unknown): unknown {
    if (typeof cause === "object" && cause !== null && this.#told.has(cause)) return cause;
    const [reason, message] = failureEvent(cause, kind);
    this.service(service, "Warning", reason, message);
    let thrown = cause;
    if (refusedAsInvalid(cause)) {
      log.warn(
        "the Ankra Cloud API refused a request for the Service as invalid; nothing is sent again until the " +
          "Service, its nodes or the account change",
        {
          service: objectKey(service),
          error: cause,
        },
      );
      thrown = new WaitingForUser(reason, message, { cause });
    }
    if (typeof thrown === "object" && thrown !== null) this.#told.add(thrown);
    return thrown;
  }

  /** Forgets a Service (its load balancer is gone). */
  forget(service: SlimService): void {
    this.#reported.delete(service.uid);
    this.#ensuring.delete(service.uid);
  }
}
