/**
 * The service controller's passes over fakes (fast tier): plain-object stores and writers on the Kubernetes side, the
 * in-process simulator on the Ankra side. What a user would notice of each pass: the finalizer before anything is
 * billed, the nodes' network addresses as members, the address in the status once running, the Ready condition; a node
 * joining costs one member replacement and no read; a load balancer deleted outside the cluster is made again at the
 * drift check, or at once when a member update meets its 404; deleting the Service deletes it before the finalizer goes;
 * a port change leaves one listener on the new port; the quota holds Services back with an event and no leak.
 *
 * The same behaviours against a real API server are in tests/integration/service_load_balancer_test.ts and
 * tests/integration/load_balancer_truth_test.ts (the writes as the API server takes them, the informers' timing).
 */
import assert from "node:assert/strict";
import { isNotFound } from "../../../../lib/cloud/errors.ts";
import { eventually } from "../../../support/wait/eventually.ts";
import { startFakeServiceController } from "../../../support/fakes/fake_service_controller.ts";
import { testSeed } from "../../../support/cloud/simulator.ts";

const FINALIZER = "service.kubernetes.io/load-balancer-cleanup";

Deno.test("a Service pass: finalizer before the create, the nodes' network addresses as members, the address once running", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addNode("b", "10.0.0.6");
  env.addService("web");
  const served = await eventually(
    () => env.services.store.get("default/web")?.ingress.length ? env.services.store.get("default/web") : undefined,
    { what: "the Service's address" },
  );
  const [lb] = [...sim.loadBalancers.items.values()];
  assert.equal(sim.loadBalancers.items.size, 1);
  assert.equal(lb.name, "k8s-unit-default-web");
  assert.deepEqual(lb.labels, {
    "ccm.ankra.cloud/service": "default/web",
    "ccm.ankra.cloud/cluster": "unit",
    "ccm.ankra.cloud/cluster-uid": "uid-unit",
  });
  assert.deepEqual(lb.backends[0].members.map((m) => m.address).sort(), ["10.0.0.5", "10.0.0.6"]);
  assert.deepEqual(lb.frontends.map((f) => f.port), [80]);
  assert.deepEqual(
    served.ingress.map((i) => i.ip),
    [...lb.public_ipv6_addresses, lb.public_ipv4].filter(Boolean),
    "every VM's IPv6 address, then the IPv4",
  );
  const finalizer = env.writes.of("setFinalizer")[0];
  const create = sim.log.find((entry) => entry.operation === "create_load_balancer")!;
  assert.deepEqual(finalizer.value, { finalizer: FINALIZER, present: true });
  assert.ok(finalizer.at <= create.atMs, "the finalizer is written before anything is billed");
  assert.deepEqual(
    env.serviceEvents.reasons(),
    ["EnsuringLoadBalancer", "EnsuredLoadBalancer"],
    "the framework's pair, once",
  );
  await eventually(() =>
    served.readyCondition?.status === "True" || env.services.store.get("default/web")
        ?.readyCondition?.status === "True", { what: "Ready True" });
});

Deno.test("a node joining becomes a member with one member replacement and no read of the load balancer", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addService("web");
  await eventually(() => env.services.store.get("default/web")?.ingress.length, { what: "the address" });
  const reads = sim.count("get_load_balancer");
  const replaces = sim.count("replace_load_balancer_members");
  env.addNode("b", "10.0.0.6");
  const [lb] = [...sim.loadBalancers.items.values()];
  await eventually(() => lb.backends[0].members.length === 2, { what: "the new member" });
  assert.deepEqual(lb.backends[0].members.map((m) => m.address).sort(), ["10.0.0.5", "10.0.0.6"]);
  assert.equal(sim.count("replace_load_balancer_members") - replaces, 1, "one replacement");
  assert.equal(sim.count("get_load_balancer") - reads, 0, "a node change trusts the cached document");
});

Deno.test("drift: a load balancer deleted outside the cluster is made again at the next drift check", async () => {
  await using env = await startFakeServiceController({ driftCheckMs: 1_000 });
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addService("web");
  await eventually(() => env.services.store.get("default/web")?.ingress.length, { what: "the address" });
  const [first] = [...sim.loadBalancers.items.values()];
  await env.cloud.client.deleteLoadBalancer(first.id);
  const second = await eventually(
    () => [...sim.loadBalancers.items.values()].find((lb) => lb.id !== first.id && lb.state === "running"),
    { what: "a new load balancer", timeoutMs: 5_000 },
  );
  assert.deepEqual(second.backends[0].members.map((m) => m.address), ["10.0.0.5"]);
  await eventually(
    () => env.services.store.get("default/web")?.ingress.some((i) => i.ip === second.public_ipv6_addresses[0]),
    { what: "the new address published" },
  );
  assert.equal(sim.loadBalancers.items.size, 1, "one load balancer, never two");
});

Deno.test("a member update that meets a deleted load balancer (404) makes a new one with every node", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addService("web");
  await eventually(() => env.services.store.get("default/web")?.ingress.length, { what: "the address" });
  const [first] = [...sim.loadBalancers.items.values()];
  await env.cloud.client.deleteLoadBalancer(first.id);
  // The simulator finishes a delete when it is next asked (its life cycles follow its clock).
  await eventually(
    () => env.cloud.client.getLoadBalancer(first.id).then(() => false, (cause) => isNotFound(cause)),
    { what: "the first one gone" },
  );
  env.addNode("b", "10.0.0.6");
  const second = await eventually(
    () => [...sim.loadBalancers.items.values()].find((lb) => lb.id !== first.id && lb.backends[0]?.members.length),
    { what: "a new load balancer with members" },
  );
  assert.deepEqual(second.backends[0].members.map((m) => m.address).sort(), ["10.0.0.5", "10.0.0.6"]);
  assert.ok(sim.log.some((e) => e.operation === "replace_load_balancer_members" && e.status === 404));
});

Deno.test("deleting the Service deletes its load balancer, waits until it is gone, then removes the finalizer", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addService("web");
  await eventually(() => env.services.store.get("default/web")?.ingress.length, { what: "the address" });
  env.services.update("default/web", (s) => (s.deletionTimestamp = new Date().toISOString()));
  await eventually(() => env.services.store.get("default/web") === undefined, { what: "the Service gone" });
  assert.equal(sim.loadBalancers.items.size, 0, "the load balancer went before the finalizer");
  assert.deepEqual(env.serviceEvents.reasons().slice(-2), ["DeletingLoadBalancer", "DeletedLoadBalancer"]);
});

Deno.test("a port change 80→8080 leaves exactly one frontend and backend on the new port", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addService("port");
  await env.served("port");
  env.services.update("default/port", (s) => {
    s.ports = [{ name: "p0", protocol: "TCP", port: 8080, nodePort: 30808 }];
  });
  const [lb] = [...sim.loadBalancers.items.values()];
  await eventually(
    () =>
      lb.frontends.length === 1 && lb.frontends[0].port === 8080 && lb.backends.length === 1 &&
      lb.backends[0].name === "tcp-8080",
    { what: "listeners on 8080 only" },
  );
  assert.deepEqual(lb.backends[0].members.map((m) => [m.address, m.port]), [["10.0.0.5", 30808]]);
});

Deno.test("Services beyond the quota get a clear event, nothing leaks, and all are served once it is raised", async () => {
  await using env = await startFakeServiceController({
    seed: testSeed({ settings: { load_balancer_quota: 5, load_balancer_create_delay_ms: 100 } }),
  });
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  const names = Array.from({ length: 20 }, (_, i) => `quota-${i}`);
  for (const name of names) env.addService(name);
  const served = () => names.filter((name) => env.services.store.get(`default/${name}`)?.ingress.length);
  await eventually(() => served().length === 5, { what: "five served" });
  assert.equal(sim.loadBalancers.items.size, 5);
  const waiting = names.filter((name) => !served().includes(name));
  assert.equal(waiting.length, 15);
  for (const name of waiting) {
    await eventually(() => env.eventsOf(name).some((e) => /at most 5 load balancers/.test(e.message)), {
      what: `${name}'s quota event`,
    });
  }
  sim.world.settings.load_balancer_quota = 25;
  await eventually(() => served().length === 20, { what: "all served", timeoutMs: 30_000 });
  assert.equal(sim.loadBalancers.items.size, 20, "exactly one load balancer per Service");
  for (const name of names) {
    env.services.update(`default/${name}`, (s) => (s.deletionTimestamp = new Date().toISOString()));
  }
  await eventually(() => env.services.store.size === 0, { what: "every Service gone", timeoutMs: 20_000 });
  assert.equal(sim.loadBalancers.items.size, 0, "nothing leaks");
});
