import assert from "node:assert/strict";
import { WorkQueue } from "../../lib/runtime/work_queue.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("a key added many times while waiting is handled once", async () => {
  const queue = new WorkQueue({ name: "t" });
  const seen: string[] = [];
  for (let i = 0; i < 5; i++) queue.add("a");
  queue.add("b");
  queue.start((key) => {
    seen.push(key);
    return Promise.resolve();
  });
  await sleep(20);
  await queue.shutdown();
  assert.deepEqual(seen, ["a", "b"]);
});

Deno.test("one worker per key: a key added while handled runs again afterwards, never twice at once", async () => {
  const queue = new WorkQueue({ name: "t", concurrency: 4 });
  let running = 0;
  let most = 0;
  let runs = 0;
  queue.start(async () => {
    running++;
    most = Math.max(most, running);
    runs++;
    await sleep(30);
    running--;
  });
  queue.add("k");
  await sleep(5);
  queue.add("k");
  queue.add("k");
  await sleep(100);
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
  await sleep(200);
  await queue.shutdown();
  assert.equal(calls, 3);
  assert.ok(times[1] - times[0] >= 18, `retry after ${times[1] - times[0]} ms`);
  assert.ok(times[2] - times[1] >= 45, `requeue after ${times[2] - times[1]} ms`);
  assert.equal(queue.failures("k"), 0);
});

Deno.test("shutdown waits for the handler in flight and drops delayed keys", async () => {
  const queue = new WorkQueue({ name: "t" });
  let finished = false;
  queue.start(async () => {
    await sleep(50);
    finished = true;
  });
  queue.add("k");
  queue.addAfter("later", 10_000);
  await sleep(5);
  await queue.shutdown();
  assert.ok(finished);
});
