/**
 * The work queue's "wait for the user" path: a handler that throws {@linkcode WaitingForUser} is not retried with
 * backoff; it is looked at again when it is added (a change) or after its recheck time. Every test waits on the
 * handler's own calls, never on a fixed pause.
 */
import assert from "node:assert/strict";
import { WaitingForUser } from "../../../lib/runtime/waiting_for_user.ts";
import { WorkQueue } from "../../../lib/runtime/work_queue.ts";

/** A handler whose calls can be awaited one by one. */
function calls(handle: (n: number) => void) {
  const seen: number[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const handler = (_key: string) => {
    seen.push(performance.now());
    for (const w of waiters.filter((w) => seen.length >= w.count)) w.resolve();
    handle(seen.length);
    return Promise.resolve();
  };
  const reached = (count: number) =>
    seen.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve }));
  return { handler, seen, reached };
}

Deno.test("waiting for the user is no failure: no backoff, looked at again after the recheck time", async () => {
  const queue = new WorkQueue({ name: "t", baseDelayMs: 60_000 });
  const h = calls((n) => {
    if (n < 3) throw new WaitingForUser("InvalidThing", "fix the thing", { recheckAfterMs: 30 });
  });
  queue.start(h.handler);
  queue.add("a");
  await h.reached(3);
  assert.equal(queue.failures("a"), 0, "no failure counted");
  assert.equal(queue.backoffFor("a"), 60_000, "the backoff was not advanced");
  assert.ok(h.seen[2] - h.seen[0] < 30_000, "rechecked after 30 ms, not after the 60 s backoff");
  await queue.shutdown();
});

Deno.test("a change wakes a key that waits for the user at once, without waiting for the recheck", async () => {
  const queue = new WorkQueue({ name: "t" });
  const h = calls((n) => {
    if (n === 1) throw new WaitingForUser("InvalidThing", "fix the thing", { recheckAfterMs: 3_600_000 });
  });
  queue.start(h.handler);
  queue.add("a");
  await h.reached(1);
  queue.add("a"); // the user fixed it
  await h.reached(2);
  assert.equal(queue.failures("a"), 0);
  await queue.shutdown();
});

Deno.test("an ordinary error is a failure with backoff; waiting for the user afterwards forgets those failures", async () => {
  const queue = new WorkQueue({ name: "t", baseDelayMs: 10 });
  let outcome: "error" | "wait" = "error";
  const h = calls(() => {
    if (outcome === "error") throw new Error("outage");
    throw new WaitingForUser("InvalidThing", "fix the thing", { recheckAfterMs: 3_600_000 });
  });
  queue.start(h.handler);
  queue.add("a");
  await h.reached(2);
  assert.ok(queue.failures("a") >= 1, "an outage counts");
  outcome = "wait";
  await h.reached(3);
  queue.add("a");
  await h.reached(4);
  assert.equal(queue.failures("a"), 0, "a problem for the user resets the backoff");
  await queue.shutdown();
});

Deno.test("a cause gone for every key (a rotated token) retries the keys in backoff at once, not the others", async () => {
  const queue = new WorkQueue({ name: "t", baseDelayMs: 3_600_000 });
  let refused = true;
  const h = calls(() => {
    if (refused) throw new Error("401");
  });
  queue.start(h.handler);
  queue.add("a");
  await h.reached(1);
  queue.addAfter("b", 3_600_000); // a planned look, not a failure: stays planned
  refused = false;
  queue.retryFailedNow();
  await h.reached(2);
  assert.equal(h.seen.length, 2, "only the failed key ran");
  await queue.shutdown();
});
