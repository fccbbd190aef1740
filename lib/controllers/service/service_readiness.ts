/**
 * The Service's `load-balancer.ankra.cloud/Ready` condition, written after each pass: what the pass found
 * ({@linkcode ReadyState}, from the pass's outcome or the error it failed with) becomes a condition write only when it
 * differs from what the Service already says ({@linkcode readyConditionUpdate}), so a Service in steady state gets no
 * write. A failed write is logged and tried again on the next pass; it never fails the pass.
 *
 * @module
 */
import { CloudApiError } from "../../cloud/errors.ts";
import { objectKey } from "../../kube/object_key.ts";
import type { ServiceWriter } from "../../kube/service_writes.ts";
import type { SlimCondition, SlimService } from "../../kube/slim.ts";
import * as log from "../../log.ts";
import { notReady, readyConditionUpdate, type ReadyState } from "../../provider/service/ready_condition.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";

/** The state of a pass that failed with `cause`: who must act, in the condition's words. */
export function failedState(cause: unknown): ReadyState {
  const message = cause instanceof Error ? cause.message : String(cause);
  if (cause instanceof WaitingForUser && cause.condition) return notReady(cause.condition, message);
  const api = apiErrorOf(cause);
  if (api) {
    if (api.status === 402) return notReady("PaymentRequired", message);
    if (api.reason === "quota_exceeded") return notReady("QuotaExceeded", message);
    if (api.status === 401 || api.status === 403) return notReady("Unauthorized", message);
    if (api.transient) return notReady("WaitingForAPI", message);
    if (api.status === 400 || api.status === 422) return notReady("InvalidRequest", message);
  }
  if (cause instanceof WaitingForUser && cause.reason !== "SyncLoadBalancerFailed") {
    return notReady(cause.reason, message);
  }
  return notReady("SyncFailed", message);
}

function apiErrorOf(cause: unknown): CloudApiError | undefined {
  let at = cause;
  for (let depth = 0; at && depth < 5; depth++) {
    if (at instanceof CloudApiError) return at;
    at = at instanceof Error ? at.cause : undefined;
  }
  return undefined;
}

function sameCondition(a: SlimCondition, b: SlimCondition | undefined): boolean {
  return b !== undefined && a.status === b.status && a.reason === b.reason && a.message === b.message &&
    a.observedGeneration === b.observedGeneration && a.lastTransitionTime === b.lastTransitionTime;
}

/** Writes the condition of each Service after its passes. */
export class ServiceReadiness {
  readonly #writes: ServiceWriter;
  /** What was last written, by Service uid, until the store shows it (it may not have seen it yet). */
  readonly #written = new Map<string, SlimCondition>();

  /** Starts with nothing written: each Service's first report is compared with the condition in the store. */
  constructor(writes: ServiceWriter) {
    this.#writes = writes;
  }

  /** Records `state` for `service`: one write when it differs from the Service's condition, none otherwise. */
  async report(service: SlimService, state: ReadyState): Promise<void> {
    let current = this.#written.get(service.uid);
    // Once the store shows what was written, the store alone is enough: nothing is kept per Service at rest.
    if (current && sameCondition(current, service.readyCondition)) {
      this.#written.delete(service.uid);
      current = undefined;
    }
    current ??= service.readyCondition;
    const update = readyConditionUpdate(current, state, { generation: service.generation, now: new Date() });
    if (!update) return;
    try {
      await this.#writes.writeCondition(service, update);
      this.#written.set(service.uid, update);
    } catch (cause) {
      log.warn("could not write the Service's Ready condition; the next pass tries again", {
        service: objectKey(service),
        error: cause,
      });
    }
  }

  /** Removes the condition of a Service that no longer wants a load balancer (and forgets it). */
  async clear(service: SlimService): Promise<void> {
    const had = this.#written.has(service.uid) || service.readyCondition !== undefined;
    this.#written.delete(service.uid);
    if (!had || service.deletionTimestamp) return;
    try {
      await this.#writes.writeCondition(service, null);
    } catch (cause) {
      log.warn("could not remove the Service's Ready condition", {
        service: objectKey(service),
        error: cause,
      });
    }
  }
}
