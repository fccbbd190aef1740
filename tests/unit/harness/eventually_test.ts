/**
 * The tests' one poll loop (tests/support/wait/eventually.ts): it goes on as soon as the condition holds, hands back
 * the value it waited for, fails naming the condition, and looks no more often than told.
 */
import assert from "node:assert/strict";
import { eventually } from "../../support/wait/eventually.ts";

Deno.test("eventually resolves with the first truthy value, as soon as it appears", async () => {
  let looks = 0;
  const value = await eventually(() => ++looks >= 3 && { looks }, { intervalMs: 1 });
  assert.deepEqual(value, { looks: 3 });
});

Deno.test("eventually fails naming what it waited for once the time is up", async () => {
  await assert.rejects(
    () => eventually(() => false, { timeoutMs: 100, what: "the impossible" }),
    /^Error: the impossible not reached within 100 ms$/,
  );
  await assert.rejects(() => eventually(() => false, 50, "a number and a name"), /a number and a name not reached/);
});

Deno.test("eventually looks no more often than its interval", async () => {
  let looks = 0;
  await assert.rejects(() => eventually(() => (looks++, false), { timeoutMs: 350, intervalMs: 100 }));
  assert.ok(looks <= 5, `${looks} looks in 350 ms at one per 100 ms`);
});

Deno.test("an exception from the check ends the wait with that exception", async () => {
  let looks = 0;
  await assert.rejects(
    () =>
      eventually(() => {
        looks++;
        throw new Error("the server exited");
      }, 10_000),
    /the server exited/,
  );
  assert.equal(looks, 1);
});
