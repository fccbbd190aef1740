/**
 * Keeping the address across a Service's deletion, over fakes (fast tier): a Service with `preserve-on-delete` is
 * deleted and its load balancer is kept (listeners gone, renamed, labelled released, never swept), the finalizer goes
 * and a `PreservedLoadBalancer` event names it; a new Service naming it in `load-balancer-id` takes it back with the
 * same address; a Service naming another Service's load balancer is refused with a Warning and nothing changes. The
 * same story against a real API server: tests/integration/preserved_load_balancer_test.ts.
 */
import assert from "node:assert/strict";
import { eventually } from "../../../support/wait/eventually.ts";
import { startFakeServiceController } from "../../../support/fakes/fake_service_controller.ts";

/** The labels as they are now (the simulator changes them in place). */
const labelsOf = (lb: { labels: Record<string, string> }): Record<string, string> => lb.labels;

Deno.test("preserve-on-delete keeps the load balancer and its address; load-balancer-id takes it back", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addService("web", { annotations: { "load-balancer.ankra.cloud/preserve-on-delete": "true" } });
  const before = await eventually(() => env.services.store.get("default/web")?.ingress.map((i) => i.ip).join(", "), {
    what: "the address",
  });
  const [lb] = [...sim.loadBalancers.items.values()];
  env.services.update("default/web", (s) => (s.deletionTimestamp = new Date().toISOString()));
  await eventually(() => env.services.store.get("default/web") === undefined, { what: "the Service gone" });
  assert.equal(sim.loadBalancers.items.size, 1, "kept");
  assert.equal(sim.count("delete_load_balancer"), 0);
  assert.deepEqual(lb.labels, {
    "ccm.ankra.cloud/cluster": "unit",
    "ccm.ankra.cloud/cluster-uid": "uid-unit",
    "ccm.ankra.cloud/released": "default.web",
  });
  assert.match(lb.name, /^k8s-unit-default-web-released-[0-9a-f]{8}$/);
  assert.deepEqual([lb.frontends.length, lb.backends.length], [0, 0], "no traffic to node ports of the old Service");
  const preserved = env.providerEvents.events.find((e) => e.reason === "PreservedLoadBalancer")!;
  assert.match(preserved.message, new RegExp(`^Kept load balancer ${lb.id} \\(addresses ${before}\\)`));
  assert.match(preserved.message, new RegExp(`load-balancer\\.ankra\\.cloud/load-balancer-id: ${lb.id} takes it back`));

  env.addService("web2", { annotations: { "load-balancer.ankra.cloud/load-balancer-id": lb.id } });
  await eventually(() => env.services.store.get("default/web2")?.ingress.length, { what: "the taken-back address" });
  assert.equal(env.services.store.get("default/web2")!.ingress.map((i) => i.ip).join(", "), before, "the same address");
  assert.equal(sim.loadBalancers.items.size, 1, "nothing created");
  assert.equal(labelsOf(lb)["ccm.ankra.cloud/service"], "default/web2");
  assert.equal(labelsOf(lb)["ccm.ankra.cloud/released"], undefined);
  assert.deepEqual(lb.frontends.map((f) => f.name), ["tcp-80"]);

  env.addService("thief", { annotations: { "load-balancer.ankra.cloud/load-balancer-id": lb.id } });
  await eventually(
    () => env.serviceEvents.events.find((e) => e.object === "Service default/thief" && e.type === "Warning"),
    { what: "the Warning on the other Service" },
  );
  const refused = env.serviceEvents.events.find((e) => e.object === "Service default/thief")!;
  assert.match(
    refused.message,
    new RegExp(`load balancer ${lb.id} is Service default/web2's; nothing of it is changed`),
  );
  assert.equal(labelsOf(lb)["ccm.ankra.cloud/service"], "default/web2", "still web2's");
  assert.equal(env.services.store.get("default/thief")!.readyCondition?.reason, "LoadBalancerNotAllowed");
});
