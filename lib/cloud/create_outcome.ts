/**
 * The client's one rule for a create that failed: whether it **may have happened** (its outcome is unknown), and
 * whether it is sent again as the same request. A create's outcome is unknown when:
 *
 * - a 2xx arrived whose body cannot be read: not JSON, the wrong shape, or too large (the API did the work; the
 *   answer was spoiled on the way);
 * - no answer arrived after the request went out: a dropped connection, a network error, a timeout (the client cannot
 *   tell whether the request reached the API, so it assumes it did);
 * - a 5xx (but 501) arrived: the API documents that a 5xx first request holds its `Idempotency-Key` as "outcome
 *   unknown" — the work may have run before the failure;
 * - the API says so itself: a problem `reason` starting `idempotency_key_` (in progress, outcome unknown, answer not
 *   stored, key reused).
 *
 * A 429 or any other 4xx is a refusal: nothing was created (the API documents that a 4xx frees the key).
 *
 * A keyed create (`Idempotency-Key`) whose outcome is unknown is sent again with the same key, so the API replays the
 * first answer instead of creating a second, billed resource — except after the API's final word on the key
 * (`idempotency_key_outcome_unknown`, `_answer_not_stored`, `_reused`), which the same request would only get again.
 * When the retries run out, the error says `outcomeUnknown`: the caller looks the resource up (by its labels) before
 * it creates again. Pure.
 *
 * @module
 */
import type { CloudErrorKind } from "./errors.ts";

/** What the rule reads of a request. */
interface RequestShape {
  /** HTTP method: only a `POST` creates. */
  method: string;
  /** True for a keyed create (an `Idempotency-Key` reused by every retry). */
  idempotent?: boolean;
}

/** What the rule reads of a failure. */
interface FailureShape {
  /** The error kind. */
  kind: CloudErrorKind;
  /** HTTP status, when an answer arrived. */
  status?: number;
  /** The problem document's `reason`. */
  reason?: string;
}

/** The API's last word on a key: the same request with the same key would get the same answer. */
const FINAL_KEY_REASONS: ReadonlySet<string> = new Set([
  "idempotency_key_outcome_unknown",
  "idempotency_key_answer_not_stored",
  "idempotency_key_reused",
]);

/** True when `failure` of `request` leaves open whether the request took effect (see the module documentation). */
export function createOutcomeUnknown(request: RequestShape, failure: FailureShape): boolean {
  if (failure.reason?.startsWith("idempotency_key_")) return true;
  if (request.method !== "POST") return false;
  switch (failure.kind) {
    case "invalid_answer":
      // A status outside 2xx that the client has no kind for (405, 3xx, …) is an answer that created nothing.
      return failure.status === undefined || (failure.status >= 200 && failure.status < 300);
    case "network":
    case "timeout":
    case "server_error":
    case "unavailable":
      return true;
    default:
      return false;
  }
}

/**
 * True when `request` is sent again, with the same `Idempotency-Key`, after `failure`: a keyed create whose outcome is
 * unknown, unless the API already gave its final word on the key.
 */
export function resentAsSameRequest(request: RequestShape, failure: FailureShape): boolean {
  return request.method === "POST" && request.idempotent === true && createOutcomeUnknown(request, failure) &&
    !FINAL_KEY_REASONS.has(failure.reason ?? "");
}
