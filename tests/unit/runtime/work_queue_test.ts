import assert from "node:assert/strict";
import { WorkQueue } from "../../../lib/runtime/work_queue.ts";
import { eventually } from "../../support/wait/eventually.ts";

/** Lets every timer that is already due and every pending callback run: one turn of the event loop. */
const nextTurn = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("a key added many times while waiting is handled once", async () => {
  const queue = new WorkQueue({ name: "t" });
  const seen: string[] = [];
  for (let i = 0; i < 5; i++) queue.add("a");
  queue.add("b");
  const handledB = Promise.withResolvers<void>();
  queue.start((key) => {
    seen.push(key);
    if (key === "b") handledB.resolve();
    return Promise.resolve();
  });
  await handledB.promise; // "b" was added last: every "a" before it has been handled by now
  await queue.shutdown();
  assert.deepEqual(seen, ["a", "b"]);
});

Deno.test("one worker per key: a key added while handled runs again afterwards, never twice at once", async () => {
  const queue = new WorkQueue({ name: "t", concurrency: 4 });
  let running = 0;
  let most = 0;
  let runs = 0;
  const started = [Promise.withResolvers<void>(), Promise.withResolvers<void>()];
  const firstMayEnd = Promise.withResolvers<void>();
  queue.start(async () => {
    running++;
    most = Math.max(most, running);
    started[runs++]?.resolve();
    if (runs === 1) await firstMayEnd.promise;
    running--;
  });
  queue.add("k");
  await started[0].promise;
  queue.add("k");
  queue.add("k");
  await nextTurn(); // a free worker of the four would take "k" now if the queue let it
  firstMayEnd.resolve();
  await started[1].promise;
  await nextTurn();
  await queue.shutdown();
  assert.equal(most, 1);
  assert.equal(runs, 2, "once, then once more for the adds during the first run");
});

Deno.test("failures back off exponentially from the base delay up to the cap, and success resets", async () => {
  const queue = new WorkQueue({ name: "t", baseDelayMs: 5_000, maxDelayMs: 300_000 });
  const delays = Array.from({ length: 9 }, () => queue.addRateLimited("k"));
  assert.deepEqual(delays, [5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
  queue.forget("k");
  assert.equal(queue.backoffFor("k"), 5_000);
  await queue.shutdown();
});

Deno.test("a failing handler is retried after its backoff; requeueAfter looks again after that time", async () => {
  const queue = new WorkQueue({ name: "t", baseDelayMs: 20, maxDelayMs: 100 });
  const times: number[] = [];
  const started = performance.now();
  let calls = 0;
  queue.start(() => {
    calls++;
    times.push(performance.now() - started);
    if (calls === 1) return Promise.reject(new Error("cloud down"));
    if (calls === 2) return Promise.resolve({ requeueAfterMs: 50 });
    return Promise.resolve();
  });
  queue.add("k");
  await eventually(() => calls === 3, 2_000, "the third call");
  await queue.shutdown();
  assert.equal(calls, 3);
  assert.ok(times[1] - times[0] >= 18, `retry after ${times[1] - times[0]} ms`);
  assert.ok(times[2] - times[1] >= 45, `requeue after ${times[2] - times[1]} ms`);
  assert.equal(queue.failures("k"), 0);
});

Deno.test("shutdown waits for the handler in flight and drops delayed keys", async () => {
  const queue = new WorkQueue({ name: "t" });
  let finished = false;
  const started = Promise.withResolvers<void>();
  const mayEnd = Promise.withResolvers<void>();
  queue.start(async () => {
    started.resolve();
    await mayEnd.promise;
    finished = true;
  });
  queue.add("k");
  queue.addAfter("later", 10_000);
  await started.promise;
  let stopped = false;
  const stopping = queue.shutdown().then(() => (stopped = true));
  await nextTurn();
  assert.equal(stopped, false, "shutdown is still waiting for the handler");
  mayEnd.resolve();
  await stopping;
  assert.ok(finished);
});

Deno.test("delayed keys come due in the order of their times, an earlier add wins, and add() cancels the delay", async () => {
  const queue = new WorkQueue({ name: "t" });
  const seen: { key: string; at: number }[] = [];
  const started = performance.now();
  queue.start((key) => {
    seen.push({ key, at: performance.now() - started });
    return Promise.resolve();
  });
  queue.addAfter("c", 90);
  queue.addAfter("a", 30);
  queue.addAfter("b", 60);
  queue.addAfter("a", 500); // later than the pending add: ignored (else "a" would come after "c")
  queue.addAfter("b", 10); // earlier: wins
  queue.addAfter("now", 10_000);
  queue.add("now"); // handled at once, its delayed add forgotten
  await eventually(() => seen.length >= 4, 2_000, "four keys handled");
  await queue.shutdown();
  assert.deepEqual(seen.map((s) => s.key), ["now", "b", "a", "c"]);
  const at = Object.fromEntries(seen.map((s) => [s.key, s.at]));
  assert.ok(at.b >= 9 && at.a >= 29 && at.c >= 89, `due times kept: ${JSON.stringify(at)}`);
});
