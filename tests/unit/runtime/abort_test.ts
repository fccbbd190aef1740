import assert from "node:assert/strict";
import { abortableSleep, MAX_TIMER_MS, type SleepClock, timerDelay } from "../../../lib/runtime/abort.ts";

/** A clock that moves only when told: `advance` runs every timer that falls due, in order. */
function fakeClock(): SleepClock & { advance(ms: number): void; delays: number[]; pending(): number } {
  let now = 0;
  let next = 1;
  const timers = new Map<number, { at: number; run: () => void }>();
  const delays: number[] = [];
  return {
    now: () => now,
    setTimeout(run, ms) {
      delays.push(ms);
      timers.set(next, { at: now + ms, run });
      return next++;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      const until = now + ms;
      for (;;) {
        const due = [...timers].filter(([, t]) => t.at <= until).sort(([, a], [, b]) => a.at - b.at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].run();
      }
      now = until;
    },
    delays,
    pending: () => timers.size,
  };
}

/** Lets settled promises run their reactions. */
function settle(): Promise<void> {
  return new Promise((resolve) => queueMicrotask(resolve));
}

Deno.test("a delay a timer cannot take is rounded into what it can: nothing below 0, nothing above 2^31-1 ms", () => {
  assert.equal(timerDelay(-5), 0);
  assert.equal(timerDelay(Number.NaN), 0);
  assert.equal(timerDelay(1500), 1500);
  assert.equal(timerDelay(99_999_999_000), MAX_TIMER_MS);
  assert.equal(timerDelay(Infinity), MAX_TIMER_MS);
});

Deno.test("a sleep beyond the timer limit waits in steps the runtime can take, does not end early and ends on abort", async () => {
  const clock = fakeClock();
  const controller = new AbortController();
  let ended = false;
  const sleeping = abortableSleep(99_999_999_000, controller.signal, { clock }).then(
    () => (ended = true),
    (cause) => cause,
  );
  // Forty timer limits later (about 2.7 years), the sleep still waits, one timer at a time.
  clock.advance(40 * MAX_TIMER_MS);
  await settle();
  assert.equal(ended, false);
  assert.equal(clock.pending(), 1);
  assert.ok(clock.delays.every((ms) => ms <= MAX_TIMER_MS), `timer delays ${clock.delays}`);
  controller.abort(new Error("stop"));
  assert.equal(((await sleeping) as Error).message, "stop");
  assert.equal(ended, false);
  assert.equal(clock.pending(), 0, "the abort cancels the timer");
});

Deno.test("a short sleep ends on time, not before, and an aborted signal rejects at once", async () => {
  const clock = fakeClock();
  let ended = false;
  const sleeping = abortableSleep(20, undefined, { clock }).then(() => (ended = true));
  clock.advance(19);
  await settle();
  assert.equal(ended, false);
  clock.advance(1);
  await sleeping;
  assert.equal(ended, true);
  await assert.rejects(() => abortableSleep(1_000, AbortSignal.abort(new Error("gone")), { clock }), /gone/);
});
