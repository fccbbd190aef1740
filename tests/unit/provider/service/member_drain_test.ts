/**
 * Graceful drain of the members a load balancer loses: weight 0 first, removed after the drain period, together with
 * the members that began draining with them, given back their weight when their node returns.
 */
import assert from "node:assert/strict";
import { drainMembers, membersDiffer } from "../../../../lib/provider/service/member_drain.ts";

const A = { name: "a-1", address: "10.0.0.5", port: 30080 };
const B = { name: "b-1", address: "10.0.0.6", port: 30080 };
const C = { name: "c-1", address: "10.0.0.7", port: 30080 };
const PERIOD = 30_000;

Deno.test("a member that leaves drains with weight 0, then goes once the period is over", () => {
  const start = drainMembers([A, B].map((m) => ({ ...m, weight: 100 })), [A], {
    periodMs: PERIOD,
    now: 1_000,
    draining: new Map(),
  });
  assert.deepEqual(start.members, [A, { ...B, weight: 0 }]);
  assert.deepEqual([...start.draining], [["b-1", 1_000]]);
  assert.equal(start.nextAtMs, 31_000, "a pass is due when the drain ends");
  const current = [{ ...A, weight: 100 }, { ...B, weight: 0 }];
  const during = drainMembers(current, [A], { periodMs: PERIOD, now: 20_000, draining: start.draining });
  assert.equal(membersDiffer(current, during.members), false, "nothing to send while it drains");
  const after = drainMembers(current, [A], { periodMs: PERIOD, now: 31_000, draining: start.draining });
  assert.deepEqual(after.members, [A]);
  assert.equal(after.draining.size, 0);
  assert.equal(after.nextAtMs, undefined);
});

Deno.test("members leaving together leave together; one coming back gets its weight without a removal", () => {
  const current = [A, B, C].map((m) => ({ ...m, weight: 100 }));
  const start = drainMembers(current, [A], { periodMs: PERIOD, now: 0, draining: new Map() });
  assert.deepEqual(start.members.map((m) => [m.name, m.weight]), [["a-1", undefined], ["b-1", 0], ["c-1", 0]]);
  const drained = [{ ...A, weight: 100 }, { ...B, weight: 0 }, { ...C, weight: 0 }];
  // C's node returns during the drain: it is wanted again, with the default weight, never removed.
  const back = drainMembers(drained, [A, C], { periodMs: PERIOD, now: 10_000, draining: start.draining });
  assert.deepEqual(back.members, [A, { ...C, weight: 100 }, { ...B, weight: 0 }]);
  assert.deepEqual([...back.draining.keys()], ["b-1"]);
  // Both leaving at once: one replacement at the end takes both.
  const both = drainMembers(drained, [A], { periodMs: PERIOD, now: 30_000, draining: start.draining });
  assert.deepEqual(both.members, [A]);
});

Deno.test("no drain period: members leave at once, as before; desired members carry no weight unless one is owed", () => {
  const plan = drainMembers([A, B], [A], { periodMs: 0, now: 0, draining: new Map() });
  assert.deepEqual(plan.members, [A]);
  assert.equal(plan.nextAtMs, undefined);
  assert.equal(membersDiffer([{ ...A, weight: 100 }], [A]), false, "the API's default weight is 100");
  assert.equal(membersDiffer([{ ...A, weight: 0 }], [A]), true);
});

Deno.test("draining never takes a backend past 256 members: those draining longest leave first", () => {
  const desired = Array.from({ length: 255 }, (_, i) => ({ name: `n-${i}`, address: `10.0.1.${i}`, port: 1 }));
  const leaving = [{ ...B, port: 1 }, { ...C, port: 1 }];
  const plan = drainMembers([...desired, ...leaving], desired, {
    periodMs: PERIOD,
    now: 5_000,
    draining: new Map([["b-1", 1_000], ["c-1", 4_000]]),
  });
  assert.equal(plan.members.length, 256);
  assert.deepEqual([...plan.draining.keys()], ["c-1"], "the newest drain stays, the oldest goes");
});
