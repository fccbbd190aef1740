import assert from "node:assert/strict";
import {
  type ListedLoadBalancer,
  type Observation,
  planSweep,
} from "../../../../lib/provider/service/leaked_load_balancers.ts";

const UID = "0b7c2f4e-5a51-4d0e-9f6e-1c2d3e4f5a6b";
const OPTIONS = { clusterName: "prod", clusterUid: UID, confirmAfterMs: 600_000 };

function lb(id: string, labels: Record<string, string>, state = "running"): ListedLoadBalancer {
  return { id, name: `name-${id}`, labels, state };
}

function ours(id: string, service: string, state?: string): ListedLoadBalancer {
  return lb(
    id,
    { "ccm.ankra.cloud/service": service, "ccm.ankra.cloud/cluster": "prod", "ccm.ankra.cloud/cluster-uid": UID },
    state,
  );
}

/** A fake clock: each observation is taken at an explicit time. */
function observe(at: number, loadBalancers: ListedLoadBalancer[], services: string[] = []): Observation {
  return { at, loadBalancers, serviceExists: (key) => services.includes(key) };
}

Deno.test("a load balancer whose Service is absent is not swept at the first observation", () => {
  const plan = planSweep(observe(0, [ours("lb-1", "shop/web")]), new Map(), OPTIONS);
  assert.deepEqual(plan.sweep, []);
  assert.deepEqual([...plan.pending.keys()], ["lb-1"]);
  assert.equal(plan.pending.get("lb-1")!.service, "shop/web");
});

Deno.test("an absent Service's load balancer is swept once a second observation is a drift period later", () => {
  const first = planSweep(observe(1_000, [ours("lb-1", "shop/web")]), new Map(), OPTIONS);
  const early = planSweep(observe(600_999, [ours("lb-1", "shop/web")]), first.pending, OPTIONS);
  assert.deepEqual(early.sweep, [], "one millisecond short of the drift period: not yet");
  const due = planSweep(observe(601_000, [ours("lb-1", "shop/web")]), early.pending, OPTIONS);
  assert.deepEqual(due.sweep, [{ id: "lb-1", name: "name-lb-1", service: "shop/web", absentSince: 1_000 }]);
  assert.equal(due.pending.size, 0);
});

Deno.test("a Service that comes back between observations saves its load balancer and restarts the count", () => {
  const first = planSweep(observe(0, [ours("lb-1", "shop/web")]), new Map(), OPTIONS);
  const back = planSweep(observe(300_000, [ours("lb-1", "shop/web")], ["shop/web"]), first.pending, OPTIONS);
  assert.equal(back.pending.size, 0);
  const goneAgain = planSweep(observe(700_000, [ours("lb-1", "shop/web")]), back.pending, OPTIONS);
  assert.deepEqual(goneAgain.sweep, [], "absence counts from the observation after the Service went again");
  assert.equal(goneAgain.pending.get("lb-1")!.absentSince, 700_000);
});

Deno.test("a load balancer of another cluster, without labels or with a malformed Service label is never swept", () => {
  const others = [
    lb("other", { "ccm.ankra.cloud/service": "shop/web", "ccm.ankra.cloud/cluster": "staging" }),
    lb("no-cluster", { "ccm.ankra.cloud/service": "shop/web" }),
    lb("unlabelled", {}),
    lb("no-service", { "ccm.ankra.cloud/cluster": "prod" }),
    lb("malformed", { "ccm.ankra.cloud/service": "web", "ccm.ankra.cloud/cluster": "prod" }),
  ];
  let pending = planSweep(observe(0, others), new Map(), OPTIONS).pending;
  assert.equal(pending.size, 0);
  const plan = planSweep(observe(10_000_000, others), pending, OPTIONS);
  pending = plan.pending;
  assert.deepEqual(plan.sweep, []);
  assert.equal(pending.size, 0);
});

Deno.test("a load balancer already being deleted is left alone", () => {
  const first = planSweep(observe(0, [ours("lb-1", "shop/web", "deleting")]), new Map(), OPTIONS);
  const second = planSweep(observe(700_000, [ours("lb-1", "shop/web", "deleting")]), first.pending, OPTIONS);
  assert.deepEqual(second.sweep, []);
});

Deno.test("a load balancer that is no longer listed leaves the pending set", () => {
  const first = planSweep(observe(0, [ours("lb-1", "shop/web"), ours("lb-2", "shop/api")]), new Map(), OPTIONS);
  const second = planSweep(observe(100, [ours("lb-2", "shop/api")]), first.pending, OPTIONS);
  assert.deepEqual([...second.pending.keys()], ["lb-2"]);
});

Deno.test("a load balancer relabelled for another Service starts its count again", () => {
  const first = planSweep(observe(0, [ours("lb-1", "shop/web")]), new Map(), OPTIONS);
  const second = planSweep(observe(700_000, [ours("lb-1", "shop/api")]), first.pending, OPTIONS);
  assert.deepEqual(second.sweep, []);
  assert.equal(second.pending.get("lb-1")!.absentSince, 700_000);
});

Deno.test("only the absent Services' load balancers are swept among many", () => {
  const listed = [ours("lb-1", "shop/web"), ours("lb-2", "shop/api"), ours("lb-3", "blog/web")];
  const first = planSweep(observe(0, listed, ["shop/api"]), new Map(), OPTIONS);
  const second = planSweep(observe(600_000, listed, ["shop/api"]), first.pending, OPTIONS);
  assert.deepEqual(second.sweep.map((l) => l.id).sort(), ["lb-1", "lb-3"]);
});

Deno.test("a load balancer of another cluster with the same --cluster-name, or one without a UID label, is never swept", () => {
  const sameName = { "ccm.ankra.cloud/service": "shop/web", "ccm.ankra.cloud/cluster": "prod" };
  const listed = [
    lb("twin", { ...sameName, "ccm.ankra.cloud/cluster-uid": "another-cluster-uid" }),
    lb("legacy", sameName),
    ours("mine", "shop/web"),
  ];
  const first = planSweep(observe(0, listed), new Map(), OPTIONS);
  assert.deepEqual([...first.pending.keys()], ["mine"], "only this cluster's own load balancer is a candidate");
  const second = planSweep(observe(600_000, listed), first.pending, OPTIONS);
  assert.deepEqual(second.sweep.map((l) => l.id), ["mine"]);
});

Deno.test("a load balancer released by preserve-on-delete is never swept, however long its Service is gone", () => {
  const released = lb("kept", {
    "ccm.ankra.cloud/cluster": "prod",
    "ccm.ankra.cloud/cluster-uid": UID,
    "ccm.ankra.cloud/released": "shop.web",
  });
  const first = planSweep(observe(0, [released]), new Map(), OPTIONS);
  const second = planSweep(observe(10 * 600_000, [released]), first.pending, OPTIONS);
  assert.deepEqual([...first.pending.keys(), ...second.sweep.map((l) => l.id)], []);
});
