/**
 * Several Services on one load balancer, over fakes (fast tier): two Services of a namespace with the same share key
 * get one load balancer, each its own listeners, and publish the same addresses; a later Service asking for a port
 * the first serves is refused with a Warning naming it and nothing of it is applied; deleting one takes only its
 * listeners off; a controller started again finds the shared load balancer (no duplicate); the last one to go deletes
 * it. The same with traffic through the data plane: tests/integration/shared_load_balancer_test.ts.
 */
import assert from "node:assert/strict";
import { eventually } from "../../../support/wait/eventually.ts";
import { startFakeServiceController } from "../../../support/fakes/fake_service_controller.ts";

const SHARE = { "load-balancer.ankra.cloud/share": "front" };
const port = (p: number) => ({ protocol: "TCP", port: p, nodePort: 30000 + p });

Deno.test("Services with one share key get one load balancer, their own listeners and the same addresses", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addService("api", { annotations: SHARE, ports: [port(80)], creationTimestamp: "2026-12-01T00:00:01Z" });
  env.addService("web", { annotations: SHARE, ports: [port(443)], creationTimestamp: "2026-12-01T00:00:02Z" });
  const ingressOf = (name: string) => env.services.store.get(`default/${name}`)?.ingress.map((i) => i.ip).join(", ");
  await eventually(() => ingressOf("api") && ingressOf("web"), { what: "both addresses" });
  assert.equal(sim.loadBalancers.items.size, 1, "one load balancer");
  const [lb] = [...sim.loadBalancers.items.values()];
  assert.equal(lb.name, "k8s-unit-default-shared-front");
  assert.equal(lb.labels["ccm.ankra.cloud/shared"], "default.front");
  assert.equal(lb.labels["ccm.ankra.cloud/service"], undefined);
  assert.deepEqual(lb.frontends.map((f) => f.port).sort(), [443, 80].sort());
  assert.equal(ingressOf("api"), ingressOf("web"), "the same addresses");
  assert.equal(env.services.store.get("default/api")!.annotations["ccm.ankra.cloud/share"], "front");

  // A later Service asking for port 80: refused, naming the first; nothing of it applied.
  env.addService("late", {
    annotations: SHARE,
    ports: [port(80), port(8443)],
    creationTimestamp: "2026-12-01T00:00:03Z",
  });
  const refused = await eventually(
    () => env.serviceEvents.events.find((e) => e.object === "Service default/late" && e.type === "Warning"),
    { what: "the Warning" },
  );
  assert.match(refused.message, /port 80 is already served by Service default\/api on the load balancer/);
  assert.ok(!lb.frontends.some((f) => f.port === 8443), "nothing of it applied");
  assert.equal(env.services.store.get("default/late")!.readyCondition?.reason, "ShareConflict");

  // One of them goes: only its listeners come off.
  env.services.remove("default/late");
  env.services.update("default/web", (s) => (s.deletionTimestamp = new Date().toISOString()));
  await eventually(() => env.services.store.get("default/web") === undefined, { what: "web gone" });
  assert.equal(sim.loadBalancers.items.size, 1, "kept for the other");
  assert.deepEqual(lb.frontends.map((f) => f.port), [80]);
  assert.deepEqual(lb.backends.map((b) => b.name), ["tcp-80"]);
  assert.equal(sim.count("delete_load_balancer"), 0);

  // The last one goes: the load balancer goes.
  env.services.update("default/api", (s) => (s.deletionTimestamp = new Date().toISOString()));
  await eventually(() => env.services.store.get("default/api") === undefined, { what: "api gone" });
  assert.equal(sim.count("delete_load_balancer"), 1);
});

Deno.test("a Service joining a share key leaves its own load balancer, and one leaving the key takes its listeners along", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addService("api", { annotations: SHARE, ports: [port(80)], creationTimestamp: "2026-12-01T00:00:01Z" });
  env.addService("web", { ports: [port(443)], creationTimestamp: "2026-12-01T00:00:02Z" });
  await eventually(() => sim.loadBalancers.items.size === 2 && env.services.store.get("default/web")?.ingress.length, {
    what: "two load balancers",
  });
  const own = [...sim.loadBalancers.items.values()].find((l) => l.labels["ccm.ankra.cloud/service"] === "default/web")!;
  env.services.update("default/web", (s) => (s.annotations = { ...s.annotations, ...SHARE }));
  await eventually(
    () => [...sim.loadBalancers.items.values()].some((l) => l.frontends.some((f) => f.port === 443) && l.id !== own.id),
    { what: "web's listener on the shared load balancer" },
  );
  await eventually(() => sim.count("delete_load_balancer") === 1, { what: "its own load balancer deleted" });
  env.services.update("default/web", (s) => {
    delete s.annotations["load-balancer.ankra.cloud/share"];
  });
  const shared = [...sim.loadBalancers.items.values()].find((l) => l.labels["ccm.ankra.cloud/shared"])!;
  await eventually(() => !shared.frontends.some((f) => f.port === 443), { what: "its listener off the shared one" });
  assert.equal(env.services.store.get("default/web")!.annotations["ccm.ankra.cloud/share"], undefined);
  await eventually(
    () => [...sim.loadBalancers.items.values()].some((l) => l.labels["ccm.ankra.cloud/service"] === "default/web"),
    { what: "a load balancer of its own again" },
  );
});
