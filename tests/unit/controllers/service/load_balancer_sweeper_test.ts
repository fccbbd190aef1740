/**
 * The leaked-load-balancer sweeper over fakes (fast tier): a Service store filled by hand and the in-process
 * simulator. Nothing is swept while the Ankra Cloud API fails (a failed list is no observation); once it answers
 * again, a leaked load balancer goes after two fresh observations a period apart, while another cluster's and a
 * present Service's stay. The pure rule is tests/unit/provider/service/leaked_load_balancers_test.ts; the controller binary's
 * flag and dry run are tests/integration/leaked_load_balancers_test.ts.
 */
import { CLUSTER_UID_LABEL } from "../../../../lib/ankra_names.ts";
import assert from "node:assert/strict";
import { LoadBalancerSweeper, type SweepPass } from "../../../../lib/controllers/service/load_balancer_sweeper.ts";
import { objectKey } from "../../../../lib/kube/object_key.ts";
import type { SlimService } from "../../../../lib/kube/slim.ts";
import { loadBalancerLabels } from "../../../../lib/provider/service/load_balancer_names.ts";
import { eventually } from "../../../support/wait/eventually.ts";
import { FakeStore } from "../../../support/fakes/fake_cluster.ts";
import { slimService } from "../../../support/fakes/slim_service.ts";
import { createLabelledLoadBalancer, startTestCloud } from "../../../support/cloud/simulator.ts";

const PERIOD_MS = 300;

Deno.test("nothing is swept while the Ankra Cloud API fails; then a leak goes after two fresh observations, nothing else", async () => {
  await using cloud = await startTestCloud();
  const { sim } = cloud.simulator;
  const services = new FakeStore<SlimService>(objectKey);
  services.put(slimService({ namespace: "default", name: "kept" }));
  const ours = (name: string) => ({ ...loadBalancerLabels("unit", "default", name), [CLUSTER_UID_LABEL]: "uid-unit" });
  const leaked = await createLabelledLoadBalancer(cloud, "k8s-unit-default-gone", ours("gone"));
  const kept = await createLabelledLoadBalancer(cloud, "k8s-unit-default-kept", ours("kept"));
  const foreign = await createLabelledLoadBalancer(cloud, "k8s-unit-default-gone2", {
    ...loadBalancerLabels("unit", "default", "gone2"),
    [CLUSTER_UID_LABEL]: "uid-other",
  });
  sim.faults.add({ operation: "*", status: 503, reason: "outage", times: 0 });
  const passes: (SweepPass & { atMs: number })[] = [];
  const stop = new AbortController();
  const running = new LoadBalancerSweeper({
    cloud: cloud.client,
    services,
    clusterName: "unit",
    clusterUid: "uid-unit",
    periodMs: PERIOD_MS,
    onPass: (pass) => passes.push({ ...pass, atMs: performance.now() }),
  }).run(stop.signal);
  try {
    await eventually(() => passes.length >= 3, { what: "three passes during the outage" });
    assert.ok(passes.every((p) => !p.observed && p.swept.length === 0), "no observation, no sweep");
    assert.match(passes[0].reason!, /list of load balancers failed/);
    sim.faults.clear();
    const cameBack = performance.now();
    await eventually(() => passes.some((p) => p.swept.includes(leaked)), { what: "the leak swept" });
    const observed = passes.filter((p) => p.observed && p.atMs >= cameBack);
    assert.ok(observed.length >= 2, "two observations after the outage");
    assert.ok(observed[observed.length - 1].atMs - observed[0].atMs >= PERIOD_MS * 0.9, "a period apart");
    assert.ok(sim.loadBalancers.items.has(kept), "a present Service's load balancer stays");
    assert.ok(sim.loadBalancers.items.has(foreign), "another cluster's load balancer stays");
  } finally {
    stop.abort();
    await running;
  }
});
