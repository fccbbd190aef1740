/**
 * The Kubernetes API client's verbs over its transport (`transport.ts`: TLS, credentials, QPS/burst, retries, typed
 * errors, metrics): one request ({@linkcode KubeClient.request}, {@linkcode KubeClient.send}), one object
 * ({@linkcode KubeClient.get}), every page of a list whole ({@linkcode KubeClient.list}) or item by item as it is
 * decoded from the stream ({@linkcode KubeClient.listEach}), and watches parsed line by line from the stream
 * ({@linkcode KubeClient.watch}).
 *
 * Bounded whatever the server sends: an answer read whole is at most 32 MiB (`answer_limits.ts`), a list page
 * streamed item by item holds at most the `limit` it asked for (each item, like each watch event, at most 8 Mi
 * characters), a watch that delivers nothing for its `timeoutSeconds` plus {@linkcode DEFAULTS.watchIdleGraceMs} is
 * ended (a dead connection), `Retry-After` counts for at most 5 minutes, and redirects are refused. Each breach is an
 * `invalid_answer` {@linkcode KubeApiError}.
 *
 * @module
 */
import { errorText, watchIdleTimer } from "./answer_limits.ts";
import type { KubeConnectionConfig } from "./kubeconfig.ts";
import { decodeListStream, ListTooLargeError } from "./list_stream.ts";
import { causeChain } from "../error_text.ts";
import { errorFromAnswer, KubeApiError } from "./errors.ts";
import { KubeTransport, type KubeTransportOptions, type RequestLimiter, type RequestOptions } from "./transport.ts";
import { type WatchEvent, watchEvents } from "./watch_events.ts";
import { type TextChunks, textChunks } from "../runtime/text_chunks.ts";
import { DEFAULTS } from "../defaults.ts";

/** Options of {@linkcode KubeClient}: its transport's, and the watches'. */
interface KubeClientOptions extends KubeTransportOptions {
  /** How long past its `timeoutSeconds` a silent watch is ended (default {@linkcode DEFAULTS.watchIdleGraceMs}). */
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
  readonly #transport: KubeTransport;
  readonly #watchIdleGraceMs: number;

  /** Nothing is sent yet; requests share the `qps`/`burst` bucket unless they bring their own limiter. */
  constructor(config: KubeConnectionConfig, options: KubeClientOptions = {}) {
    this.config = config;
    this.#transport = new KubeTransport(config, options);
    this.#watchIdleGraceMs = options.watchIdleGraceMs ?? DEFAULTS.watchIdleGraceMs;
  }

  /** Releases the HTTP client. */
  close(): void {
    this.#transport.close();
  }

  /**
   * Sends one request and returns the parsed JSON answer. Retries up to three times on 429 (after `Retry-After`)
   * and once after a 401 with refreshed credentials.
   *
   * @throws {KubeApiError} on any failure.
   */
  request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return this.#transport.request<T>(method, path, options);
  }

  /**
   * Sends a write whose answer nobody reads (the API server's echo of the object) and drops that answer unparsed,
   * through one small buffer: a status patch or an event costs no decoded copy of its object. Retries as
   * {@linkcode KubeClient.request} does.
   *
   * @throws {KubeApiError} on any failure.
   */
  send(method: string, path: string, options: RequestOptions = {}): Promise<void> {
    return this.#transport.send(method, path, options);
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
    const transport = this.#transport;
    let continueToken: string | undefined;
    let resourceVersion = "";
    const limit = options.limit ?? DEFAULTS.kubeListPageItems;
    do {
      const headers = await transport.authorize(undefined, options.signal);
      const timeout = AbortSignal.timeout(60_000);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      const query = {
        limit,
        continue: continueToken,
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
      };
      let page;
      try {
        const response = await transport.fetch(path, query, headers, signal);
        transport.record("GET", path, String(response.status));
        if (!response.ok) throw errorFromAnswer("GET", path, response, await errorText(response));
        page = await decodeListStream(response.body!, onItem, { items: limit });
      } catch (cause) {
        if (cause instanceof ListTooLargeError) {
          transport.record("GET", path, "too_large");
          throw new KubeApiError("invalid_answer", `GET ${path}: ${cause.message}`);
        }
        if (cause instanceof KubeApiError) {
          if (cause.kind === "unauthorized") transport.invalidateCredentials();
          throw cause;
        }
        if (options.signal?.aborted) throw options.signal.reason;
        const kind = timeout.aborted ? "timeout" : "network";
        transport.record("GET", path, kind);
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
   * throws a `gone` {@linkcode KubeApiError}; a stream silent for `timeoutSeconds` plus the idle grace (30 s) ends
   * (the connection is dead: the caller watches again).
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
    const transport = this.#transport;
    const headers = await transport.authorize(options.limiter, options.signal);
    const controller = new AbortController();
    const onAbort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const connectTimeout = setTimeout(() => controller.abort(new Error("watch connect timeout")), transport.timeoutMs);
    const timeoutSeconds = options.timeoutSeconds ?? DEFAULTS.kubeWatchTimeoutSeconds;
    const idle = watchIdleTimer(timeoutSeconds * 1000 + this.#watchIdleGraceMs, controller);
    let reader: TextChunks | undefined;
    const cancelReader = () => reader?.cancel().catch(() => {});
    controller.signal.addEventListener("abort", cancelReader, { once: true });
    try {
      let response: Response;
      try {
        const query = {
          watch: 1,
          resourceVersion: options.resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds,
          labelSelector: options.labelSelector,
          fieldSelector: options.fieldSelector,
        };
        response = await transport.fetch(path, query, headers, controller.signal);
      } catch (cause) {
        if (options.signal?.aborted) return;
        transport.record("WATCH", path, "network");
        throw new KubeApiError("network", `WATCH ${path}: ${causeChain(cause)}`);
      } finally {
        clearTimeout(connectTimeout);
      }
      transport.record("WATCH", path, String(response.status));
      if (!response.ok) throw errorFromAnswer("WATCH", path, response, await errorText(response));
      options.onOpen?.();
      reader = textChunks(response.body!, { onBytes: idle.restart });
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
