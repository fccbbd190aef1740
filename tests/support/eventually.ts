/**
 * Waiting on a condition instead of for a fixed time: the test goes on as soon as what it waits for holds, and fails
 * with a message naming it when it does not hold in time.
 *
 * @module
 */

/**
 * Resolves as soon as `check` holds (looking every 50 ms); throws `<what> not reached within <timeoutMs> ms` when it
 * has not held by then. An exception from `check` ends the wait with that exception.
 */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = "condition") {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} not reached within ${timeoutMs} ms`);
}
