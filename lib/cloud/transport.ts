/**
 * The single way requests reach the Ankra Cloud API: authentication, `User-Agent`, per-request timeout, TLS with the
 * system roots plus an optional CA bundle, the shared {@linkcode CloudRequestBudget}, bounded retries with jittered
 * exponential backoff that honour `Retry-After`, `Idempotency-Key` reuse across the retries of a create, answer
 * validation with valibot (list answers item by item: a bad item costs that item only), and request metrics.
 *
 * Retried: reads and idempotent writes (GET, PUT, PATCH, DELETE) on 5xx (except 501), timeouts and network errors;
 * keyed creates whenever their outcome is unknown (`create_outcome.ts`: those failures, and also a 2xx whose body
 * cannot be read), with the same `Idempotency-Key`, so the API replays the first answer; every method on 429 (the
 * request was not processed). Never retried: other 4xx, an unkeyed create that may have happened. A call one of
 * whose attempts left a create's outcome unknown fails with `outcomeUnknown` set, whatever its last attempt got.
 *
 * Bounded whatever the API answers (`answer_bounds.ts`): a body is read up to 8 MiB (a larger one, announced or not,
 * is an `invalid_answer` "answer too large", read no further and not retried but for a keyed create) and parsed only
 * when it holds at most 200,000 JSON values, `Retry-After` counts for at most 5 minutes (`lib/retry_after.ts`),
 * redirects are refused (the API sends none), and the retry metric's `cause` label takes only the API's documented
 * `reason` values.
 *
 * @module
 */
import * as v from "valibot";
import { USER_AGENT } from "../version.ts";
import * as log from "../log.ts";
import { redact, registerSecret } from "../log.ts";
import type { MetricsRegistry } from "../runtime/metrics.ts";
import { CloudApiError, type CloudErrorKind, kindForStatus } from "./errors.ts";
import { createOutcomeUnknown, resentAsSameRequest } from "./create_outcome.ts";
import { ProblemSchema } from "./schemas.ts";
import type { CloudRequestBudget } from "./request_budget.ts";
import { ANSWER_LIMIT_VALUES, answerText, headerNumber, retryCause, TOKEN_ROTATED } from "./answer_bounds.ts";
import { abortableSleep } from "../runtime/abort.ts";
import { AnswerTooLargeError, mayExceedJsonValues } from "../runtime/bounded_body.ts";
import { causeChain } from "../error_text.ts";
import { parseRetryAfter } from "../retry_after.ts";
import { systemCaCertificates } from "../tls.ts";
import { fixedToken, TokenFile, type TokenSource } from "./token_source.ts";
import { DEFAULTS } from "../defaults.ts";

/** Retry limits. */
export interface RetryPolicy {
  /** Attempts in total, the first included. */
  maxAttempts: number;
  /** First backoff, milliseconds. */
  baseDelayMs: number;
  /** Largest backoff, milliseconds. */
  maxDelayMs: number;
  /** Give up once this much time has passed since the first attempt, milliseconds. */
  maxElapsedMs: number;
}

/** Options of {@linkcode CloudTransport}. */
interface TransportOptions {
  /** API base URL without trailing slash. */
  apiUrl: string;
  /** API token (the one read at start, when `tokenFile` is given). */
  token: string;
  /** File the token was read from: read again when it changes, and on a 401 before the token counts as refused. */
  tokenFile?: string;
  /** Where the token comes from (tests); built from `token` and `tokenFile` otherwise. */
  tokens?: TokenSource;
  /** PEM of extra CAs. */
  caBundle?: string;
  /** Per-request timeout, milliseconds (default 30 s). */
  timeoutMs?: number;
  /** The process-wide request budget. */
  budget: CloudRequestBudget;
  /** Retry limits (default {@linkcode DEFAULTS.cloudRetry}). */
  retry?: Partial<RetryPolicy>;
  /** Registry receiving the request metrics. */
  metrics?: MetricsRegistry;
  /** Random source for jitter and idempotency keys (tests). */
  random?: () => number;
  /** Sleep between retries (tests). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** One API call. */
export interface CallSpec<S extends v.GenericSchema | undefined> {
  /** operationId, for errors, metrics and logs. */
  operation: string;
  /** HTTP method. */
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path below the base URL, with path parameters already encoded. */
  path: string;
  /** Query parameters (repeatable). */
  query?: [string, string][];
  /** JSON body. */
  body?: unknown;
  /** Send an `Idempotency-Key` (a new one per call, reused by its retries). */
  idempotent?: boolean;
  /** Schema of a 2xx JSON answer; undefined for answers without a body. */
  schema: S;
  /** Caller's abort signal. */
  signal?: AbortSignal;
  /** High-priority calls go before others waiting for the budget. */
  priority?: "high" | "normal";
}

/** What {@linkcode CloudTransport.call} returns. */
export type CallResult<S> = S extends v.GenericSchema ? v.InferOutput<S> : undefined;

function fieldPath(issue: v.BaseIssue<unknown>): string {
  return v.getDotPath(issue) ?? "(document)";
}

/** Why the API refuses the token, as last seen; undefined while it is accepted. */
export interface CredentialProblem {
  /** 401 (invalid or expired) or 403 (lacks permission). */
  status: 401 | 403;
  /** The operation that was refused. */
  operation: string;
  /** One line for logs and `/readyz`: what is wrong and what to do. */
  message: string;
}

/** Sends requests to the Ankra Cloud API. */
export class CloudTransport {
  readonly #options: TransportOptions & Required<Pick<TransportOptions, "timeoutMs">>;
  readonly #retry: RetryPolicy;
  readonly #client: Deno.HttpClient;
  readonly #tokens: TokenSource;
  readonly #random: () => number;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** 401 on any call, cleared by any success. */
  #unauthorized?: CredentialProblem;
  /** 403 on a write, cleared by a successful write. */
  #forbidden?: CredentialProblem;
  readonly #metrics?: {
    requests: ReturnType<MetricsRegistry["counter"]>;
    retries: ReturnType<MetricsRegistry["counter"]>;
    latency: ReturnType<MetricsRegistry["histogram"]>;
    remaining: ReturnType<MetricsRegistry["gauge"]>;
  };

  /** Creates the transport and its TLS client. */
  constructor(options: TransportOptions) {
    const { timeoutMs = DEFAULTS.cloudRequestTimeoutMs } = options;
    this.#options = { ...options, timeoutMs };
    registerSecret(options.token);
    this.#tokens = options.tokens ??
      (options.tokenFile ? new TokenFile(options.tokenFile, options.token) : fixedToken(options.token));
    this.#retry = { ...DEFAULTS.cloudRetry, ...options.retry };
    this.#random = options.random ?? Math.random;
    this.#sleep = options.sleep ?? abortableSleep;
    const caCerts = [...systemCaCertificates(), ...(options.caBundle ? [options.caBundle] : [])];
    this.#client = Deno.createHttpClient({ caCerts });
    if (options.metrics) {
      const m = options.metrics;
      this.#metrics = {
        requests: m.counter("ankra_cloud_requests_total", "Ankra Cloud API requests by operation and HTTP code."),
        retries: m.counter(
          "ankra_cloud_request_retries_total",
          "Ankra Cloud API request retries by operation and cause.",
        ),
        latency: m.histogram(
          "ankra_cloud_request_duration_seconds",
          "Ankra Cloud API request latency by operation.",
          [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
        ),
        remaining: m.gauge("ankra_cloud_rate_limit_remaining", "The API's last X-RateLimit-Remaining."),
      };
      m.gauge(
        "ankra_cloud_credentials_accepted",
        "1 while the API accepts the token for what the controller does; 0 after a 401, or a 403 on a write.",
        () => (this.credentialProblem ? 0 : 1),
      );
    }
  }

  /** Why the API refuses the token, while it does (a 401, or a 403 on a write); undefined otherwise. */
  get credentialProblem(): CredentialProblem | undefined {
    return this.#unauthorized ?? this.#forbidden;
  }

  #observeCredentials(spec: CallSpec<v.GenericSchema | undefined>, status: number): void {
    const before = this.credentialProblem?.status;
    const write = spec.method !== "GET";
    if (status >= 200 && status < 300) {
      this.#unauthorized = undefined;
      if (write) this.#forbidden = undefined;
    } else if (status === 401) {
      this.#unauthorized = {
        status,
        operation: spec.operation,
        message: `the Ankra Cloud API refuses the token as invalid or expired (HTTP 401 on ${spec.operation}): ` +
          "create a token with operate permission and put it in the Secret (or ANKRA_CLOUD_TOKEN)",
      };
    } else if (status === 403 && write) {
      this.#forbidden = {
        status,
        operation: spec.operation,
        message: `the Ankra Cloud API refuses a change with this token (HTTP 403 on ${spec.operation}): the token ` +
          "needs operate permission (a read-only token cannot manage load balancers)",
      };
    }
    // Logged once per change of the situation (401, 403, accepted), not once per operation or retry.
    const after = this.credentialProblem;
    if (after && after.status !== before) log.error(after.message);
    else if (before && !after) log.info(0, "the Ankra Cloud API accepts the token again");
  }

  /** The shared request budget. */
  get budget(): CloudRequestBudget {
    return this.#options.budget;
  }

  /** Where the token comes from: {@linkcode TokenSource.onChange} tells when it was rotated. */
  get tokens(): TokenSource {
    return this.#tokens;
  }

  /** Releases the TLS client and stops watching the token file. */
  close(): void {
    this.#tokens.close();
    this.#client.close();
  }

  #retryable(spec: CallSpec<v.GenericSchema | undefined>, error: CloudApiError): boolean {
    if (error.kind === "rate_limited") return true;
    if (error.reason === TOKEN_ROTATED) return true;
    // A keyed create whose outcome is unknown goes again with its key: the API replays the first answer.
    if (resentAsSameRequest(spec, error)) return true;
    if (spec.method === "POST") return false;
    return error.kind === "server_error" || error.kind === "unavailable" || error.kind === "timeout" ||
      error.kind === "network";
  }

  #backoff(attempt: number): number {
    const exponential = Math.min(this.#retry.maxDelayMs, this.#retry.baseDelayMs * 2 ** (attempt - 1));
    return Math.round(exponential * (0.5 + this.#random() * 0.5));
  }

  /**
   * Sends `spec` (with retries) and returns the validated answer.
   *
   * @throws {CloudApiError} for every failure; only `kind: "not_found"` means the resource does not exist.
   */
  async call<S extends v.GenericSchema | undefined>(spec: CallSpec<S>): Promise<CallResult<S>> {
    const started = performance.now();
    const idempotencyKey = spec.idempotent ? crypto.randomUUID() : undefined;
    // Once one attempt may have taken effect, the call's outcome stays unknown, whatever the later attempts get (a
    // 429 burst after a lost answer is no proof that nothing was created).
    let unknown = false;
    for (let attempt = 1;; attempt++) {
      try {
        return await this.#attempt(spec, idempotencyKey);
      } catch (cause) {
        if (!(cause instanceof CloudApiError)) throw cause;
        unknown ||= createOutcomeUnknown(spec, cause);
        const elapsed = performance.now() - started;
        if (!this.#retryable(spec, cause) || attempt >= this.#retry.maxAttempts || spec.signal?.aborted) {
          throw unknown ? cause.withOutcomeUnknown() : cause;
        }
        const wait = cause.reason === TOKEN_ROTATED
          ? 0
          : cause.retryAfterMs !== undefined
          ? cause.retryAfterMs + Math.round(this.#random() * 250)
          : this.#backoff(attempt);
        if (elapsed + wait > this.#retry.maxElapsedMs) throw unknown ? cause.withOutcomeUnknown() : cause;
        this.#metrics?.retries.inc({ operation: spec.operation, cause: retryCause(cause) });
        await this.#sleep(wait, spec.signal);
      }
    }
  }

  async #attempt<S extends v.GenericSchema | undefined>(
    spec: CallSpec<S>,
    idempotencyKey: string | undefined,
  ): Promise<CallResult<S>> {
    const release = await this.#options.budget.acquire(spec.signal, { priority: spec.priority });
    try {
      return await this.#send(spec, idempotencyKey);
    } finally {
      release();
    }
  }

  async #send<S extends v.GenericSchema | undefined>(
    spec: CallSpec<S>,
    idempotencyKey: string | undefined,
  ): Promise<CallResult<S>> {
    const { operation } = spec;
    const url = new URL(this.#options.apiUrl + spec.path);
    for (const [key, value] of spec.query ?? []) url.searchParams.append(key, value);
    const token = this.#tokens.current;
    const headers: Record<string, string> = {
      "authorization": `Bearer ${token}`,
      "accept": "application/json, application/problem+json",
      "user-agent": USER_AGENT,
    };
    if (spec.body !== undefined) headers["content-type"] = "application/json";
    if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
    const timeout = AbortSignal.timeout(this.#options.timeoutMs);
    const signal = spec.signal ? AbortSignal.any([spec.signal, timeout]) : timeout;
    const started = performance.now();
    let response: Response | undefined;
    let text: string;
    try {
      response = await fetch(url, {
        method: spec.method,
        headers,
        body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
        client: this.#client,
        signal,
        redirect: "error",
      });
      text = await answerText(response);
    } catch (cause) {
      if (cause instanceof AnswerTooLargeError) {
        this.#record(operation, "too_large", started);
        throw new CloudApiError("invalid_answer", { operation, status: response?.status, cause: cause.message });
      }
      const kind: CloudErrorKind = timeout.aborted ? "timeout" : "network";
      this.#record(operation, kind, started);
      if (spec.signal?.aborted) throw spec.signal.reason;
      throw new CloudApiError(kind, {
        operation,
        cause: redact(causeChain(cause)),
      });
    }
    this.#record(operation, String(response.status), started);
    this.#observeRateLimit(response.headers);
    const status = response.status;
    // A 401 for a token that has since been replaced (or is replaced now, on reading the file again) is no verdict on
    // the token in use: the request goes again at once with the new one.
    if (status === 401 && (token !== this.#tokens.current || await this.#tokens.refresh())) {
      throw new CloudApiError("unauthorized", { operation, status, reason: TOKEN_ROTATED });
    }
    this.#observeCredentials(spec, status);
    if (status >= 200 && status < 300) return this.#decode(spec, status, text);
    let problem: v.InferOutput<typeof ProblemSchema> | undefined;
    try {
      const parsed = v.safeParse(ProblemSchema, JSON.parse(text));
      if (parsed.success) problem = parsed.output;
    } catch { /* not JSON */ }
    const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
    if (status === 429 && retryAfterMs !== undefined) this.#options.budget.pauseFor(retryAfterMs);
    throw new CloudApiError(kindForStatus(status, problem?.reason), {
      operation,
      status,
      reason: problem?.reason,
      detail: problem?.detail ?? problem?.title ?? (text.length < 200 ? text.trim() || undefined : undefined),
      retryAfterMs: status === 429 ? (retryAfterMs ?? DEFAULTS.rateLimitedWaitMs) : retryAfterMs,
    });
  }

  #decode<S extends v.GenericSchema | undefined>(spec: CallSpec<S>, status: number, text: string): CallResult<S> {
    const { operation } = spec;
    if (!spec.schema) return undefined as CallResult<S>;
    if (mayExceedJsonValues(text, ANSWER_LIMIT_VALUES)) {
      throw new CloudApiError("invalid_answer", {
        operation,
        status,
        cause: `answer too large: more than ${ANSWER_LIMIT_VALUES} JSON values`,
      });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new CloudApiError("invalid_answer", { operation, status, cause: "the body is not JSON" });
    }
    const parsed = v.safeParse(spec.schema, json);
    if (!parsed.success) {
      const issue = parsed.issues[0];
      throw new CloudApiError("invalid_answer", {
        operation,
        status,
        cause: `field ${fieldPath(issue)}: ${issue.message}`,
      });
    }
    return parsed.output as CallResult<S>;
  }

  #record(operation: string, code: string, started: number): void {
    if (!this.#metrics) return;
    this.#metrics.requests.inc({ operation, code });
    this.#metrics.latency.observe((performance.now() - started) / 1000, { operation });
  }

  #observeRateLimit(headers: Headers): void {
    const remaining = headerNumber(headers, "x-ratelimit-remaining");
    if (remaining === undefined) return;
    this.#options.budget.observe({
      limit: headerNumber(headers, "x-ratelimit-limit"),
      remaining,
      resetEpochSeconds: headerNumber(headers, "x-ratelimit-reset"),
    });
    this.#metrics?.remaining.set(remaining);
  }
}
