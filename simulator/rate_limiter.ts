/**
 * Per-credential requests-per-minute limit with the API's headers: `X-RateLimit-Limit`, `X-RateLimit-Remaining` and
 * `X-RateLimit-Reset` (window end, Unix seconds) on every answer; past the limit a 429 with `Retry-After`.
 *
 * @module
 */

/** The headers and the verdict for one request. */
export interface RateLimitResult {
  /** True when the request may run. */
  allowed: boolean;
  /** Headers to add to the answer. */
  headers: Record<string, string>;
  /** Seconds to wait when refused. */
  retryAfterSeconds: number;
}

/** Fixed one-minute windows per credential. */
export class RateLimiter {
  #windows = new Map<string, { start: number; count: number }>();
  readonly #now: () => number;
  readonly #limit: () => number;

  /** Creates the limiter; `limit` is read on every request so it can be changed at run time. */
  constructor(now: () => number, limit: () => number) {
    this.#now = now;
    this.#limit = limit;
  }

  /** Counts one request of `credential`. */
  take(credential: string): RateLimitResult {
    const now = this.#now();
    const limit = this.#limit();
    let window = this.#windows.get(credential);
    if (!window || now - window.start >= 60_000) {
      window = { start: now, count: 0 };
      this.#windows.set(credential, window);
    }
    const resetMs = window.start + 60_000;
    const allowed = window.count < limit;
    if (allowed) window.count++;
    const headers = {
      "X-RateLimit-Limit": String(limit),
      "X-RateLimit-Remaining": String(Math.max(0, limit - window.count)),
      "X-RateLimit-Reset": String(Math.ceil(resetMs / 1000)),
    };
    return { allowed, headers, retryAfterSeconds: Math.max(1, Math.ceil((resetMs - now) / 1000)) };
  }

  /** Forgets every window. */
  clear(): void {
    this.#windows.clear();
  }
}
