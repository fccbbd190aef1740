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

/**
 * Sleeps `ms`, or rejects with the signal's reason when it aborts first. A delay beyond {@linkcode MAX_TIMER_MS} is
 * slept in steps below it (an infinite one until the signal aborts).
 */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const until = performance.now() + (Number.isNaN(ms) ? 0 : Math.max(0, ms));
    let timer: ReturnType<typeof setTimeout>;
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const step = () => {
      const left = until - performance.now();
      if (left > MAX_TIMER_MS) {
        timer = setTimeout(step, MAX_TIMER_MS);
        return;
      }
      signal?.removeEventListener("abort", onAbort);
      resolve();
    };
    timer = setTimeout(step, timerDelay(ms));
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
