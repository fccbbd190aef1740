/**
 * Waiting with abort signals: a sleep that ends early when aborted, and a promise that settles when a signal aborts.
 *
 * A sleep longer than the timer limit ({@linkcode MAX_TIMER_MS}, 2^31−1 ms ≈ 24.8 days) waits in steps below it: the
 * runtime would otherwise fire such a timer after 1 ms and print a `TimeoutOverflowWarning`, so a caller sleeping in a
 * loop would spin.
 *
 * @module
 */

/** The longest delay one timer takes (2^31−1 ms); longer ones fire at once in the runtime. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A delay a single timer can take: `ms` rounded into `0 … MAX_TIMER_MS` (a negative or not-a-number delay is 0, an
 * infinite one the limit).
 */
export function timerDelay(ms: number): number {
  if (Number.isNaN(ms) || ms <= 0) return 0;
  return Math.min(ms, MAX_TIMER_MS);
}

/** The clock and the timers a sleep runs on: the runtime's, or a test's fake one. */
export interface SleepClock {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  /** Calls `run` after `ms`; the handle cancels it. */
  setTimeout(run: () => void, ms: number): unknown;
  /** Cancels a timer. */
  clearTimeout(handle: unknown): void;
}

const RUNTIME_CLOCK: SleepClock = {
  now: () => performance.now(),
  setTimeout: (run, ms) => setTimeout(run, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Sleeps `ms`, or rejects with the signal's reason when it aborts first. A delay beyond {@linkcode MAX_TIMER_MS} is
 * slept in steps below it (an infinite one until the signal aborts). `options.clock` replaces the runtime's clock and
 * timers (tests).
 */
export function abortableSleep(ms: number, signal?: AbortSignal, options: { clock?: SleepClock } = {}): Promise<void> {
  const { clock = RUNTIME_CLOCK } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const until = clock.now() + (Number.isNaN(ms) ? 0 : Math.max(0, ms));
    let timer: unknown;
    const onAbort = () => {
      clock.clearTimeout(timer);
      reject(signal!.reason);
    };
    const step = () => {
      const left = until - clock.now();
      if (left > MAX_TIMER_MS) {
        timer = clock.setTimeout(step, MAX_TIMER_MS);
        return;
      }
      signal?.removeEventListener("abort", onAbort);
      resolve();
    };
    timer = clock.setTimeout(step, timerDelay(ms));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Resolves when `signal` aborts (at once if it already has). */
export function whenAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
