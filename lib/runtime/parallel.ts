/**
 * Work on a list side by side, at most a given number at a time — client-go's `workqueue.ParallelizeUntil` for
 * promises.
 *
 * @example
 * ```ts
 * await forEachParallel(nodes, 4, (node) => check(node)); // at most 4 checks in flight
 * ```
 *
 * @module
 */

/**
 * Calls `work` for every item, at most `workers` calls in flight at once, each item once, in list order as workers
 * free up; resolves when every call has settled. A call that rejects does not stop the others; the first rejection
 * is re-thrown at the end (callers that handle their own errors never see one).
 */
export async function forEachParallel<T>(
  items: readonly T[],
  workers: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { cause: unknown } | undefined;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      try {
        await work(item);
      } catch (cause) {
        failure ??= { cause };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(workers, items.length)) }, worker));
  if (failure) throw failure.cause;
}
