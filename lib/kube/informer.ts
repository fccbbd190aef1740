/**
 * List + watch into a slim store: a paginated list, then a watch from the list's resourceVersion with bookmarks;
 * when the stream ends the watch resumes from the last resourceVersion seen; on 410 Gone it relists (and reports
 * what changed meanwhile); errors back off exponentially — while the API server cannot be reached (a restart) only
 * 0.2 s → 1.6 s, so a returning server is seen within about two seconds; for errors it answers, 1 s → 30 s — and the
 * backoff resets as soon as a list or a watch succeeds, not only when an event arrives (a quiet watch gets none).
 * `synced` resolves after the first list.
 * Handlers hear about a change only when the slim copy changed, so kubelet heartbeats wake nobody.
 *
 * @module
 */
import * as log from "../log.ts";
import type { MetricsRegistry } from "../runtime/metrics.ts";
import { abortableSleep } from "../runtime/abort.ts";
import type { KubeClient } from "./client.ts";
import { isKubeError } from "./errors.ts";
import { sameExceptVersion } from "./slim.ts";
import { DEFAULTS } from "../defaults.ts";
import { type IndexedSyncedStore, Store, type StoreChange, type StoreIndex } from "./store.ts";

/** Options of {@linkcode Informer}. */
export interface InformerOptions<R, S extends { resourceVersion: string }> {
  /** Name for logs and metrics (`nodes`, `services`). */
  name: string;
  /** Lists and watches go through its `--kube-api-qps` bucket. */
  client: KubeClient;
  /** Collection path, e.g. `/api/v1/nodes`. */
  path: string;
  /** Raw object → slim copy. */
  slim: (raw: R) => S;
  /** Key of a slim object. */
  keyOf: (object: S) => string;
  /** Metrics registry (watch restarts). */
  metrics?: MetricsRegistry;
  /** Page size of lists (default 100: smaller pages keep the peak memory of a large first list low). */
  pageSize?: number;
  /** Server-side watch timeout range in seconds (default 300–600, randomised like client-go). */
  watchTimeoutSeconds?: [number, number];
}

/** Keeps a slim store in step with the API server. */
export class Informer<R, S extends { resourceVersion: string }> {
  /** Written only by this informer; controllers read it through {@linkcode Informer.watched}. */
  readonly #store = new Store<S>();
  readonly #options: InformerOptions<R, S> & Required<Pick<InformerOptions<R, S>, "pageSize" | "watchTimeoutSeconds">>;
  readonly #handlers: ((change: StoreChange<S>) => void)[] = [];
  readonly #synced = Promise.withResolvers<void>();
  #hasSynced = false;
  #resourceVersion = "";
  readonly #restarts?: ReturnType<MetricsRegistry["counter"]>;
  /** Lists performed (tests and metrics). */
  lists = 0;

  /** Creates the informer; call {@linkcode Informer.run} to start it. */
  constructor(options: InformerOptions<R, S>) {
    const { pageSize = DEFAULTS.informerPageItems, watchTimeoutSeconds = DEFAULTS.informerWatchTimeoutSeconds } =
      options;
    this.#options = { ...options, pageSize, watchTimeoutSeconds };
    this.#restarts = options.metrics?.counter(
      "kubernetes_watch_restarts_total",
      "Watch streams restarted, by resource and cause (ended, gone, error).",
    );
  }

  /** Resolves after the first complete list. */
  get synced(): Promise<void> {
    return this.#synced.promise;
  }

  /** True after the first complete list. */
  get hasSynced(): boolean {
    return this.#hasSynced;
  }

  /** The last resourceVersion seen. */
  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  /** Declares a secondary index of the store (before {@linkcode Informer.run}, as client-go's indexers are). */
  addIndex(index: StoreIndex<S>): void {
    this.#store.addIndex(index);
  }

  /** The read-only store, the change notifications and the sync state: what a controller is handed. */
  watched(): IndexedSyncedStore<S> {
    const hasSynced = () => this.hasSynced;
    const synced = () => this.synced;
    return {
      store: this.#store.reader(),
      onChange: (handler) => this.onChange(handler),
      get hasSynced() {
        return hasSynced();
      },
      get synced() {
        return synced();
      },
    };
  }

  /** Registers a change handler (called synchronously; keep it cheap: enqueue work). */
  onChange(handler: (change: StoreChange<S>) => void): void {
    this.#handlers.push(handler);
  }

  #emit(change: StoreChange<S>): void {
    for (const handler of this.#handlers) {
      try {
        handler(change);
      } catch (cause) {
        log.error("informer handler failed", { informer: this.#options.name, error: cause });
      }
    }
  }

  #apply(type: "ADDED" | "MODIFIED" | "DELETED", object: S): void {
    const key = this.#options.keyOf(object);
    if (type === "DELETED") {
      const old = this.#store.delete(key);
      if (old) this.#emit({ type: "deleted", key, old });
      return;
    }
    const old = this.#store.set(key, object);
    if (!old) this.#emit({ type: "added", key, object });
    else if (!sameExceptVersion(old, object)) this.#emit({ type: "updated", key, object, old });
  }

  async #list(signal: AbortSignal): Promise<void> {
    const seen = new Set<string>();
    // Each item is slimmed as it is decoded: the raw page is never held.
    const resourceVersion = await this.#options.client.listEach(
      this.#options.path,
      { limit: this.#options.pageSize, signal },
      (raw) => {
        const object = this.#options.slim(raw as R);
        seen.add(this.#options.keyOf(object));
        this.#apply("ADDED", object);
      },
    );
    this.lists++;
    for (const key of this.#store.keys()) {
      if (!seen.has(key)) {
        const old = this.#store.delete(key)!;
        this.#emit({ type: "deleted", key, old });
      }
    }
    this.#resourceVersion = resourceVersion;
    if (!this.#hasSynced) {
      this.#hasSynced = true;
      this.#synced.resolve();
    }
  }

  /** Runs list + watch until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { name, client, path } = this.#options;
    let needList = true;
    let failures = 0;
    const [minTimeout, maxTimeout] = this.#options.watchTimeoutSeconds;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.#list(signal);
          needList = false;
          failures = 0;
        }
        const timeoutSeconds = Math.round(minTimeout + Math.random() * (maxTimeout - minTimeout));
        for await (
          const event of client.watch<R & { metadata?: { resourceVersion?: string } }>(path, {
            resourceVersion: this.#resourceVersion,
            timeoutSeconds,
            signal,
            onOpen: () => (failures = 0),
          })
        ) {
          failures = 0;
          const rv = event.object?.metadata?.resourceVersion;
          if (event.type !== "BOOKMARK") {
            this.#apply(event.type as "ADDED" | "MODIFIED" | "DELETED", this.#options.slim(event.object));
          }
          if (rv) this.#resourceVersion = rv;
        }
        if (signal.aborted) return;
        this.#restarts?.inc({ resource: name, cause: "ended" });
        log.info(4, "watch ended; resuming", { resource: name, resourceVersion: this.#resourceVersion });
      } catch (cause) {
        if (signal.aborted) return;
        if (isKubeError(cause, "gone")) {
          this.#restarts?.inc({ resource: name, cause: "gone" });
          log.info(2, "watch resourceVersion too old; relisting", { resource: name });
          needList = true;
          continue;
        }
        failures++;
        this.#restarts?.inc({ resource: name, cause: "error" });
        const delay = retryDelay(cause, failures) * (0.8 + Math.random() * 0.4);
        log.warn("list/watch failed; retrying", { resource: name, error: cause, retryInMs: Math.round(delay) });
        await abortableSleep(delay, signal).catch(() => {});
      }
    }
  }
}

/**
 * The pause before the `failures`-th retry of a list or watch: 0.2 s doubling to 1.6 s while the API server cannot be
 * reached (it is restarting: be there when it is back), 1 s doubling to 30 s for errors it answers.
 */
function retryDelay(cause: unknown, failures: number): number {
  const exponent = Math.min(Math.max(failures - 1, 0), 5);
  if (isKubeError(cause, "network") || isKubeError(cause, "timeout")) return Math.min(1_600, 200 * 2 ** exponent);
  return Math.min(30_000, 1_000 * 2 ** exponent);
}
