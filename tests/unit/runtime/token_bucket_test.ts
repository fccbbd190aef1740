import assert from "node:assert/strict";
import { TokenBucket } from "../../../lib/runtime/token_bucket.ts";

/** A bucket on a fake clock whose sleeps advance the clock. */
function fakeBucket(options: { requestsPerMinute: number; burst: number }) {
  let now = 0;
  const bucket = new TokenBucket({
    ...options,
    now: () => now,
    sleep: (ms: number) => {
      now += ms;
      return Promise.resolve();
    },
  });
  return { bucket, now: () => now };
}

Deno.test("the bucket grants its burst at once, then one request per 1/rate", async () => {
  const { bucket, now } = fakeBucket({ requestsPerMinute: 60, burst: 3 });
  const grants: number[] = [];
  for (let i = 0; i < 6; i++) {
    await bucket.acquire();
    grants.push(now());
  }
  assert.deepEqual(grants, [0, 0, 0, 1000, 2000, 3000]);
});

Deno.test("callers are served in arrival order", async () => {
  const { bucket } = fakeBucket({ requestsPerMinute: 600, burst: 1 });
  const order: number[] = [];
  await Promise.all([1, 2, 3, 4].map((n) => bucket.acquire().then(() => order.push(n))));
  assert.deepEqual(order, [1, 2, 3, 4]);
});

Deno.test("an aborted caller leaves the line without blocking the others", async () => {
  const bucket = new TokenBucket({ requestsPerMinute: 600, burst: 1 });
  await bucket.acquire();
  const controller = new AbortController();
  const waiting = bucket.acquire(controller.signal);
  const behind = bucket.acquire();
  controller.abort(new Error("gave up"));
  await assert.rejects(waiting, /gave up/);
  const started = performance.now();
  await behind;
  assert.ok(performance.now() - started < 500, "the next caller got the token the aborted one left");
});
