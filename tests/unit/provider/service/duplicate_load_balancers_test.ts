/**
 * Which of several load balancers labelled for one Service (or share group) stays and which go, and when: the pure
 * rule of lib/provider/service/duplicate_load_balancers.ts, observation by observation on an explicit clock.
 */
import assert from "node:assert/strict";
import {
  CLUSTER_LABEL,
  CLUSTER_UID_LABEL,
  RELEASED_LABEL,
  SERVICE_LABEL,
  SHARED_LABEL,
} from "../../../../lib/ankra_names.ts";
import {
  type DuplicateCandidate,
  type DuplicateObservation,
  keeperOf,
  type KeyServices,
  planDuplicates,
} from "../../../../lib/provider/service/duplicate_load_balancers.ts";

const UID = "0b7c2f4e-5a51-4d0e-9f6e-1c2d3e4f5a6b";
const OPTIONS = { cluster: { name: "prod", uid: UID }, confirmAfterMs: 600_000 };
const OURS = { [CLUSTER_LABEL]: "prod", [CLUSTER_UID_LABEL]: UID };

/** A load balancer created at minute `minute`, with addresses derived from its id. */
function lb(id: string, labels: Record<string, string>, minute: number, state = "running"): DuplicateCandidate {
  const n = Number(id.replace(/\D/g, "")) || 0;
  return {
    id,
    name: `name-${id}`,
    labels,
    state,
    created_at: new Date(Date.UTC(2026, 0, 1, 10, minute)).toISOString(),
    public_ipv4: `198.51.100.${n}`,
    public_ipv6: `2001:db8::${n}`,
    public_ipv6_addresses: [`2001:db8::${n}`, `2001:db8:1::${n}`],
  };
}

function ours(id: string, service: string, minute: number, state?: string): DuplicateCandidate {
  return lb(id, { ...OURS, [SERVICE_LABEL]: service }, minute, state);
}

const NOTHING: KeyServices = { addresses: [], pinned: [] };

function observe(
  at: number,
  loadBalancers: DuplicateCandidate[],
  services: Record<string, KeyServices> = { "shop/web": NOTHING },
): DuplicateObservation {
  const pinned = new Set(Object.values(services).flatMap((s) => s.pinned));
  return { at, loadBalancers, servicesOf: (key) => services[key], pinned };
}

Deno.test("two load balancers for one Service: the one in its status stays, the other goes at the confirming look", () => {
  const older = ours("lb-1", "shop/web", 1);
  const newer = ours("lb-2", "shop/web", 2);
  const services = { "shop/web": { addresses: ["198.51.100.2", "2001:db8::2"], pinned: [] } };
  const first = planDuplicates(observe(1_000, [newer, older], services), new Map(), OPTIONS);
  assert.deepEqual(first.found.map((d) => [d.id, d.key, d.keeper.id, d.keeper.reason]), [
    ["lb-1", "shop/web", "lb-2", "status"],
  ]);
  assert.deepEqual(first.remove, [], "never at the first observation");
  const early = planDuplicates(observe(600_999, [newer, older], services), first.pending, OPTIONS);
  assert.deepEqual(early.remove, [], "one millisecond short of the period: not yet");
  assert.deepEqual(early.found, [], "found once, not again");
  const due = planDuplicates(observe(601_000, [newer, older], services), early.pending, OPTIONS);
  assert.deepEqual(due.remove.map((d) => [d.id, d.since]), [["lb-1", 1_000]]);
  assert.equal(due.pending.size, 0);
});

Deno.test("no address in any status: the oldest stays (creation time, then id; no time counts as newest)", () => {
  const first = ours("lb-7", "shop/web", 5);
  const second = ours("lb-3", "shop/web", 9);
  assert.deepEqual(keeperOf([second, first], NOTHING), { lb: first, reason: "oldest" });
  const sameTime = ours("lb-4", "shop/web", 5);
  assert.equal(keeperOf([first, sameTime], NOTHING)!.lb.id, "lb-4", "same time: the smaller id");
  const undated = { ...ours("lb-0", "shop/web", 0), created_at: "" };
  assert.equal(keeperOf([undated, second], NOTHING)!.lb.id, "lb-3", "no creation time: newest");
  const plan = planDuplicates(observe(0, [second, first]), new Map(), { ...OPTIONS, confirmAfterMs: 0 });
  assert.deepEqual(plan.remove.map((d) => d.id), ["lb-3"]);
});

Deno.test("a load balancer the user pinned stays, and one any Service pins is never deleted", () => {
  const older = ours("lb-1", "shop/web", 1);
  const pinned = ours("lb-2", "shop/web", 2);
  // The status still shows the older one's address; the pin wins.
  const services = {
    "shop/web": { addresses: ["198.51.100.1"], pinned: ["lb-2"] },
    "shop/api": { addresses: [], pinned: ["lb-5"] },
  };
  const now = { ...OPTIONS, confirmAfterMs: 0 };
  const plan = planDuplicates(observe(0, [older, pinned], services), new Map(), now);
  assert.deepEqual(plan.remove.map((d) => [d.id, d.keeper.id, d.keeper.reason]), [["lb-1", "lb-2", "pinned"]]);
  // lb-5 is shop/web's too (its labels), but shop/api pins it: kept, whatever shop/web's status says.
  const elsewhere = ours("lb-5", "shop/web", 0);
  const withOther = planDuplicates(observe(0, [older, pinned, elsewhere], services), new Map(), now);
  assert.deepEqual(withOther.remove.map((d) => d.id), ["lb-1"]);
});

Deno.test("while the Service pins a load balancer that is not yet its own, nothing is decided", () => {
  const services = { "shop/web": { addresses: [], pinned: ["lb-9"] } };
  const plan = planDuplicates(
    observe(0, [ours("lb-1", "shop/web", 1), ours("lb-2", "shop/web", 2)], services),
    new Map(),
    { ...OPTIONS, confirmAfterMs: 0 },
  );
  assert.deepEqual(plan, { found: [], remove: [], pending: new Map() });
});

Deno.test("another cluster's, an unlabelled, a legacy, a released and a deleting load balancer are never counted", () => {
  const label = { [SERVICE_LABEL]: "shop/web" };
  const others = [
    lb("lb-2", { ...label, [CLUSTER_LABEL]: "prod", [CLUSTER_UID_LABEL]: "another-uid" }, 0), // same name, other cluster
    lb("lb-3", { ...label, [CLUSTER_LABEL]: "staging" }, 0), // another cluster name, no UID
    lb("lb-4", { ...label, [CLUSTER_LABEL]: "prod" }, 0), // legacy: no UID label
    lb("lb-5", {}, 0), // unlabelled
    lb("lb-6", { ...OURS, [RELEASED_LABEL]: "shop.web" }, 0), // released by preserve-on-delete
    ours("lb-7", "shop/web", 0, "deleting"),
  ];
  const plan = planDuplicates(observe(0, [ours("lb-1", "shop/web", 5), ...others]), new Map(), {
    ...OPTIONS,
    confirmAfterMs: 0,
  });
  assert.deepEqual(plan, { found: [], remove: [], pending: new Map() });
});

Deno.test("a Service that no longer exists has leaked load balancers, not duplicates: nothing is decided here", () => {
  const plan = planDuplicates(
    observe(0, [ours("lb-1", "shop/gone", 1), ours("lb-2", "shop/gone", 2)]),
    new Map(),
    { ...OPTIONS, confirmAfterMs: 0 },
  );
  assert.deepEqual(plan.remove, []);
  assert.deepEqual(plan.found, []);
});

Deno.test("a share group's load balancers are one key: the Services' statuses choose", () => {
  const shared = (id: string, minute: number) => lb(id, { ...OURS, [SHARED_LABEL]: "shop.edge" }, minute);
  const services = { "shared:shop.edge": { addresses: ["2001:db8:1::3"], pinned: [] } };
  const plan = planDuplicates(
    observe(0, [shared("lb-2", 1), shared("lb-3", 2), shared("lb-4", 3)], services),
    new Map(),
    {
      ...OPTIONS,
      confirmAfterMs: 0,
    },
  );
  assert.deepEqual(plan.remove.map((d) => [d.id, d.key, d.keeper.id]).sort(), [
    ["lb-2", "shared:shop.edge", "lb-3"],
    ["lb-4", "shared:shop.edge", "lb-3"],
  ]);
});

Deno.test("when the Service's status moves to the other one, the roles swap and the confirmation starts over", () => {
  const a = ours("lb-1", "shop/web", 1);
  const b = ours("lb-2", "shop/web", 2);
  const showing = (ip: string) => ({ "shop/web": { addresses: [ip], pinned: [] } });
  const first = planDuplicates(observe(0, [a, b], showing("198.51.100.1")), new Map(), OPTIONS);
  assert.deepEqual([...first.pending.keys()], ["lb-2"]);
  const swapped = planDuplicates(observe(700_000, [a, b], showing("198.51.100.2")), first.pending, OPTIONS);
  assert.deepEqual(swapped.remove, [], "lb-1 is newly a duplicate; lb-2 is kept now");
  assert.deepEqual(swapped.found.map((d) => d.id), ["lb-1"]);
  assert.deepEqual([...swapped.pending.values()].map((d) => [d.id, d.since]), [["lb-1", 700_000]]);
  // One of them disappears (deleted by hand): no duplicate is left, nothing pending.
  const alone = planDuplicates(observe(1_400_000, [b], showing("198.51.100.2")), swapped.pending, OPTIONS);
  assert.deepEqual(alone, { found: [], remove: [], pending: new Map() });
});
