/**
 * Tells the user what a pass over a Service decided, once, at the pass's end ({@linkcode ServiceReporter.tell} of its
 * {@linkcode PassReport}): the framework's events (source `service-controller`) kept paired by {@linkcode pairEvents},
 * each notice of the provider (source `ankra-cloud-ccm`) once per situation, and a failed pass as the framework words
 * it — once per error, and a request the API refused as invalid also as a WARN log line (retrying it changes nothing,
 * so the Service waits for the user). It keeps, per Service, only what telling needs: the notices last told and
 * whether an `EnsuringLoadBalancer` is open.
 *
 * @module
 */
import type { EventSink, ObjectReference } from "../../kube/events.ts";
import { objectKey } from "../../kube/object_key.ts";
import type { SlimService } from "../../kube/slim.ts";
import * as log from "../../log.ts";
import { pairEvents } from "../../provider/service/event_pairing.ts";
import type { Notice } from "../../provider/service/service_plan.ts";
import { refusedAsInvalid } from "../cloud_call_executor.ts";
import { failureEvent, type PassReport } from "./pass_report.ts";

function serviceReference(service: SlimService): ObjectReference {
  return { kind: "Service", apiVersion: "v1", name: service.name, namespace: service.namespace, uid: service.uid };
}

/** Records the service controller's events and keeps what it already told each Service. */
export class ServiceReporter {
  readonly #serviceEvents: EventSink;
  readonly #providerEvents: EventSink;
  /** Per Service UID: the message last told under each notice topic (no entry while none is told). */
  readonly #reported = new Map<string, Map<string, string>>();
  /** Service UIDs with an `EnsuringLoadBalancer` not yet followed by `EnsuredLoadBalancer`. */
  readonly #ensuring = new Set<string>();
  /** Errors whose event is recorded already (a failure shared by several passes is told once). */
  readonly #failures = new WeakSet<object>();

  /** Creates the reporter over the two event sources. */
  constructor(events: { serviceEvents: EventSink; providerEvents: EventSink }) {
    this.#serviceEvents = events.serviceEvents;
    this.#providerEvents = events.providerEvents;
  }

  /** True while the Service has an `EnsuringLoadBalancer` without its `EnsuredLoadBalancer` (what plans pair by). */
  ensuringOpen(service: SlimService): boolean {
    return this.#ensuring.has(service.uid);
  }

  /** Tells everything `report` gathered, in the order the pass decided it. */
  tell(report: PassReport): void {
    const service = report.service;
    const reference = serviceReference(service);
    for (const told of report.told) {
      switch (told.kind) {
        case "notices":
          this.#notices(service, reference, told.notices);
          break;
        case "planned": {
          const { record, open } = pairEvents(told.events, told.when, this.#ensuring.has(service.uid));
          if (open) this.#ensuring.add(service.uid);
          else this.#ensuring.delete(service.uid);
          for (const e of record) this.#serviceEvents.event(reference, e.type, e.reason, e.message);
          break;
        }
        case "event":
          (told.source === "service" ? this.#serviceEvents : this.#providerEvents)
            .event(reference, told.type, told.reason, told.message);
          break;
        case "failed":
          this.#failed(service, reference, told);
          break;
        case "forget":
          this.#reported.delete(service.uid);
          this.#ensuring.delete(service.uid);
          break;
      }
    }
  }

  /** Each notice once per situation: repeated only when its message changes; cleared when it is over. */
  #notices(service: SlimService, reference: ObjectReference, notices: Notice[]): void {
    const seen = this.#reported.get(service.uid);
    for (const notice of notices) {
      if (notice.message === undefined) {
        seen?.delete(notice.topic);
        continue;
      }
      if (seen?.get(notice.topic) === notice.message) continue;
      if (seen) seen.set(notice.topic, notice.message);
      else this.#reported.set(service.uid, new Map([[notice.topic, notice.message]]));
      this.#providerEvents.event(reference, "Warning", notice.reason, notice.message);
    }
    if (seen?.size === 0) this.#reported.delete(service.uid);
  }

  #failed(
    service: SlimService,
    reference: ObjectReference,
    told: { failure: "ensure" | "update" | "delete"; cause: unknown; thrown: unknown },
  ): void {
    const { cause, thrown } = told;
    if (typeof cause === "object" && cause !== null && this.#failures.has(cause)) return;
    const [reason, message] = failureEvent(cause, told.failure);
    this.#serviceEvents.event(reference, "Warning", reason, message);
    if (refusedAsInvalid(cause)) {
      log.warn(
        "the Ankra Cloud API refused a request for the Service as invalid; nothing is sent again until the " +
          "Service, its nodes or the account change",
        { service: objectKey(service), error: cause },
      );
    }
    if (typeof thrown === "object" && thrown !== null) this.#failures.add(thrown);
  }
}
