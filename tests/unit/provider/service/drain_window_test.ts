import assert from "node:assert/strict";
import { drainWindow } from "../../../../lib/provider/service/drain_window.ts";

const PERIOD = 30_000;

Deno.test("what leaves drains for the period from when it was first seen leaving, then goes; the next pass is due at the earliest end", () => {
  const first = drainWindow(["b", "a"], new Map(), { periodMs: PERIOD, now: 1_000 });
  assert.deepEqual([...first.draining], [["a", 1_000], ["b", 1_000]]);
  assert.equal(first.nextAtMs, 31_000);
  const later = drainWindow(["a", "b", "c"], first.draining, { periodMs: PERIOD, now: 20_000 });
  assert.deepEqual([...later.draining], [["c", 20_000], ["a", 1_000], ["b", 1_000]], "the most recent first");
  assert.equal(later.nextAtMs, 31_000);
  const after = drainWindow(["a", "b", "c"], later.draining, { periodMs: PERIOD, now: 31_000 });
  assert.deepEqual([...after.draining], [["c", 20_000]]);
  assert.equal(after.nextAtMs, 50_000);
});

Deno.test("what is wanted again stops draining; a period of 0 drains nothing", () => {
  const started = drainWindow(["a"], new Map(), { periodMs: PERIOD, now: 0 });
  assert.deepEqual(drainWindow([], started.draining, { periodMs: PERIOD, now: 5_000 }), { draining: new Map() });
  assert.deepEqual(drainWindow(["a"], new Map(), { periodMs: 0, now: 0 }), { draining: new Map() });
});
