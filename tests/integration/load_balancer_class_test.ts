/**
 * `--require-load-balancer-class` end to end: the real kube-apiserver, the simulator and the service controller. With
 * the flag, a Service without a class is another implementation's: no load balancer, no event, no finalizer. Without
 * it, a class-less Service served beside the classed one runs over fakes in
 * tests/unit/controllers/service/service_settings_test.ts.
 */
import assert from "node:assert/strict";
import { uniqueName } from "../support/control_plane/control_plane.ts";
import { moreReads } from "../support/cloud/cloud_passes.ts";
import { eventually } from "../support/wait/eventually.ts";
import {
  createNodes,
  createService,
  deleteNodes,
  deleteService,
  eventsFor,
  getService,
  ingressIps,
  serviceExists,
} from "../support/controller/service_fixtures.ts";
import { startServiceController } from "../support/controller/service_controller.ts";

const CLASS = "ankra.cloud/load-balancer";

Deno.test("with --require-load-balancer-class a class-less Service gets no load balancer, event or finalizer", async () => {
  await using env = await startServiceController({
    loadBalancerClass: CLASS,
    requireLoadBalancerClass: true,
    driftCheckMs: 500,
  });
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const other = uniqueName("classless");
  const ours = uniqueName("classed");
  // The class-less one first: by the time the classed one is served, the controller has seen both.
  await createService(other);
  await createService(ours, { loadBalancerClass: CLASS });
  try {
    await eventually(async () => ingressIps(await getService(ours)).length > 0, 15_000, "the classed Service served");
    const lb = [...sim.loadBalancers.items.values()];
    assert.equal(lb.length, 1, "one load balancer, for the classed Service");
    assert.equal(lb[0].labels["ccm.ankra.cloud/service"], `default/${ours}`);
    // Two drift passes of the classed Service later, the class-less one is still untouched.
    await moreReads(sim, { operation: "get_load_balancer", pathIncludes: lb[0].id }, { count: 2 });
    const untouched = await getService(other);
    assert.deepEqual(untouched.metadata?.finalizers ?? [], [], "no finalizer");
    assert.deepEqual(untouched.status?.loadBalancer?.ingress ?? [], [], "no address written");
    assert.deepEqual((await eventsFor(other)).map((e) => e.reason), [], "no event");
    assert.equal(sim.loadBalancers.items.size, 1, "no load balancer for it");
  } finally {
    await deleteService(ours);
    await deleteService(other);
    await eventually(async () => !(await serviceExists(ours)), 15_000, "the classed Service gone");
    await deleteNodes(nodes);
  }
});
