import assert from "node:assert/strict";
import { CloudRequestBudget, MAX_WAIT_MS } from "../../../lib/cloud/request_budget.ts";

const WALL = 1_700_000_000_000;

/**
 * A budget on a fake clock: a sleep registers a timer; whenever nothing else can run, the clock jumps to the
 * earliest timer and wakes it (so sleepers overlap as on a real clock, and the test's own steps run in between).
 */
function fakeBudget(options: { maxRequestsPerMinute?: number; unknownConcurrency?: number } = {}) {
  let now = 0;
  const timers: { at: number; wake: () => void }[] = [];
  const sleeps: number[] = [];
  let driving = false;
  const drive = async () => {
    if (driving) return;
    driving = true;
    while (timers.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (timers.length === 0) break;
      const at = Math.min(...timers.map((t) => t.at));
      now = Math.max(now, at);
      for (const timer of timers.filter((t) => t.at === at)) {
        timers.splice(timers.indexOf(timer), 1);
        timer.wake();
      }
    }
    driving = false;
  };
  const budget = new CloudRequestBudget({
    ...options,
    now: () => now,
    wallNow: () => WALL + now,
    sleep: (ms: number) =>
      new Promise<void>((resolve) => {
        sleeps.push(ms);
        timers.push({ at: now + ms, wake: resolve });
        drive();
      }),
  });
  /** Lets the fake clock run on by `ms` (or until nothing sleeps), turn by turn: no real time passes. */
  const passTime = async (ms: number) => {
    const until = now + ms;
    while (now < until && timers.length > 0) await new Promise((resolve) => setTimeout(resolve, 0));
  };
  return { budget, now: () => now, advance: (ms: number) => (now += ms), sleeps, passTime };
}

Deno.test("with plenty left in the window, requests go at once, side by side", async () => {
  const { budget, now } = fakeBudget();
  budget.observe({ limit: 3600, remaining: 3599, resetEpochSeconds: WALL / 1000 + 60 });
  const releases = await Promise.all(Array.from({ length: 200 }, () => budget.acquire()));
  assert.equal(now(), 0, "no request waited");
  assert.equal(budget.inFlight, 200);
  for (const release of releases) release();
  assert.equal(budget.inFlight, 0);
  assert.equal(budget.throttled, 0);
});

Deno.test("near the window's end what is left is spread evenly until the reset; nothing is sent once it is used up", async () => {
  const { budget, now, passTime } = fakeBudget();
  // 100 per minute, 12 left, 30 s to the reset: the reserve is 10, so 2 go at once, then one every 3 s.
  budget.observe({ limit: 100, remaining: 12, resetEpochSeconds: WALL / 1000 + 30 });
  const times: number[] = [];
  let remaining = 12;
  for (let i = 0; i < 12; i++) {
    const release = await budget.acquire();
    times.push(now());
    remaining--;
    release();
    budget.observe({ limit: 100, remaining, resetEpochSeconds: WALL / 1000 + 30 });
  }
  assert.deepEqual(times.slice(0, 3), [0, 0, 3_000], `grant times ${times}`);
  assert.ok(times.at(-1)! <= 30_000, `the last of the window's requests went before the reset (${times.at(-1)})`);
  // The window is used up: the next request waits for the reset; past it, one request goes first (the server's
  // window may start later than this process thinks) and its answer opens the rest of the new window.
  const probe = await budget.acquire();
  assert.ok(now() >= 30_000, `waited for the reset, at ${now()}`);
  let second = false;
  const waiting = budget.acquire().then((r) => (second = true, r));
  await passTime(500);
  assert.equal(second, false, "nothing else goes before the probe's answer, however long it takes");
  probe();
  budget.observe({ limit: 100, remaining: 99, resetEpochSeconds: (WALL + now()) / 1000 + 60 });
  (await waiting)();
  const more = await Promise.all(Array.from({ length: 50 }, () => budget.acquire()));
  assert.ok(now() - 30_000 < 1_000, "a fresh window is spent freely");
  more.forEach((r) => r());
});

Deno.test("requests in flight count against what is left, so a burst never overdraws the window", async () => {
  const { budget, now } = fakeBudget();
  budget.observe({ limit: 100, remaining: 20, resetEpochSeconds: WALL / 1000 + 60 });
  const granted: number[] = [];
  const pending = Array.from({ length: 19 }, () => budget.acquire().then((r) => (granted.push(now()), r)));
  const releases = await Promise.all(pending);
  // 20 left and nothing answered yet: 10 go at once, the reserve of 10 is spread over the rest of the window.
  assert.equal(granted.filter((t) => t === 0).length, 10, `grant times ${granted}`);
  assert.ok(granted.at(-1)! < 60_000, "all within the window, one every 6 s: none overdraws it");
  releases.forEach((r) => r());
});

Deno.test("a 429 pause holds every caller for the Retry-After time", async () => {
  const { budget, now } = fakeBudget();
  budget.observe({ limit: 3600, remaining: 3000, resetEpochSeconds: WALL / 1000 + 60 });
  budget.pauseFor(5000);
  const releases = await Promise.all([budget.acquire(), budget.acquire()]);
  assert.equal(now(), 5000);
  releases.forEach((r) => r());
});

Deno.test("before the API's limit is known, only a few requests are in flight", async () => {
  const { budget } = fakeBudget({ unknownConcurrency: 3 });
  const first = await Promise.all([budget.acquire(), budget.acquire(), budget.acquire()]);
  let fourth = false;
  const waiting = budget.acquire().then((r) => {
    fourth = true;
    return r;
  });
  await Promise.resolve();
  assert.equal(fourth, false, "the fourth waits for an answer");
  first[0]();
  (await waiting)();
  assert.equal(fourth, true);
});

Deno.test("the optional upper bound caps the pace even when the API allows more", async () => {
  const { budget, now } = fakeBudget({ maxRequestsPerMinute: 60 });
  budget.observe({ limit: 3600, remaining: 3600, resetEpochSeconds: WALL / 1000 + 60 });
  for (let i = 0; i < 8; i++) (await budget.acquire())();
  // Burst of a tenth (6), then one a second.
  assert.equal(now(), 2000);
});

Deno.test("high-priority callers go before others waiting for the window", async () => {
  const { budget, advance } = fakeBudget({ unknownConcurrency: 1 });
  const holder = await budget.acquire();
  const order: string[] = [];
  const normal = budget.acquire().then((r) => (order.push("normal"), r));
  const high = budget.acquire(undefined, { priority: "high" }).then((r) => (order.push("high"), r));
  await Promise.resolve();
  advance(10);
  holder();
  (await high)();
  (await normal)();
  assert.deepEqual(order, ["high", "normal"]);
});

Deno.test("a pause asked for years lasts 5 minutes, slept in one wait, not a spin", async () => {
  const { budget, now, sleeps } = fakeBudget();
  budget.pauseFor(99_999_999_000);
  assert.equal(budget.pausedForMs, MAX_WAIT_MS);
  const release = await budget.acquire();
  release();
  assert.equal(now(), MAX_WAIT_MS);
  assert.deepEqual(sleeps, [MAX_WAIT_MS]);
});

Deno.test("a window said to reset years from now counts as resetting within 5 minutes", async () => {
  const { budget, now, sleeps } = fakeBudget();
  budget.observe({ limit: 60, remaining: 0, resetEpochSeconds: (WALL + 3e11) / 1000 });
  const release = await budget.acquire();
  release();
  assert.ok(now() <= MAX_WAIT_MS, `held for ${now()} ms`);
  assert.ok(sleeps.length <= 2 && sleeps.every((ms) => ms >= 50), `slept ${JSON.stringify(sleeps)}`);
});
