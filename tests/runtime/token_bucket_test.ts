import assert from "node:assert/strict";
import { RequestBudget } from "../../lib/runtime/request_budget.ts";

/** A budget on a fake clock whose sleeps advance the clock. */
function fakeBudget(options: { requestsPerMinute: number; burst: number }) {
  let now = 0;
  const budget = new RequestBudget({
    ...options,
    now: () => now,
    sleep: (ms) => {
      now += ms;
      return Promise.resolve();
    },
  });
  return { budget, now: () => now };
}

Deno.test("the budget grants its burst at once, then one request per 1/rate", async () => {
  const { budget, now } = fakeBudget({ requestsPerMinute: 60, burst: 3 });
  const grants: number[] = [];
  for (let i = 0; i < 6; i++) {
    await budget.acquire();
    grants.push(now());
  }
  assert.deepEqual(grants, [0, 0, 0, 1000, 2000, 3000]);
});

Deno.test("callers are served in arrival order", async () => {
  const { budget } = fakeBudget({ requestsPerMinute: 600, burst: 1 });
  const order: number[] = [];
  await Promise.all([1, 2, 3, 4].map((n) => budget.acquire().then(() => order.push(n))));
  assert.deepEqual(order, [1, 2, 3, 4]);
});

Deno.test("when the API's remaining allowance runs low, requests are spread until the window resets", async () => {
  const { budget, now } = fakeBudget({ requestsPerMinute: 6000, burst: 100 });
  const wall = 1_700_000_000_000;
  // 10 of 100 left, 30 s until the window ends: one request every 3 s.
  budget.observe({ limit: 100, remaining: 10, resetEpochSeconds: wall / 1000 + 30 }, wall);
  await budget.acquire();
  const first = now();
  await budget.acquire();
  assert.equal(now() - first, 3000);
  // Plenty left again: full speed.
  budget.observe({ limit: 100, remaining: 90, resetEpochSeconds: wall / 1000 + 30 }, wall);
  const before = now();
  await budget.acquire();
  assert.equal(now(), before);
});

Deno.test("an exhausted allowance stops every caller until the window resets", async () => {
  const { budget, now } = fakeBudget({ requestsPerMinute: 6000, burst: 100 });
  const wall = 1_700_000_000_000;
  budget.observe({ limit: 100, remaining: 0, resetEpochSeconds: wall / 1000 + 12 }, wall);
  await budget.acquire();
  assert.equal(now(), 12_000);
  assert.equal(budget.apiRemaining, 0);
});

Deno.test("a 429 pause holds every caller for the Retry-After time", async () => {
  const { budget, now } = fakeBudget({ requestsPerMinute: 6000, burst: 100 });
  budget.pauseFor(5000);
  await Promise.all([budget.acquire(), budget.acquire()]);
  assert.equal(now(), 5000);
});

Deno.test("an aborted caller leaves the queue without blocking the others", async () => {
  const budget = new RequestBudget({ requestsPerMinute: 600, burst: 1 });
  await budget.acquire();
  const controller = new AbortController();
  const waiting = budget.acquire(controller.signal);
  const behind = budget.acquire();
  controller.abort(new Error("gave up"));
  await assert.rejects(waiting, /gave up/);
  const started = performance.now();
  await behind;
  assert.ok(performance.now() - started < 500, "the next caller got the token the aborted one left");
});
