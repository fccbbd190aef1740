/**
 * Waiting on a condition instead of for a fixed time: the test goes on as soon as what it waits for holds, and fails
 * with a message naming it when it does not hold in time. The one poll loop of the tests: every wait on a state
 * goes through {@linkcode eventually}.
 *
 * @module
 */

/** How {@linkcode eventually} waits. */
export interface EventuallyOptions {
  /** How long the condition may take, milliseconds. Default 10 000. */
  timeoutMs?: number;
  /** What is waited for, named in the failure. Default `"condition"`. */
  what?: string;
  /** The pause between two looks, milliseconds. Default 50. */
  intervalMs?: number;
}

/** The values of `T` that hold: what {@linkcode eventually} resolves with. */
export type Held<T> = Exclude<T, false | 0 | "" | null | undefined>;

/**
 * Resolves with the first truthy value `check` returns (looking every `intervalMs`, 50 ms unless told); throws
 * `<what> not reached within <timeoutMs> ms` when it has returned none by then. An exception from `check` ends the
 * wait with that exception (a check that should ride out errors catches them itself).
 *
 * The second argument is the timeout in milliseconds or an {@linkcode EventuallyOptions}; `what` names the
 * condition when the second argument is a number.
 *
 * @example Waiting for a value
 * ```ts
 * const lb = await eventually(() => sim.loadBalancers.items.values().next().value, { what: "a load balancer" });
 * ```
 */
export function eventually(
  check: () => boolean | Promise<boolean>,
  timeout?: number | EventuallyOptions,
  what?: string,
): Promise<void>;
/** The value-returning form of {@linkcode eventually}: resolves with the first truthy value of `check`. */
export function eventually<T>(
  check: () => T | Promise<T>,
  timeout?: number | EventuallyOptions,
  what?: string,
): Promise<Held<T>>;
export async function eventually<T>(
  check: () => T | Promise<T>,
  timeout: number | EventuallyOptions = {},
  what?: string,
): Promise<Held<T>> {
  const options = typeof timeout === "number" ? { timeoutMs: timeout, what } : timeout;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value) return value as Held<T>;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`${options.what ?? "condition"} not reached within ${timeoutMs} ms`);
}
