/**
 * A token bucket (sustained rate + burst) served in arrival order: the Kubernetes client's `--kube-api-qps` /
 * `--kube-api-burst`, and the optional upper bound a user sets on Ankra Cloud requests
 * (`ANKRA_CLOUD_REQUESTS_PER_MINUTE`). A caller that gives up (its signal aborts) leaves the line without blocking
 * those behind it.
 *
 * @module
 */
import { abortableSleep } from "./abort.ts";

/** Options of {@linkcode TokenBucket}. */
interface TokenBucketOptions {
  /** Sustained requests per minute. */
  requestsPerMinute: number;
  /** Tokens the bucket holds when full, at least 1; a new bucket starts full. */
  burst: number;
  /** Clock, milliseconds (tests). */
  now?: () => number;
  /** Sleep (tests). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** A token bucket. */
export class TokenBucket {
  readonly #ratePerMs: number;
  readonly #burst: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  #tokens: number;
  #updatedAt: number;
  #queue: Promise<void> = Promise.resolve();

  /** Creates a full bucket. */
  constructor(options: TokenBucketOptions) {
    this.#ratePerMs = options.requestsPerMinute / 60_000;
    this.#burst = Math.max(1, options.burst);
    this.#now = options.now ?? (() => performance.now());
    this.#sleep = options.sleep ?? abortableSleep;
    this.#tokens = this.#burst;
    this.#updatedAt = this.#now();
  }

  /** Sustained rate, requests per minute. */
  get requestsPerMinute(): number {
    return this.#ratePerMs * 60_000;
  }

  /** Waits for one token (callers are served in arrival order). */
  acquire(signal?: AbortSignal): Promise<void> {
    const turn = this.#queue.then(() => this.#take(signal));
    // A caller that gave up must not block the ones behind it.
    this.#queue = turn.catch(() => {});
    return turn;
  }

  async #take(signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const now = this.#now();
      this.#tokens = Math.min(this.#burst, this.#tokens + (now - this.#updatedAt) * this.#ratePerMs);
      this.#updatedAt = now;
      if (this.#tokens >= 1) {
        this.#tokens -= 1;
        return;
      }
      await this.#sleep(Math.ceil((1 - this.#tokens) / this.#ratePerMs), signal);
    }
  }
}
