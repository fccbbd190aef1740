/**
 * Failed Kubernetes API requests: one {@linkcode KubeApiError} with a {@linkcode KubeErrorKind} read from the HTTP
 * status, the Status object's message and reason, and the requested wait. `invalid_answer` is an answer this client
 * refuses to read on (too large, or not the shape asked for).
 *
 * @module
 */
import { parseRetryAfter } from "../retry_after.ts";

/** What went wrong with a Kubernetes API request. */
type KubeErrorKind =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "gone"
  | "invalid"
  | "too_many_requests"
  | "server_error"
  | "timeout"
  | "network"
  | "invalid_answer";

/** A failed Kubernetes API request. */
export class KubeApiError extends Error {
  /** What happened. */
  readonly kind: KubeErrorKind;
  /** HTTP status (0 without an answer). */
  readonly status: number;
  /** The Status object's `reason`. */
  readonly reason?: string;
  /** Requested wait, milliseconds. */
  readonly retryAfterMs?: number;

  /** `message` names the request; `details` omitted: `status` 0, no reason, no requested wait. */
  constructor(
    kind: KubeErrorKind,
    message: string,
    details: { status?: number; reason?: string; retryAfterMs?: number } = {},
  ) {
    super(message);
    this.name = "KubeApiError";
    this.kind = kind;
    this.status = details.status ?? 0;
    this.reason = details.reason;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** True when `error` is a {@linkcode KubeApiError} of `kind`. */
export function isKubeError(error: unknown, kind: KubeErrorKind): error is KubeApiError {
  return error instanceof KubeApiError && error.kind === kind;
}

/** The kind of failure an HTTP status means. */
export function kubeErrorKind(status: number): KubeErrorKind {
  switch (status) {
    case 400:
      return "bad_request";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 409:
      return "conflict";
    case 410:
      return "gone";
    case 422:
      return "invalid";
    case 429:
      return "too_many_requests";
    case 504:
      return "timeout";
    default:
      return status >= 500 ? "server_error" : "bad_request";
  }
}

/**
 * The error for a failed answer: its kind from the status, the Status object's message and reason when the body is one,
 * and the `Retry-After` wait (`lib/retry_after.ts`: at most 5 minutes).
 */
export function errorFromAnswer(method: string, path: string, response: Response, text: string): KubeApiError {
  let status: { message?: string; reason?: string } = {};
  try {
    status = JSON.parse(text);
  } catch { /* not JSON */ }
  return new KubeApiError(
    kubeErrorKind(response.status),
    `${method} ${path}: ${response.status} ${status.message ?? text.slice(0, 200)}`,
    {
      status: response.status,
      reason: status.reason,
      retryAfterMs: parseRetryAfter(response.headers.get("retry-after")),
    },
  );
}
