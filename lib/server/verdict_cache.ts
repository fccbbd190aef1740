/**
 * A bounded cache of authorization verdicts by key (a token's hash): each entry is fresh for its own time to live,
 * the least recently used entry goes first when the cache is full, and an expired entry is kept (until it is pushed
 * out) so the caller can still tell a token it has seen before from one it has never seen. Memory is therefore
 * bounded by the entry count, whatever the callers send.
 *
 * @module
 */

/** One entry as {@linkcode VerdictCache.get} returns it. */
interface CachedVerdict<V> {
  /** The verdict. */
  value: V;
  /** True while its time to live lasts; false once it has expired (a new review is due). */
  fresh: boolean;
}

/** Options of {@linkcode VerdictCache}. */
interface VerdictCacheOptions {
  /** Most entries held (the least recently used one goes first). */
  maxEntries: number;
  /** Clock, milliseconds (tests). */
  now?: () => number;
}

/** A bounded least-recently-used cache with a time to live per entry. */
export class VerdictCache<V> {
  readonly #entries = new Map<string, { value: V; until: number }>();
  readonly #maxEntries: number;
  readonly #now: () => number;

  /** Creates an empty cache. */
  constructor(options: VerdictCacheOptions) {
    this.#maxEntries = Math.max(1, options.maxEntries);
    this.#now = options.now ?? (() => performance.now());
  }

  /** Entries held. */
  get size(): number {
    return this.#entries.size;
  }

  /** The entry for `key` (marked most recently used), fresh or expired; undefined when there is none. */
  get(key: string): CachedVerdict<V> | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return { value: entry.value, fresh: entry.until > this.#now() };
  }

  /** Keeps `value` for `key`, fresh for `ttlMs`; pushes out the least recently used entry when full. */
  set(key: string, value: V, ttlMs: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, until: this.#now() + ttlMs });
    while (this.#entries.size > this.#maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
  }
}
