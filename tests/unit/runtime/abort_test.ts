import assert from "node:assert/strict";
import { abortableSleep, MAX_TIMER_MS, timerDelay } from "../../../lib/runtime/abort.ts";

Deno.test("a delay a timer cannot take is rounded into what it can: nothing below 0, nothing above 2^31-1 ms", () => {
  assert.equal(timerDelay(-5), 0);
  assert.equal(timerDelay(Number.NaN), 0);
  assert.equal(timerDelay(1500), 1500);
  assert.equal(timerDelay(99_999_999_000), MAX_TIMER_MS);
  assert.equal(timerDelay(Infinity), MAX_TIMER_MS);
});

Deno.test("a sleep beyond the timer limit does not end early (the runtime would fire it after 1 ms) and ends on abort", async () => {
  const controller = new AbortController();
  let ended = false;
  const sleeping = abortableSleep(99_999_999_000, controller.signal).then(() => (ended = true), (cause) => cause);
  // Time enough for a timer clamped to 1 ms to have fired many times over.
  await abortableSleep(100);
  assert.equal(ended, false);
  controller.abort(new Error("stop"));
  assert.equal(((await sleeping) as Error).message, "stop");
  assert.equal(ended, false);
});

Deno.test("a short sleep ends on time, and an aborted signal rejects at once", async () => {
  const started = performance.now();
  await abortableSleep(20);
  assert.ok(performance.now() - started >= 19);
  await assert.rejects(() => abortableSleep(1_000, AbortSignal.abort(new Error("gone"))), /gone/);
});
