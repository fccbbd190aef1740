/**
 * Typed errors of the Ankra Cloud API client. RFC 7807 problem documents are decoded into a
 * {@linkcode CloudApiError} whose {@linkcode CloudErrorKind} says what happened. Only `not_found` (an HTTP 404) means
 * "the resource does not exist"; every other kind — including timeouts, outages, 401/403 and rate limits — means
 * "we do not know", and callers must never delete anything because of it.
 *
 * Messages never contain the token: they name the operation, the status and the API's own text.
 *
 * @module
 */
import { redact } from "../log.ts";

/** What went wrong, as a caller acts on it. */
export type CloudErrorKind =
  | "bad_request"
  | "unauthorized"
  | "payment_required"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "quota_exceeded"
  | "idempotency_key_reused"
  | "unprocessable"
  | "rate_limited"
  | "not_implemented"
  | "server_error"
  | "unavailable"
  | "timeout"
  | "network"
  | "invalid_answer";

/** Details of a {@linkcode CloudApiError}. */
interface CloudErrorDetails {
  /** The API operation (`get_server`, …). */
  operation: string;
  /** HTTP status, when an answer arrived. */
  status?: number;
  /** The problem document's machine-readable `reason`. */
  reason?: string;
  /** The problem document's `detail` (customer-readable). */
  detail?: string;
  /** How long the API asked us to wait (`Retry-After`), milliseconds. */
  retryAfterMs?: number;
  /** The underlying error (network, abort, validation). */
  cause?: unknown;
  /** True when the request may have taken effect (`create_outcome.ts` decides; the transport sets it). */
  outcomeUnknown?: boolean;
}

/** An error from the Ankra Cloud API or on the way to it. */
export class CloudApiError extends Error {
  /** What happened. */
  readonly kind: CloudErrorKind;
  /** The API operation. */
  readonly operation: string;
  /** HTTP status, when an answer arrived. */
  readonly status?: number;
  /** The problem document's `reason`. */
  readonly reason?: string;
  /** The problem document's `detail`. */
  readonly detail?: string;
  /** Requested wait before retrying, milliseconds. */
  readonly retryAfterMs?: number;
  /**
   * True when the request may have taken effect although it failed — above all a create: its answer could not be read,
   * none arrived, a 5xx came back, or the API cannot say (a problem `reason` starting `idempotency_key_`). A keyed
   * create has already been sent again with its key as often as the retries allow; look the resource up (by its
   * labels) before creating it again. The rule is `createOutcomeUnknown` (`create_outcome.ts`).
   */
  readonly outcomeUnknown: boolean;
  readonly #details: CloudErrorDetails;

  /** Creates the error; the message is built from `kind` and `details` and passed through secret redaction. */
  constructor(kind: CloudErrorKind, details: CloudErrorDetails) {
    super(redact(describe(kind, details)), { cause: details.cause });
    this.name = "CloudApiError";
    this.kind = kind;
    this.operation = details.operation;
    this.status = details.status;
    this.reason = details.reason;
    this.detail = details.detail;
    this.retryAfterMs = details.retryAfterMs;
    this.outcomeUnknown = details.outcomeUnknown === true;
    this.#details = details;
  }

  /** The same error, saying the request may have taken effect ({@linkcode CloudApiError.outcomeUnknown}). */
  withOutcomeUnknown(): CloudApiError {
    return this.outcomeUnknown ? this : new CloudApiError(this.kind, { ...this.#details, outcomeUnknown: true });
  }

  /** True for errors worth retrying later (outages, rate limits, timeouts); false for answers that will not change. */
  get transient(): boolean {
    return ["rate_limited", "server_error", "unavailable", "timeout", "network"].includes(this.kind) ||
      this.reason === "idempotency_key_in_progress";
  }
}

const KIND_TEXT: Record<CloudErrorKind, string> = {
  bad_request: "the API refused the request as invalid",
  unauthorized: "the API token is invalid or expired: check ANKRA_CLOUD_TOKEN",
  payment_required: "the account may not create billable resources",
  forbidden: "the API token lacks the permission (a token with operate permission is needed)",
  not_found: "not found",
  conflict: "the resource's current state forbids this",
  quota_exceeded: "an account quota would be exceeded",
  idempotency_key_reused: "the idempotency key was already used for another request",
  unprocessable: "the API could not process the request",
  rate_limited: "rate limited by the API",
  not_implemented: "not implemented by the API",
  server_error: "the API failed",
  unavailable: "the API is unavailable or has no capacity",
  timeout: "no answer from the API in time",
  network: "could not reach the API",
  invalid_answer: "the API's answer did not have the expected shape",
};

function describe(kind: CloudErrorKind, details: CloudErrorDetails): string {
  const parts = [`${details.operation}: ${KIND_TEXT[kind]}`];
  if (details.status) parts.push(`(HTTP ${details.status}${details.reason ? `, ${details.reason}` : ""})`);
  if (details.detail) parts.push(`- ${details.detail}`);
  if (kind === "network" || kind === "timeout" || kind === "invalid_answer") {
    const cause = details.cause instanceof Error ? details.cause.message : details.cause ? String(details.cause) : "";
    if (cause) parts.push(`- ${cause}`);
  }
  if (details.retryAfterMs !== undefined && kind === "rate_limited") {
    parts.push(`(retry after ${Math.ceil(details.retryAfterMs / 1000)} s)`);
  }
  if (details.outcomeUnknown && !details.reason?.startsWith("idempotency_key_")) {
    parts.push("- the request may have taken effect");
  }
  return parts.join(" ");
}

/** Maps an HTTP status (and problem `reason`) to the error kind. */
export function kindForStatus(status: number, reason?: string): CloudErrorKind {
  if (status === 400) return "bad_request";
  if (status === 401) return "unauthorized";
  if (status === 402) return "payment_required";
  if (status === 403) return "forbidden";
  if (status === 404) return "not_found";
  if (status === 409) return "conflict";
  if (status === 422) {
    if (reason === "quota_exceeded") return "quota_exceeded";
    if (reason === "idempotency_key_reused") return "idempotency_key_reused";
    return "unprocessable";
  }
  if (status === 429) return "rate_limited";
  if (status === 501) return "not_implemented";
  if (status === 502 || status === 503 || status === 504) return "unavailable";
  if (status >= 500) return "server_error";
  return "invalid_answer";
}

/** True only when `error` proves the resource does not exist: an HTTP 404 from the API. */
export function isNotFound(error: unknown): boolean {
  return error instanceof CloudApiError && error.kind === "not_found";
}
