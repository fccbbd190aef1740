import assert from "node:assert/strict";
import { pairEvents } from "../../../../lib/provider/service/event_pairing.ts";
import { FRAMEWORK_EVENTS, type PlannedEvent } from "../../../../lib/provider/service/load_balancer_plan.ts";

const ensuring: PlannedEvent = { when: "before", ...FRAMEWORK_EVENTS.ensuring };
const ensured: PlannedEvent = { when: "after", ...FRAMEWORK_EVENTS.ensured };
const updated: PlannedEvent = { when: "after", ...FRAMEWORK_EVENTS.updated };
const reasons = (events: PlannedEvent[]) => events.map((e) => e.reason);

Deno.test("an Ensuring opens a pair and an Ensured closes it; only the events of the asked moment are recorded", () => {
  const before = pairEvents([ensuring, ensured], "before", false);
  assert.deepEqual(reasons(before.record), ["EnsuringLoadBalancer"]);
  assert.equal(before.open, true);
  const after = pairEvents([ensuring, ensured], "after", before.open);
  assert.deepEqual(reasons(after.record), ["EnsuredLoadBalancer"]);
  assert.equal(after.open, false);
});

Deno.test("a second Ensuring while one is open, and an Ensured with none open, are not recorded", () => {
  const again = pairEvents([ensuring], "before", true);
  assert.deepEqual(again.record, []);
  assert.equal(again.open, true);
  const stray = pairEvents([ensured], "after", false);
  assert.deepEqual(stray.record, [], "the tracker and a pass both seeing the address make one Ensured, not two");
  assert.equal(stray.open, false);
});

Deno.test("over any interleaving of passes and tracker reports, Ensuring and Ensured alternate", () => {
  // Every sequence of four reports, each a pass that opens (Ensuring before) and/or closes (Ensured after).
  const kinds = [[ensuring], [ensured], [ensuring, ensured], [updated]];
  for (let n = 0; n < kinds.length ** 4; n++) {
    let open = false;
    const recorded: string[] = [];
    for (let i = 0, rest = n; i < 4; i++, rest = Math.floor(rest / kinds.length)) {
      const events = kinds[rest % kinds.length];
      for (const when of ["before", "after"] as const) {
        const paired = pairEvents(events, when, open);
        open = paired.open;
        recorded.push(...reasons(paired.record).filter((r) => r !== "UpdatedLoadBalancer"));
      }
    }
    recorded.forEach((reason, i) =>
      assert.equal(reason, i % 2 === 0 ? "EnsuringLoadBalancer" : "EnsuredLoadBalancer", `sequence ${n}`)
    );
  }
});

Deno.test("other events pass through as planned", () => {
  assert.deepEqual(reasons(pairEvents([updated], "after", false).record), ["UpdatedLoadBalancer"]);
  assert.deepEqual(reasons(pairEvents([updated], "before", false).record), []);
});
