/**
 * The one error both controllers use for "the user has to fix this": a reconcile that throws
 * {@linkcode WaitingForUser} is not retried with backoff (retrying changes nothing); the work queue looks at the
 * object again when it changes, when the controller re-adds it (a fresh server list, a node change), or after a slow
 * recheck. The controller records the Warning event before throwing; the message names the problem and what to do.
 * Every other error is transient and retried with the queue's exponential backoff.
 *
 * @module
 */
import { DEFAULTS } from "../defaults.ts";

/** A problem only the user can fix. */
export class WaitingForUser extends Error {
  /** The event reason the controller reported it under (e.g. `InstanceNotFound`, `SyncLoadBalancerFailed`). */
  readonly reason: string;
  /** Look again after this long even without a change (milliseconds; {@linkcode DEFAULTS.userRecheckMs} unless told). */
  readonly recheckAfterMs: number;
  /** The reason a status condition gives for it, when it differs from the event's (`NoMemberAddress`, …). */
  readonly condition?: string;

  /** Creates the error; `message` names the problem and what to do. */
  constructor(
    reason: string,
    message: string,
    options: { cause?: unknown; recheckAfterMs?: number; condition?: string } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "WaitingForUser";
    this.reason = reason;
    this.recheckAfterMs = options.recheckAfterMs ?? DEFAULTS.userRecheckMs;
    this.condition = options.condition;
  }
}
