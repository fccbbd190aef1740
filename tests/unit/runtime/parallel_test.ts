import assert from "node:assert/strict";
import { forEachParallel } from "../../../lib/runtime/parallel.ts";

/** A promise the test resolves by hand. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

Deno.test("forEachParallel: at most `workers` calls in flight, every item once, in list order", async () => {
  const gates = Array.from({ length: 7 }, gate);
  const started: number[] = [];
  let inFlight = 0;
  let most = 0;
  const done = forEachParallel([0, 1, 2, 3, 4, 5, 6], 3, async (i) => {
    started.push(i);
    most = Math.max(most, ++inFlight);
    await gates[i].opened;
    inFlight--;
  });
  await Promise.resolve();
  assert.deepEqual(started, [0, 1, 2], "three start at once");
  for (const g of gates) g.open();
  await done;
  assert.deepEqual(started, [0, 1, 2, 3, 4, 5, 6]);
  assert.equal(most, 3);
});

Deno.test("forEachParallel: a failing call stops none of the others; its error comes back at the end", async () => {
  const seen: number[] = [];
  await assert.rejects(
    forEachParallel([1, 2, 3, 4], 2, (i) => {
      seen.push(i);
      return i === 2 ? Promise.reject(new Error("item 2 failed")) : Promise.resolve();
    }),
    /item 2 failed/,
  );
  assert.deepEqual(seen, [1, 2, 3, 4]);
});

Deno.test("forEachParallel: an empty list resolves at once", async () => {
  await forEachParallel([], 4, () => Promise.reject(new Error("never called")));
});
