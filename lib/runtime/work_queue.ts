/**
 * A controller work queue: keys are deduplicated, one worker handles a key at a time (a key added while it is being
 * handled runs again afterwards), failures retry with per-key exponential backoff (5 s → 300 s, the framework's
 * service-controller values), a handler can ask to look again after N ms, a {@linkcode WaitingForUser} error waits for
 * the user (no backoff, a slow recheck), and shutdown waits for the handlers in flight. This is the one place that
 * decides between retry, look-again-later and wait-for-the-user.
 *
 * Delayed keys share one timer, armed for the earliest: a thousand served Services each waiting for its drift check
 * hold a thousand numbers, not a thousand runtime timers (each a timer object, its closures and a pending promise).
 *
 * @module
 */
import * as log from "../log.ts";
import type { MetricsRegistry } from "./metrics.ts";
import { WaitingForUser } from "./waiting_for_user.ts";
import { DEFAULTS } from "../defaults.ts";

/** What a handler returns: nothing (done) or when to look again. */
export type ReconcileResult = void | { requeueAfterMs: number };

/** Options of {@linkcode WorkQueue}. */
interface WorkQueueOptions {
  /** Name for logs and metrics. */
  name: string;
  /** Workers (default 1). */
  concurrency?: number;
  /** First retry delay (default 5 s). */
  baseDelayMs?: number;
  /** Largest retry delay (default 300 s). */
  maxDelayMs?: number;
  /** Where the `workqueue_*` depth, adds, retries and duration metrics are registered, labelled with `name`. */
  metrics?: MetricsRegistry;
}

/** The work queue. */
export class WorkQueue {
  readonly #options: Required<Omit<WorkQueueOptions, "metrics">>;
  #queue: string[] = [];
  /** When each key of {@linkcode WorkQueue.#queue} was added (`performance.now()`), at the same index: plain numbers. */
  #addedTimes: number[] = [];
  readonly #queued = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #dirty = new Set<string>();
  readonly #failures = new Map<string, number>();
  /** When each delayed key is due (`performance.now()` time). */
  readonly #due = new Map<string, number>();
  /** The one timer, armed for the earliest due key, and when it fires. */
  #timer?: ReturnType<typeof setTimeout>;
  #timerAt = Infinity;
  #waiters: (() => void)[] = [];
  #shuttingDown = false;
  #workers: Promise<void>[] = [];
  readonly #metrics?: {
    depth: ReturnType<MetricsRegistry["gauge"]>;
    adds: ReturnType<MetricsRegistry["counter"]>;
    retries: ReturnType<MetricsRegistry["counter"]>;
    latency: ReturnType<MetricsRegistry["histogram"]>;
    duration: ReturnType<MetricsRegistry["histogram"]>;
  };

  /** Keys may be added at once; no worker takes one before {@linkcode WorkQueue.start}. */
  constructor(options: WorkQueueOptions) {
    const { name, concurrency = 1, baseDelayMs = DEFAULTS.retryBaseMs, maxDelayMs = DEFAULTS.retryMaxMs } = options;
    this.#options = { name, concurrency, baseDelayMs, maxDelayMs };
    const m = options.metrics;
    if (m) {
      const buckets = [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 60, 300];
      this.#metrics = {
        depth: m.gauge("workqueue_depth", "Keys waiting in the work queue."),
        adds: m.counter("workqueue_adds_total", "Keys added to the work queue."),
        retries: m.counter("workqueue_retries_total", "Keys retried after a failure."),
        latency: m.histogram("workqueue_queue_duration_seconds", "Time a key waits before a worker takes it.", buckets),
        duration: m.histogram("workqueue_work_duration_seconds", "Time a worker spends on a key.", buckets),
      };
    }
  }

  /** Keys waiting (not counting delayed ones). */
  get length(): number {
    return this.#queue.length;
  }

  /** Failures in a row of `key`. */
  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  #depth(): void {
    this.#metrics?.depth.set(this.#queue.length, { name: this.#options.name });
  }

  /** Adds `key` now (no-op if already waiting). */
  add(key: string): void {
    if (this.#shuttingDown) return;
    this.#due.delete(key);
    if (this.#processing.has(key)) {
      this.#dirty.add(key);
      return;
    }
    if (this.#queued.has(key)) return;
    this.#queued.add(key);
    this.#queue.push(key);
    this.#addedTimes.push(performance.now());
    this.#metrics?.adds.inc({ name: this.#options.name });
    this.#depth();
    this.#waiters.shift()?.();
  }

  /** Adds `key` after `delayMs` (an earlier pending add wins). */
  addAfter(key: string, delayMs: number): void {
    if (this.#shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const at = performance.now() + delayMs;
    const pending = this.#due.get(key);
    if (pending !== undefined && pending <= at) return;
    this.#due.set(key, at);
    if (at < this.#timerAt) this.#arm(at);
  }

  #arm(at: number): void {
    clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, at - performance.now()));
  }

  /** Adds every key that is due and arms the timer for the next one. */
  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    const due: string[] = [];
    for (const [key, at] of this.#due) {
      if (at <= now) due.push(key);
      else next = Math.min(next, at);
    }
    for (const key of due) this.add(key);
    if (next < Infinity) this.#arm(next);
  }

  /** The backoff for the next failure of `key`: base × 2^(failures), capped. */
  backoffFor(key: string): number {
    const failures = this.#failures.get(key) ?? 0;
    return Math.min(this.#options.maxDelayMs, this.#options.baseDelayMs * 2 ** failures);
  }

  /** Re-adds `key` after its backoff and counts the failure. */
  addRateLimited(key: string): number {
    const delay = this.backoffFor(key);
    this.#failures.set(key, (this.#failures.get(key) ?? 0) + 1);
    this.#metrics?.retries.inc({ name: this.#options.name });
    this.addAfter(key, delay);
    return delay;
  }

  /**
   * Runs every key that waits out a failure's backoff now (its failure count stays): for a cause that went away
   * for all keys at once, such as a rotated API token.
   */
  retryFailedNow(): void {
    for (const key of [...this.#due.keys()]) if (this.#failures.has(key)) this.add(key);
  }

  /** Forgets the failures of `key`. */
  forget(key: string): void {
    this.#failures.delete(key);
  }

  /** The next key and when it was added, once there is one; undefined once shutting down. */
  async #next(): Promise<{ key: string; added: number } | undefined> {
    while (!this.#shuttingDown) {
      const key = this.#queue.shift();
      const added = this.#addedTimes.shift()!;
      if (key !== undefined) {
        this.#queued.delete(key);
        this.#depth();
        return { key, added };
      }
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    return undefined;
  }

  /**
   * Starts the workers with `handler`. A thrown error retries the key with backoff; a thrown
   * {@linkcode WaitingForUser} looks again after its recheck time without backoff; `{requeueAfterMs}` looks again
   * after that time (and resets the backoff); nothing forgets the key's failures.
   */
  start(handler: (key: string) => Promise<ReconcileResult>): void {
    const worker = async () => {
      for (;;) {
        const next = await this.#next();
        if (next === undefined) return;
        const { key, added } = next;
        this.#processing.add(key);
        this.#metrics?.latency.observe((performance.now() - added) / 1000, { name: this.#options.name });
        const started = performance.now();
        try {
          const result = await handler(key);
          this.forget(key);
          if (result && result.requeueAfterMs >= 0) this.addAfter(key, result.requeueAfterMs);
        } catch (cause) {
          if (cause instanceof WaitingForUser) {
            this.forget(key);
            this.addAfter(key, cause.recheckAfterMs);
            log.info(2, "waiting for the user", { queue: this.#options.name, key, reason: cause.reason, error: cause });
            continue;
          }
          const delay = this.addRateLimited(key);
          log.info(2, "reconcile failed; retrying", {
            queue: this.#options.name,
            key,
            retryInSeconds: Math.round(delay / 1000),
            error: cause,
          });
        } finally {
          this.#metrics?.duration.observe((performance.now() - started) / 1000, { name: this.#options.name });
          this.#processing.delete(key);
          if (this.#dirty.delete(key)) this.add(key);
        }
      }
    };
    for (let i = 0; i < this.#options.concurrency; i++) this.#workers.push(worker());
  }

  /** Stops taking keys, cancels delayed adds and waits for the handlers in flight. */
  async shutdown(): Promise<void> {
    this.#shuttingDown = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
    this.#due.clear();
    for (const wake of this.#waiters.splice(0)) wake();
    await Promise.all(this.#workers);
  }
}
