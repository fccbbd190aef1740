/**
 * A small Kubernetes API client over fetch: TLS verified against the cluster's CA alone when the configuration gives
 * one (the system store otherwise; see `tls.ts`), optional client certificates, bearer tokens that rotate,
 * client-side QPS/burst like kube components (20/30), 429 `Retry-After` retries, per-request timeouts, typed errors,
 * paginated lists and watches parsed line by line from the stream.
 *
 * Bounded whatever the server sends: an answer read whole is at most {@linkcode ANSWER_LIMIT_BYTES}, a list page
 * streamed item by item holds at most the `limit` it asked for (each item, like each watch event, at most 8 Mi
 * characters), a watch that delivers nothing for its `timeoutSeconds` plus {@linkcode WATCH_IDLE_GRACE_MS} is ended
 * (a dead connection), `Retry-After` counts for at most 5 minutes, and redirects are refused. Each breach is an
 * `invalid_answer` {@linkcode KubeApiError}.
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
import { ANSWER_LIMIT_BYTES, errorText, WATCH_IDLE_GRACE_MS, watchIdleTimer } from "./answer_limits.ts";
import { kubeTrustedCertificates } from "../tls.ts";
import { CredentialSource } from "./credentials.ts";
import type { KubeConnectionConfig } from "./kubeconfig.ts";
import { decodeListStream, ListTooLargeError } from "./list_stream.ts";
import { causeChain } from "../error_text.ts";
import { errorFromAnswer, KubeApiError } from "./errors.ts";
import { type WatchEvent, watchEvents } from "./watch_events.ts";
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

/** Options of one request. */
interface RequestOptions {
  /** Set URL-encoded on the request URL; `undefined` values are left out. */
  query?: Record<string, string | number | boolean | undefined>;
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

/** Options of {@linkcode KubeClient}. */
interface KubeClientOptions {
  /** Requests per second (default 20). */
  qps?: number;
  /** Burst (default 30). */
  burst?: number;
  /** Default timeout, milliseconds (default 30 s). */
  timeoutMs?: number;
  /** Where `kubernetes_api_requests_total` (by method, resource and code) is registered. */
  metrics?: MetricsRegistry;
  /** How long past its `timeoutSeconds` a silent watch is ended (default 30 s; tests shorten it). */
  watchIdleGraceMs?: number;
}

/** A paginated list's result. */
interface ListResult<T> {
  /** Every item across pages. */
  items: T[];
  /** The list's resourceVersion, to watch from. */
  resourceVersion: string;
}

/** The Kubernetes API client. */
export class KubeClient {
  /** The connection settings the client was made with. */
  readonly config: KubeConnectionConfig;
  readonly #credentials: CredentialSource;
  readonly #budget: TokenBucket;
  readonly #timeoutMs: number;
  readonly #watchIdleGraceMs?: number;
  #client: Deno.HttpClient;
  #clientCertKey?: string;
  readonly #requests?: ReturnType<MetricsRegistry["counter"]>;

  /** Nothing is sent yet; requests share the `qps`/`burst` bucket unless they bring their own limiter. */
  constructor(config: KubeConnectionConfig, options: KubeClientOptions = {}) {
    this.config = config;
    this.#credentials = new CredentialSource(config.auth);
    this.#budget = new TokenBucket({ requestsPerMinute: (options.qps ?? 20) * 60, burst: options.burst ?? 30 });
    this.#timeoutMs = options.timeoutMs ?? DEFAULTS.kubeRequestTimeoutMs;
    this.#watchIdleGraceMs = options.watchIdleGraceMs;
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

  #url(path: string, query?: RequestOptions["query"]): URL {
    const url = new URL(this.config.server + path);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  #record(method: string, path: string, code: string): void {
    this.#requests?.inc({ method, resource: resourceName(path), code });
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
   * {@linkcode KubeClient.request} does.
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
    const timeout = AbortSignal.timeout(options.timeoutMs ?? this.#timeoutMs);
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
        this.#record(method, path, "too_large");
        throw new KubeApiError("invalid_answer", `${method} ${path}: ${cause.message}`, { status: response?.status });
      }
      if (options.signal?.aborted) throw options.signal.reason;
      const kind = timeout.aborted ? "timeout" : "network";
      this.#record(method, path, kind);
      throw new KubeApiError(
        kind,
        `${method} ${path}: ${kind === "timeout" ? "no answer in time" : causeChain(cause)}`,
      );
    }
    this.#record(method, path, String(response.status));
    if (!response.ok) throw errorFromAnswer(method, path, response, text);
    try {
      return (text ? JSON.parse(text) : {}) as T;
    } catch {
      throw new KubeApiError("invalid_answer", `${method} ${path}: the answer is not JSON`, {
        status: response.status,
      });
    }
  }

  /** The API server's `gitVersion` (`GET /version`), undefined when it cannot be read. */
  serverVersion(): Promise<string | undefined> {
    return this.get<{ gitVersion?: string }>("/version").then((version) => version.gitVersion, () => undefined);
  }

  /** GET one object (through `limiter` when given, else the client's bucket). */
  get<T>(path: string, signal?: AbortSignal, limiter?: RequestLimiter): Promise<T> {
    return this.request<T>("GET", path, { signal, limiter });
  }

  /**
   * Lists every page (`limit`/`continue`) of `path`.
   *
   * @throws {KubeApiError} `invalid_answer` for a page of more items than `limit`.
   */
  async list<T>(
    path: string,
    options: {
      labelSelector?: string;
      fieldSelector?: string;
      limit?: number;
      signal?: AbortSignal;
      limiter?: RequestLimiter;
    } = {},
  ): Promise<ListResult<T>> {
    const limit = options.limit ?? DEFAULTS.kubeListPageItems;
    const items: T[] = [];
    let continueToken: string | undefined;
    let resourceVersion = "";
    do {
      const page = await this.request<{ items: T[]; metadata: { resourceVersion: string; continue?: string } }>(
        "GET",
        path,
        {
          query: {
            limit,
            continue: continueToken,
            labelSelector: options.labelSelector,
            fieldSelector: options.fieldSelector,
          },
          signal: options.signal,
          timeoutMs: 60_000,
          limiter: options.limiter,
        },
      );
      if ((page.items?.length ?? 0) > limit) {
        throw new KubeApiError(
          "invalid_answer",
          `GET ${path}: a page of ${page.items.length} items, more than ${limit}`,
        );
      }
      items.push(...(page.items ?? []));
      resourceVersion = page.metadata.resourceVersion;
      continueToken = page.metadata.continue || undefined;
    } while (continueToken);
    return { items, resourceVersion };
  }

  /**
   * Lists every page of `path`, handing each item to `onItem` as it is decoded from the stream (see
   * {@linkcode decodeListStream}); returns the list's resourceVersion. Memory stays at one item, not one page.
   *
   * @throws {KubeApiError} `invalid_answer` for a page of more items than `limit`, or an item larger than 8 Mi
   * characters.
   */
  async listEach(
    path: string,
    options: { limit?: number; labelSelector?: string; fieldSelector?: string; signal?: AbortSignal },
    onItem: (item: unknown) => void,
  ): Promise<string> {
    let continueToken: string | undefined;
    let resourceVersion = "";
    const limit = options.limit ?? DEFAULTS.kubeListPageItems;
    do {
      await this.#budget.acquire(options.signal);
      const headers = await this.#prepare();
      const timeout = AbortSignal.timeout(60_000);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      const url = this.#url(path, {
        limit,
        continue: continueToken,
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
      });
      let page;
      try {
        const response = await fetch(url, { headers, client: this.#client, signal, redirect: "error" });
        this.#record("GET", path, String(response.status));
        if (!response.ok) throw errorFromAnswer("GET", path, response, await errorText(response));
        page = await decodeListStream(response.body!, onItem, { items: limit });
      } catch (cause) {
        if (cause instanceof ListTooLargeError) {
          this.#record("GET", path, "too_large");
          throw new KubeApiError("invalid_answer", `GET ${path}: ${cause.message}`);
        }
        if (cause instanceof KubeApiError) {
          if (cause.kind === "unauthorized") this.#credentials.invalidate();
          throw cause;
        }
        if (options.signal?.aborted) throw options.signal.reason;
        const kind = timeout.aborted ? "timeout" : "network";
        this.#record("GET", path, kind);
        throw new KubeApiError(kind, `GET ${path}: ${causeChain(cause)}`);
      }
      resourceVersion = page.resourceVersion;
      continueToken = page.continue;
    } while (continueToken);
    return resourceVersion;
  }

  /**
   * Watches `path` from `resourceVersion`, yielding events as they arrive (one JSON document per line; the response
   * is never buffered whole). Ends when the server closes the stream or `signal` aborts. An ERROR event with code 410
   * throws a `gone` {@linkcode KubeApiError}; a stream silent for `timeoutSeconds` plus 30 s ends (the connection is
   * dead: the caller watches again).
   */
  async *watch<T>(
    path: string,
    options: {
      resourceVersion: string;
      timeoutSeconds?: number;
      labelSelector?: string;
      fieldSelector?: string;
      signal?: AbortSignal;
      /** Called once the server accepted the watch (before any event). */
      onOpen?: () => void;
      /** A rate limiter of the caller's own (see {@linkcode RequestOptions.limiter}). */
      limiter?: RequestLimiter;
    },
  ): AsyncGenerator<WatchEvent<T>> {
    await (options.limiter ?? this.#budget).acquire(options.signal);
    const headers = await this.#prepare();
    const controller = new AbortController();
    const onAbort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const connectTimeout = setTimeout(() => controller.abort(new Error("watch connect timeout")), this.#timeoutMs);
    const timeoutSeconds = options.timeoutSeconds ?? DEFAULTS.kubeWatchTimeoutSeconds;
    const idle = watchIdleTimer(timeoutSeconds * 1000 + (this.#watchIdleGraceMs ?? WATCH_IDLE_GRACE_MS), controller);
    let reader: ReadableStreamDefaultReader<string> | undefined;
    const cancelReader = () => reader?.cancel().catch(() => {});
    controller.signal.addEventListener("abort", cancelReader, { once: true });
    try {
      let response: Response;
      try {
        response = await fetch(
          this.#url(path, {
            watch: 1,
            resourceVersion: options.resourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds,
            labelSelector: options.labelSelector,
            fieldSelector: options.fieldSelector,
          }),
          { headers, client: this.#client, signal: controller.signal, redirect: "error" },
        );
      } catch (cause) {
        if (options.signal?.aborted) return;
        this.#record("WATCH", path, "network");
        throw new KubeApiError("network", `WATCH ${path}: ${causeChain(cause)}`);
      } finally {
        clearTimeout(connectTimeout);
      }
      this.#record("WATCH", path, String(response.status));
      if (!response.ok) throw errorFromAnswer("WATCH", path, response, await errorText(response));
      options.onOpen?.();
      reader = response.body!.pipeThrough(idle.stream()).pipeThrough(new TextDecoderStream()).getReader();
      yield* watchEvents<T>(reader, { path, signal: options.signal });
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
      controller.signal.removeEventListener("abort", cancelReader);
      clearTimeout(connectTimeout);
      idle.stop();
      await reader?.cancel().catch(() => {});
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
