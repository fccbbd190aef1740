/**
 * The request budget of every Ankra Cloud call of the process, following the API's own limit instead of a fixed
 * pace. Every answer carries `X-RateLimit-Limit` (requests per minute), `X-RateLimit-Remaining` (left in the window)
 * and `X-RateLimit-Reset` (window end, Unix seconds); from them the budget
 *
 * - **spends freely** while plenty remains: requests go out at once, as many side by side as the callers send;
 * - **paces only near the window's end**: once what is left (minus the requests still in flight) falls to the reserve
 *   (10 % of the limit, at least 2), the rest is spread evenly until the reset, and nothing is sent once it is used
 *   up, so normal work never meets a 429;
 * - **stops everyone together** after a 429 until its `Retry-After` has passed;
 * - serves **high-priority** callers (the poll that turns a running load balancer into a Service address) before the
 *   others, and lets them use the reserve without pacing: a backlog of creates never starves the poll.
 *
 * Before the first answer, and with an API that sends no headers, at most `unknownConcurrency` requests are in
 * flight. When the window has passed its reset, one request goes first and its answer says what the new window holds
 * (the server's window may start later than this process thinks): at most one 429 per window, never a storm.
 * `ANKRA_CLOUD_REQUESTS_PER_MINUTE` is an optional upper bound on top (a token bucket), not the pace.
 *
 * No wait is longer than {@linkcode MAX_WAIT_MS} (5 minutes): a window said to end later, or a pause asked for longer,
 * counts as ending then, and the next answer says what holds.
 *
 * @module
 */
import { MAX_RETRY_AFTER_MS } from "../retry_after.ts";
import { abortableSleep } from "../runtime/abort.ts";
import { TokenBucket } from "../runtime/token_bucket.ts";

/**
 * The longest the budget holds callers for one window's end or one pause: 5 minutes, the longest `Retry-After` the
 * transport follows (a pause is one), so the two bounds cannot drift apart.
 */
export const MAX_WAIT_MS = MAX_RETRY_AFTER_MS;

/** Rate-limit headers of one answer. */
interface RateLimitObservation {
  /** `X-RateLimit-Limit`: requests per minute. */
  limit?: number;
  /** `X-RateLimit-Remaining`: requests left in the window. */
  remaining?: number;
  /** `X-RateLimit-Reset`: window end, Unix seconds. */
  resetEpochSeconds?: number;
}

/** Options of {@linkcode CloudRequestBudget}. */
interface CloudRequestBudgetOptions {
  /** Optional upper bound, requests per minute (`ANKRA_CLOUD_REQUESTS_PER_MINUTE`). */
  maxRequestsPerMinute?: number;
  /** Burst of the upper bound (`ANKRA_CLOUD_REQUEST_BURST`, default a tenth of the bound, at least 1). */
  burst?: number;
  /** Share of the API's limit kept for pacing at the window's end (default 0.1). */
  reserve?: number;
  /** Requests in flight while the API's limit is unknown (default 8). */
  unknownConcurrency?: number;
  /** Monotonic clock, milliseconds (tests). */
  now?: () => number;
  /** Wall clock, milliseconds since the epoch (tests). */
  wallNow?: () => number;
  /** Sleep (tests). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Permission to send one request; call it when the answer (or the failure) is in. */
type Release = () => void;

interface Waiter {
  high: boolean;
  wake: () => void;
}

/** The process-wide Ankra Cloud request budget. */
export class CloudRequestBudget {
  readonly #reserveShare: number;
  readonly #unknownConcurrency: number;
  readonly #now: () => number;
  readonly #wallNow: () => number;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #cap?: TokenBucket;
  #limit?: number;
  #remaining?: number;
  /** Window end on the monotonic clock. */
  #resetAt = 0;
  #inFlight = 0;
  #pausedUntil = 0;
  #lastGrant = -Infinity;
  readonly #waiters: Waiter[] = [];
  #throttled = 0;

  /** With `maxRequestsPerMinute`, a token bucket caps the rate on top of the API's own limit. */
  constructor(options: CloudRequestBudgetOptions = {}) {
    this.#reserveShare = options.reserve ?? 0.1;
    this.#unknownConcurrency = options.unknownConcurrency ?? 8;
    this.#now = options.now ?? (() => performance.now());
    this.#wallNow = options.wallNow ?? (() => Date.now());
    this.#sleep = options.sleep ?? abortableSleep;
    if (options.maxRequestsPerMinute) {
      this.#cap = new TokenBucket({
        requestsPerMinute: options.maxRequestsPerMinute,
        burst: options.burst ?? Math.max(1, Math.round(options.maxRequestsPerMinute / 10)),
        now: options.now,
        sleep: options.sleep,
      });
    }
  }

  /** The API's limit per minute, once an answer told it. */
  get apiLimit(): number | undefined {
    return this.#limit;
  }

  /** The API's last reported `X-RateLimit-Remaining`, if any. */
  get apiRemaining(): number | undefined {
    return this.#remaining;
  }

  /** Requests sent and not answered yet. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** How many times a request had to wait for the window (pacing or a 429 pause). */
  get throttled(): number {
    return this.#throttled;
  }

  /**
   * Waits for permission to send one request and returns the function to call once its answer is in. High-priority
   * callers go before the others.
   */
  async acquire(signal?: AbortSignal, options: { priority?: "high" | "normal" } = {}): Promise<Release> {
    if (this.#cap) await this.#cap.acquire(signal);
    const high = options.priority === "high";
    let waited = false;
    for (;;) {
      signal?.throwIfAborted();
      const wait = this.#waitFor(high);
      if (wait === 0) break;
      if (!waited) this.#throttled++;
      waited = true;
      await this.#park(high, wait, signal);
    }
    this.#inFlight++;
    this.#lastGrant = this.#now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inFlight--;
      this.#wakeOne();
    };
  }

  #reserve(): number {
    return Math.max(2, Math.ceil((this.#limit ?? 0) * this.#reserveShare));
  }

  /** True while the window has more left than its reserve: requests go out without pacing. */
  get plentyLeft(): boolean {
    if (this.#limit === undefined || this.#remaining === undefined) return true;
    if (this.#now() >= this.#resetAt) return false;
    return this.#remaining - this.#inFlight > this.#reserve();
  }

  /** Milliseconds until a request may go (0: now). */
  #waitFor(high: boolean): number {
    const now = this.#now();
    if (this.#pausedUntil > now) return this.#pausedUntil - now;
    // Normal callers let waiting high-priority ones go first.
    if (!high && this.#waiters.some((w) => w.high)) return 50;
    if (this.#limit === undefined || this.#remaining === undefined) {
      return this.#inFlight < this.#unknownConcurrency ? 0 : 50;
    }
    if (now >= this.#resetAt) {
      // Past the reset: one request finds out what the new window holds before the others go.
      return this.#inFlight === 0 ? 0 : 50;
    }
    const available = this.#remaining - this.#inFlight;
    if (available <= 0) return Math.max(1, this.#resetAt - now);
    if (high || available > this.#reserve()) return 0;
    // Near the window's end: what is left, evenly until the reset.
    const interval = (this.#resetAt - now) / available;
    return Math.max(0, Math.ceil(this.#lastGrant + interval - now));
  }

  async #park(high: boolean, ms: number, signal?: AbortSignal): Promise<void> {
    const { promise, resolve } = Promise.withResolvers<void>();
    const waiter: Waiter = { high, wake: resolve };
    this.#waiters.push(waiter);
    try {
      await Promise.race([promise, this.#sleep(ms, signal)]);
    } finally {
      const index = this.#waiters.indexOf(waiter);
      if (index >= 0) this.#waiters.splice(index, 1);
    }
  }

  #wakeOne(): void {
    const waiter = this.#waiters.find((w) => w.high) ?? this.#waiters[0];
    waiter?.wake();
  }

  /** Adapts to the rate-limit headers of an answer. */
  observe(observation: RateLimitObservation): void {
    const { limit, remaining, resetEpochSeconds } = observation;
    if (remaining === undefined || !Number.isFinite(remaining)) return;
    const now = this.#now();
    const untilReset = resetEpochSeconds !== undefined && Number.isFinite(resetEpochSeconds)
      ? Math.max(0, resetEpochSeconds * 1000 - this.#wallNow())
      : 60_000;
    const resetAt = now + Math.min(MAX_WAIT_MS, untilReset);
    if (limit !== undefined && limit > 0) this.#limit = limit;
    else if (this.#limit === undefined) this.#limit = Math.max(remaining, 1);
    // Answers of one window arrive out of order: keep the lowest count; a later reset starts a new window.
    const sameWindow = Math.abs(resetAt - this.#resetAt) < 1500;
    if (sameWindow && this.#remaining !== undefined && this.#now() < this.#resetAt) {
      this.#remaining = Math.min(this.#remaining, remaining);
    } else {
      this.#remaining = remaining;
      this.#resetAt = resetAt;
    }
    this.#wakeOne();
  }

  /** Stops every caller for `ms` (after a 429 with `Retry-After`), at most {@linkcode MAX_WAIT_MS}. */
  pauseFor(ms: number): void {
    const pause = Number.isNaN(ms) ? 0 : Math.min(MAX_WAIT_MS, Math.max(0, ms));
    this.#pausedUntil = Math.max(this.#pausedUntil, this.#now() + pause);
  }

  /** Milliseconds left of the current pause (0 when none). */
  get pausedForMs(): number {
    return Math.max(0, this.#pausedUntil - this.#now());
  }
}
