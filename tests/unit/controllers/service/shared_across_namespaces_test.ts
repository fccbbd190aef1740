/**
 * One load balancer across namespaces (`load-balancer.ankra.cloud/share-namespaces`), over fakes (fast tier): a
 * Service asking to join a namespace whose group has not allowed it waits with a Warning naming that side (no second
 * load balancer); once that side allows it, the group's existing load balancer is relabelled for the group across
 * namespaces (same id, same address) and both Services are on it; a Service that does not allow the group's
 * namespace is refused naming itself; deleting one keeps the load balancer for the other, the last one deletes it.
 * Against a real API server: tests/integration/shared_across_namespaces_test.ts.
 */
import assert from "node:assert/strict";
import { eventually } from "../../../support/wait/eventually.ts";
import { startFakeServiceController } from "../../../support/fakes/fake_service_controller.ts";

const SHARE = { "load-balancer.ankra.cloud/share": "front" };
const ALLOW = "load-balancer.ankra.cloud/share-namespaces";
const port = (p: number) => ({ protocol: "TCP", port: p, nodePort: 30000 + p });

Deno.test("a Service of another namespace waits for consent, then joins the group's load balancer, relabelled", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("n1", "10.0.0.5");
  env.addService("api", {
    namespace: "team-a",
    annotations: SHARE,
    ports: [port(80)],
    creationTimestamp: "2026-12-01T00:00:01Z",
  });
  const ingressOf = (key: string) => env.services.store.get(key)?.ingress.map((i) => i.ip).join(", ");
  await eventually(() => ingressOf("team-a/api"), { what: "team-a's group served" });
  const [lb] = [...sim.loadBalancers.items.values()];
  assert.equal(lb.name, "k8s-unit-team-a-shared-front", "a group within a namespace: today's name");
  const address = ingressOf("team-a/api");

  // team-b asks for team-a; team-a has not allowed team-b: refused, naming team-a's side, nothing created.
  env.addService("web", {
    namespace: "team-b",
    annotations: { ...SHARE, [ALLOW]: "team-a" },
    ports: [port(443)],
    creationTimestamp: "2026-12-01T00:00:02Z",
  });
  const refused = await eventually(
    () => env.serviceEvents.events.find((e) => e.object === "Service team-b/web" && e.type === "Warning"),
    { what: "the refusal" },
  );
  assert.equal(refused.reason, "SyncLoadBalancerFailed");
  assert.match(
    refused.message,
    /: namespace team-a, named in load-balancer\.ankra\.cloud\/share-namespaces, shares front within itself \(team-a\/api\) and does not allow namespace team-b/,
  );
  assert.equal(env.services.store.get("team-b/web")!.readyCondition?.reason, "ShareNotAllowed");
  assert.equal(sim.loadBalancers.items.size, 1, "no second load balancer");
  assert.equal(sim.count("create_load_balancer"), 1);

  // team-a allows team-b: the same load balancer becomes the group's across namespaces; team-b joins it.
  env.services.update("team-a/api", (s) => (s.annotations = { ...s.annotations, [ALLOW]: "team-b" }));
  await eventually(() => ingressOf("team-b/web") === address, { what: "team-b on the same address" });
  assert.equal(sim.loadBalancers.items.size, 1);
  assert.equal(sim.count("create_load_balancer"), 1, "relabelled, not made again");
  assert.equal(lb.name, "k8s-unit-shared-front");
  assert.equal(lb.labels["ccm.ankra.cloud/shared"], "*.front");
  await eventually(() => lb.labels["ccm.ankra.cloud/shared-namespaces"] === "team-a,team-b", {
    what: "the namespaces on it, in the order they came",
  });
  assert.deepEqual(lb.frontends.map((f) => f.port).sort(), [443, 80]);
  assert.equal(ingressOf("team-a/api"), address, "team-a's address kept");
  assert.equal(env.services.store.get("team-a/api")!.annotations["ccm.ankra.cloud/share"], "*.front");
  assert.equal(env.services.store.get("team-b/web")!.annotations["ccm.ankra.cloud/share"], "*.front");
  const moved = env.serviceEvents.events.find((e) => e.reason === "RelabelledLoadBalancer");
  assert.match(
    moved!.message,
    new RegExp(`^load balancer ${lb.id} now serves the share group front across namespaces`),
  );

  // One goes: the load balancer stays for the other, without its listener.
  env.services.update("team-b/web", (s) => (s.deletionTimestamp = new Date().toISOString()));
  await eventually(() => env.services.store.get("team-b/web") === undefined, { what: "team-b's Service gone" });
  assert.equal(sim.loadBalancers.items.size, 1);
  assert.deepEqual(lb.frontends.map((f) => f.port), [80]);
  assert.equal(sim.count("delete_load_balancer"), 0);
  await eventually(() => lb.labels["ccm.ankra.cloud/shared-namespaces"] === "team-a", { what: "team-b off the list" });

  // The last one goes: the load balancer goes.
  env.services.update("team-a/api", (s) => (s.deletionTimestamp = new Date().toISOString()));
  await eventually(() => env.services.store.get("team-a/api") === undefined, { what: "team-a's Service gone" });
  assert.equal(sim.count("delete_load_balancer"), 1);
});

Deno.test("a Service that does not allow the group's namespace is refused naming itself, and joins once it does", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("n1", "10.0.0.5");
  env.addService("api", {
    namespace: "team-a",
    annotations: { ...SHARE, [ALLOW]: "team-b" },
    ports: [port(80)],
    creationTimestamp: "2026-12-01T00:00:01Z",
  });
  const ingressOf = (key: string) => env.services.store.get(key)?.ingress.map((i) => i.ip).join(", ");
  await eventually(() => ingressOf("team-a/api"), { what: "team-a served" });
  const [lb] = [...sim.loadBalancers.items.values()];
  assert.equal(lb.name, "k8s-unit-shared-front", "opened from the start: the group across namespaces");
  assert.equal(lb.labels["ccm.ankra.cloud/shared-namespaces"], "team-a", "the namespaces on it, from its creation");
  env.addService("web", {
    namespace: "team-b",
    annotations: { ...SHARE, [ALLOW]: "team-c" },
    ports: [port(443)],
    creationTimestamp: "2026-12-01T00:00:02Z",
  });
  const refused = await eventually(
    () => env.serviceEvents.events.find((e) => e.object === "Service team-b/web" && e.type === "Warning"),
    { what: "the refusal" },
  );
  assert.match(
    refused.message,
    /: this Service does not allow namespace team-a, where Service team-a\/api of its share group front is/,
  );
  assert.equal(sim.loadBalancers.items.size, 1);
  env.services.update("team-b/web", (s) => (s.annotations = { ...s.annotations, [ALLOW]: "team-c,team-a" }));
  await eventually(() => ingressOf("team-b/web") === ingressOf("team-a/api"), { what: "joined" });
  assert.equal(sim.loadBalancers.items.size, 1);
  assert.equal(env.services.store.get("team-b/web")!.readyCondition?.reason, "Serving");
});

Deno.test("a group across namespaces back within its one namespace gets its load balancer back under today's name", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("n1", "10.0.0.5");
  env.addService("api", {
    namespace: "team-a",
    annotations: { ...SHARE, [ALLOW]: "*" },
    ports: [port(80)],
    creationTimestamp: "2026-12-01T00:00:01Z",
  });
  await eventually(() => env.services.store.get("team-a/api")?.ingress.length, { what: "served" });
  const [lb] = [...sim.loadBalancers.items.values()];
  assert.equal(lb.labels["ccm.ankra.cloud/shared"], "*.front");
  env.services.update("team-a/api", (s) => {
    delete s.annotations[ALLOW];
  });
  await eventually(() => lb.labels["ccm.ankra.cloud/shared"] === "team-a.front", { what: "relabelled back" });
  assert.equal(lb.name, "k8s-unit-team-a-shared-front");
  assert.equal(lb.labels["ccm.ankra.cloud/shared-namespaces"], undefined);
  await eventually(() => env.services.store.get("team-a/api")!.annotations["ccm.ankra.cloud/share"] === "front", {
    what: "the group within the namespace recorded",
  });
  assert.equal(sim.count("create_load_balancer"), 1, "the same load balancer, the same address");
  assert.equal(sim.count("delete_load_balancer"), 0);
});

Deno.test("a namespace opening to a group whose namespaces do not allow it is refused and keeps its own load balancer", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("n1", "10.0.0.5");
  env.addService("api", { namespace: "team-a", annotations: SHARE, ports: [port(80)] });
  env.addService("web", {
    namespace: "team-b",
    annotations: { ...SHARE, [ALLOW]: "team-c" },
    ports: [port(443)],
  });
  const ingressOf = (key: string) => env.services.store.get(key)?.ingress.map((i) => i.ip).join(", ");
  await eventually(() => ingressOf("team-a/api") && ingressOf("team-b/web"), { what: "both served, apart" });
  assert.equal(sim.loadBalancers.items.size, 2, "team-b opened alone: the group across namespaces is its own");
  const address = ingressOf("team-a/api");
  env.services.update("team-a/api", (s) => (s.annotations = { ...s.annotations, [ALLOW]: "team-b" }));
  await eventually(
    () => env.serviceEvents.events.some((e) => e.object === "Service team-a/api" && e.type === "Warning"),
    { what: "team-a refused" },
  );
  const refused = env.serviceEvents.events.find((e) => e.object === "Service team-a/api" && e.type === "Warning")!;
  assert.match(
    refused.message,
    /Service team-b\/web of share group front across namespaces does not allow namespace team-a/,
  );
  assert.equal(sim.count("delete_load_balancer"), 0, "nothing left before the check: its load balancer stays");
  assert.equal(ingressOf("team-a/api"), address);
  assert.equal(sim.loadBalancers.items.size, 2);
});
