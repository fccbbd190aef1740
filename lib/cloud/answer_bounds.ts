/**
 * How much of an Ankra Cloud answer the transport reads and believes: the body up to {@linkcode ANSWER_LIMIT_BYTES}
 * (an error's up to 1 MiB), at most {@linkcode ANSWER_LIMIT_VALUES} JSON values parsed, the `X-RateLimit-*` numbers,
 * and the documented `reason` values that may become a metric label (any other text counts as its error kind, so the
 * label's values stay a small fixed set). `Retry-After` is read as the Kubernetes client reads it, in
 * `lib/retry_after.ts` (at most 5 minutes).
 *
 * @module
 */
import { AnswerTooLargeError, MIB, readBoundedText } from "../runtime/bounded_body.ts";
import type { CloudApiError } from "./errors.ts";

/** The `reason` of a 401 answered to a token that has been replaced since: retried at once with the new token. */
export const TOKEN_ROTATED = "token_rotated";

/** The largest answer body read (8 MiB: a page of 100 items or a load balancer with every member is far smaller). */
export const ANSWER_LIMIT_BYTES = 8 * MIB;

/**
 * The most JSON values one answer may hold (a page of 100 servers holds a few thousand; a load balancer with a
 * thousand members about ten thousand): parsed, each costs memory, so more are refused unparsed.
 */
export const ANSWER_LIMIT_VALUES = 200_000;

/** The largest error answer read (only its problem document is used): 1 MiB; a larger one counts as empty. */
const ERROR_LIMIT_BYTES = MIB;

/**
 * The text of an answer: a success at most {@linkcode ANSWER_LIMIT_BYTES} (more is an {@linkcode AnswerTooLargeError}),
 * an error at most {@linkcode ERROR_LIMIT_BYTES} (more is read as empty: its status still says what happened).
 */
export async function answerText(response: Response): Promise<string> {
  if (response.ok) return await readBoundedText(response, ANSWER_LIMIT_BYTES);
  try {
    return await readBoundedText(response, ERROR_LIMIT_BYTES);
  } catch (cause) {
    if (cause instanceof AnswerTooLargeError) return "";
    throw cause;
  }
}

/** The API's documented `reason` values: the only ones a metric label takes (others count as their error kind). */
const KNOWN_REASONS: ReadonlySet<string> = new Set([
  TOKEN_ROTATED,
  "payment_method_required",
  "owner_approval_required",
  "account_suspended",
  "email_unverified",
  "read_only_token_cannot_read_credentials",
  "idempotency_key_in_progress",
  "idempotency_key_outcome_unknown",
  "idempotency_key_answer_not_stored",
  "idempotency_key_reused",
  "quota_exceeded",
]);

/** A header's value as a finite number, or undefined. */
export function headerNumber(headers: Headers, name: string): number | undefined {
  const value = headers.get(name);
  if (value === null || value.trim() === "") return undefined;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : undefined;
}

/** The `cause` label of a retry: a documented `reason`, else the error's kind (a bounded set either way). */
export function retryCause(error: CloudApiError): string {
  return error.reason !== undefined && KNOWN_REASONS.has(error.reason) ? error.reason : error.kind;
}
