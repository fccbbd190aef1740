/**
 * Errors the simulator answers with, as RFC 7807 problem documents (`application/problem+json`).
 *
 * @module
 */

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** The title of an HTTP status as problem documents use it. */
export function statusTitle(status: number): string {
  return TITLES[status] ?? "Error";
}

/** A failure the simulator answers with `status` and a problem document. */
export class ProblemError extends Error {
  /** HTTP status. */
  readonly status: number;
  /** Machine-readable reason. */
  readonly reason?: string;
  /** `Retry-After` seconds. */
  readonly retryAfterSeconds?: number;

  /** Creates the error; `detail` becomes the problem's `detail`. */
  constructor(status: number, detail: string, options: { reason?: string; retryAfterSeconds?: number } = {}) {
    super(detail);
    this.name = "ProblemError";
    this.status = status;
    this.reason = options.reason;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** The problem document. */
  toProblem(): Record<string, unknown> {
    return {
      type: "about:blank",
      title: statusTitle(this.status),
      status: this.status,
      detail: this.message,
      ...(this.reason ? { reason: this.reason } : {}),
    };
  }
}

/** 400 naming the field. */
export function badRequest(detail: string): ProblemError {
  return new ProblemError(400, detail);
}

/** 404 for a resource kind and id. */
export function notFound(kind: string, id: string): ProblemError {
  return new ProblemError(404, `${kind} ${id} was not found`);
}

/** 409 with a detail. */
export function conflict(detail: string, reason?: string): ProblemError {
  return new ProblemError(409, detail, { reason });
}
