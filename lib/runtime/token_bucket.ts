/**
 * One request budget for every Ankra Cloud call of the process: a token bucket (sustained rate + burst) served in
 * arrival order, which also
 *
 * - paces itself when the API's `X-RateLimit-Remaining` runs low, spreading what is left evenly until
 *   `X-RateLimit-Reset`, so normal work never meets a 429;
 * - stops every caller until the given time after a 429 with `Retry-After`.
 *
 * @module
 */
import { abortableSleep } from "./abort.ts";

/** Rate-limit headers of one answer. */
export interface RateLimitObservation {
  /** `X-RateLimit-Limit`: requests per minute. */
  limit?: number;
  /** `X-RateLimit-Remaining`: requests left in the window. */
  remaining?: number;
  /** `X-RateLimit-Reset`: window end, Unix seconds. */
  resetEpochSeconds?: number;
}

/** Options of {@linkcode RequestBudget}. */
export interface RequestBudgetOptions {
  /** Sustained requests per minute. */
  requestsPerMinute: number;
  /** Largest burst. */
  burst: number;
  /** Below this share of the API's limit left in the window, requests are paced (default 0.2). */
  lowWatermark?: number;
  /** Clock, milliseconds (tests). */
  now?: () => number;
  /** Sleep (tests). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The process-wide request budget. */
export class RequestBudget {
  readonly #ratePerMs: number;
  readonly #burst: number;
  readonly #lowWatermark: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  #tokens: number;
  #updatedAt: number;
  #pausedUntil = 0;
  #paceMs = 0;
  #lastGrant = -Infinity;
  #queue: Promise<void> = Promise.resolve();
  #remaining?: number;

  /** Creates a full bucket. */
  constructor(options: RequestBudgetOptions) {
    this.#ratePerMs = options.requestsPerMinute / 60_000;
    this.#burst = Math.max(1, options.burst);
    this.#lowWatermark = options.lowWatermark ?? 0.2;
    this.#now = options.now ?? (() => performance.now());
    this.#sleep = options.sleep ?? abortableSleep;
    this.#tokens = this.#burst;
    this.#updatedAt = this.#now();
  }

  /** The API's last reported `X-RateLimit-Remaining`, if any. */
  get apiRemaining(): number | undefined {
    return this.#remaining;
  }

  /** Waits for permission to send one request (callers are served in arrival order). */
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
      this.#refill(now);
      const waits = [
        this.#pausedUntil - now,
        this.#lastGrant + this.#paceMs - now,
        this.#tokens >= 1 ? 0 : (1 - this.#tokens) / this.#ratePerMs,
      ];
      const wait = Math.max(...waits);
      if (wait <= 0) {
        this.#tokens -= 1;
        this.#lastGrant = now;
        return;
      }
      await this.#sleep(Math.ceil(wait), signal);
    }
  }

  #refill(now: number): void {
    this.#tokens = Math.min(this.#burst, this.#tokens + (now - this.#updatedAt) * this.#ratePerMs);
    this.#updatedAt = now;
  }

  /** Adapts to the rate-limit headers of an answer. */
  observe(observation: RateLimitObservation, wallClockMs = Date.now()): void {
    const { limit, remaining, resetEpochSeconds } = observation;
    if (remaining === undefined || !Number.isFinite(remaining)) return;
    this.#remaining = remaining;
    const untilResetMs = resetEpochSeconds !== undefined ? Math.max(0, resetEpochSeconds * 1000 - wallClockMs) : 60_000;
    if (remaining <= 0) {
      this.pauseFor(untilResetMs);
      this.#paceMs = 0;
      return;
    }
    const threshold = limit !== undefined && limit > 0 ? limit * this.#lowWatermark : 10;
    this.#paceMs = remaining <= threshold ? untilResetMs / remaining : 0;
  }

  /** Stops every caller for `ms` (after a 429 with `Retry-After`). */
  pauseFor(ms: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, this.#now() + ms);
  }
}
