/**
 * The HTTP transport to the Kubernetes API, apart from the resource verbs (`client.ts`): TLS verified against the
 * cluster's CA alone when the configuration gives one (the system store otherwise; see `tls.ts`), optional client
 * certificates, bearer tokens that rotate, client-side QPS/burst like kube components (20/30), per-request timeouts,
 * typed errors, and the `kubernetes_api_requests_total` metric.
 *
 * One request ({@linkcode KubeTransport.request}) is sent, retried up to three times on 429 after its `Retry-After`
 * (`lib/retry_after.ts`: at most 5 minutes) and once after a 401 with refreshed credentials, and its answer read
 * whole, at most {@linkcode ANSWER_LIMIT_BYTES}; redirects are refused. A streamed answer (a list page read item by
 * item, a watch) is opened with {@linkcode KubeTransport.authorize} and {@linkcode KubeTransport.fetch}, and read
 * by the verb that asked for it.
 *
 * Callers whose requests must never wait behind the controllers' (the Lease, `/metrics` reviews) pass a limiter of
 * their own in {@linkcode RequestOptions.limiter}.
 *
 * @module
 */
import { USER_AGENT } from "../version.ts";
import type { MetricsRegistry } from "../runtime/metrics.ts";
import { TokenBucket } from "../runtime/token_bucket.ts";
import { abortableSleep } from "../runtime/abort.ts";
import { AnswerTooLargeError, discardBody, readBoundedText } from "../runtime/bounded_body.ts";
import { ANSWER_LIMIT_BYTES, errorText } from "./answer_limits.ts";
import { kubeTrustedCertificates } from "../tls.ts";
import { CredentialSource } from "./credentials.ts";
import type { KubeConnectionConfig } from "./kubeconfig.ts";
import { causeChain } from "../error_text.ts";
import { errorFromAnswer, KubeApiError } from "./errors.ts";
import { DEFAULTS } from "../defaults.ts";

/** A rate limiter a request waits for before it is sent. */
export interface RequestLimiter {
  /** Resolves when the request may go; rejects when `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<void>;
}

/** PATCH flavours. */
type PatchType = "merge" | "strategic" | "json";

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: "application/merge-patch+json",
  strategic: "application/strategic-merge-patch+json",
  json: "application/json-patch+json",
};

/** A request's query: set URL-encoded on the request URL; `undefined` values are left out. */
type Query = Record<string, string | number | boolean | undefined>;

/** Options of one request. */
export interface RequestOptions {
  /** Set URL-encoded on the request URL; `undefined` values are left out. */
  query?: Query;
  /** JSON body. */
  body?: unknown;
  /** PATCH flavour (default merge). */
  patch?: PatchType;
  /** Caller's abort signal. */
  signal?: AbortSignal;
  /** Timeout in milliseconds (default the client's). */
  timeoutMs?: number;
  /**
   * A rate limiter of the caller's own instead of the client's `--kube-api-qps` bucket (events, the Lease and
   * `/metrics` reviews have their own, so none of them waits behind the controllers' requests, or slows them).
   */
  limiter?: RequestLimiter;
}

/** Options of {@linkcode KubeTransport}. */
export interface KubeTransportOptions {
  /** Requests per second (default 20). */
  qps?: number;
  /** Burst (default 30). */
  burst?: number;
  /** Default timeout, milliseconds (default 30 s). */
  timeoutMs?: number;
  /** Where `kubernetes_api_requests_total` (by method, resource and code) is registered. */
  metrics?: MetricsRegistry;
}

/** The transport: one HTTP client, one credential source, one request bucket for every request of a client. */
export class KubeTransport {
  /** The connection settings the transport was made with. */
  readonly config: KubeConnectionConfig;
  /** Default timeout of a request, milliseconds (a watch's connect timeout too). */
  readonly timeoutMs: number;
  readonly #credentials: CredentialSource;
  readonly #budget: TokenBucket;
  #client: Deno.HttpClient;
  #clientCertKey?: string;
  readonly #requests?: ReturnType<MetricsRegistry["counter"]>;

  /** Nothing is sent yet; requests share the `qps`/`burst` bucket unless they bring their own limiter. */
  constructor(config: KubeConnectionConfig, options: KubeTransportOptions = {}) {
    this.config = config;
    this.#credentials = new CredentialSource(config.auth);
    this.#budget = new TokenBucket({ requestsPerMinute: (options.qps ?? 20) * 60, burst: options.burst ?? 30 });
    this.timeoutMs = options.timeoutMs ?? DEFAULTS.kubeRequestTimeoutMs;
    this.#client = this.#makeClient(config.clientCert);
    this.#requests = options.metrics?.counter(
      "kubernetes_api_requests_total",
      "Kubernetes API requests by method, resource and HTTP code.",
    );
  }

  #makeClient(clientCert?: { cert: string; key: string }): Deno.HttpClient {
    this.#clientCertKey = clientCert?.cert;
    return Deno.createHttpClient({
      caCerts: kubeTrustedCertificates(this.config.caCerts),
      ...(clientCert ? { cert: clientCert.cert, key: clientCert.key } : {}),
    });
  }

  /** Releases the HTTP client. */
  close(): void {
    this.#client.close();
  }

  async #prepare(): Promise<Record<string, string>> {
    const credential = await this.#credentials.get();
    if (credential.clientCert && credential.clientCert.cert !== this.#clientCertKey) {
      this.#client.close();
      this.#client = this.#makeClient(credential.clientCert);
    }
    const headers: Record<string, string> = { accept: "application/json", "user-agent": USER_AGENT };
    if (credential.token) headers.authorization = `Bearer ${credential.token}`;
    return headers;
  }

  #url(path: string, query?: Query): URL {
    const url = new URL(this.config.server + path);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  /** Counts one request of `method` on `path` in `kubernetes_api_requests_total` under `code`. */
  record(method: string, path: string, code: string): void {
    this.#requests?.inc({ method, resource: resourceName(path), code });
  }

  /** Forgets the credentials, so the next request reads them again (after a 401). */
  invalidateCredentials(): void {
    this.#credentials.invalidate();
  }

  /**
   * Waits for `limiter` (the client's bucket when none is given) and returns the request headers with the current
   * credentials: the first half of a streamed request, whose answer the caller reads ({@linkcode KubeTransport.fetch}).
   */
  async authorize(limiter: RequestLimiter | undefined, signal?: AbortSignal): Promise<Record<string, string>> {
    await (limiter ?? this.#budget).acquire(signal);
    return await this.#prepare();
  }

  /** A GET of `path` with `query` and `headers` ({@linkcode KubeTransport.authorize}), its body left to the caller. */
  fetch(path: string, query: Query, headers: Record<string, string>, signal: AbortSignal): Promise<Response> {
    return fetch(this.#url(path, query), { headers, client: this.#client, signal, redirect: "error" });
  }

  /**
   * Sends one request and returns the parsed JSON answer. Retries up to three times on 429 (after `Retry-After`)
   * and once after a 401 with refreshed credentials.
   *
   * @throws {KubeApiError} on any failure.
   */
  request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return this.#withRetries<T>(method, path, options, "parsed");
  }

  /**
   * Sends a write whose answer nobody reads (the API server's echo of the object) and drops that answer unparsed,
   * through one small buffer: a status patch or an event costs no decoded copy of its object. Retries as
   * {@linkcode KubeTransport.request} does.
   *
   * @throws {KubeApiError} on any failure.
   */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<void> {
    await this.#withRetries<void>(method, path, options, "dropped");
  }

  async #withRetries<T>(
    method: string,
    path: string,
    options: RequestOptions,
    answer: "parsed" | "dropped",
  ): Promise<T> {
    for (let attempt = 1;; attempt++) {
      try {
        return await this.#attempt<T>(method, path, { ...options, answer });
      } catch (cause) {
        if (!(cause instanceof KubeApiError)) throw cause;
        if (cause.kind === "unauthorized" && attempt === 1 && this.config.auth.kind !== "token") {
          this.#credentials.invalidate();
          continue;
        }
        if (cause.kind === "too_many_requests" && attempt <= 3) {
          await abortableSleep(cause.retryAfterMs ?? DEFAULTS.rateLimitedWaitMs, options.signal);
          continue;
        }
        throw cause;
      }
    }
  }

  async #attempt<T>(
    method: string,
    path: string,
    options: RequestOptions & { answer: "parsed" | "dropped" },
  ): Promise<T> {
    await (options.limiter ?? this.#budget).acquire(options.signal);
    const headers = await this.#prepare();
    if (options.body !== undefined) {
      headers["content-type"] = method === "PATCH" ? PATCH_CONTENT_TYPES[options.patch ?? "merge"] : "application/json";
    }
    const timeout = AbortSignal.timeout(options.timeoutMs ?? this.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let response: Response | undefined;
    let text: string;
    try {
      response = await fetch(this.#url(path, options.query), {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        client: this.#client,
        signal,
        redirect: "error",
      });
      if (!response.ok) text = await errorText(response);
      else if (options.answer === "dropped") {
        await discardBody(response, ANSWER_LIMIT_BYTES);
        text = "";
      } else text = await readBoundedText(response, ANSWER_LIMIT_BYTES);
    } catch (cause) {
      if (cause instanceof AnswerTooLargeError) {
        this.record(method, path, "too_large");
        throw new KubeApiError("invalid_answer", `${method} ${path}: ${cause.message}`, { status: response?.status });
      }
      if (options.signal?.aborted) throw options.signal.reason;
      const kind = timeout.aborted ? "timeout" : "network";
      this.record(method, path, kind);
      throw new KubeApiError(
        kind,
        `${method} ${path}: ${kind === "timeout" ? "no answer in time" : causeChain(cause)}`,
      );
    }
    this.record(method, path, String(response.status));
    if (!response.ok) throw errorFromAnswer(method, path, response, text);
    try {
      return (text ? JSON.parse(text) : {}) as T;
    } catch {
      throw new KubeApiError("invalid_answer", `${method} ${path}: the answer is not JSON`, {
        status: response.status,
      });
    }
  }
}

function resourceName(path: string): string {
  const parts = path.replace(/\?.*$/, "").split("/").filter(Boolean);
  // /api/v1/nodes/x/status, /api/v1/namespaces/ns/services/x, /apis/group/version/namespaces/ns/leases/x
  const start = parts[0] === "api" ? 2 : 3;
  const rest = parts.slice(start);
  if (rest[0] === "namespaces" && rest.length >= 3) return rest[2] + (rest[4] ? `/${rest[4]}` : "");
  if (rest[0] === "namespaces") return "namespaces";
  return (rest[0] ?? "") + (rest[2] ? `/${rest[2]}` : "");
}
