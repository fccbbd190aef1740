/**
 * Node-address mode through the service controller (fakes on the Kubernetes side, the in-process simulator with the
 * real client on the Ankra side): the Service's ingress is its nodes' public addresses, and the controller makes no
 * Ankra write at all — no load balancer (the cleanup finalizer, as upstream adds it, clears the status when the Service
 * goes); a refused port says why in its Ready condition; a Service moved from an Ankra load balancer to node-address
 * mode has its load balancer deleted.
 */
import assert from "node:assert/strict";
import { eventually } from "../../../support/wait/eventually.ts";
import { fakeNode } from "../../../support/fakes/fake_cluster.ts";
import {
  type FakeServiceController,
  startFakeServiceController,
} from "../../../support/fakes/fake_service_controller.ts";
import { serverSeed } from "../../../support/cloud/simulator.ts";

const MODE = "load-balancer.ankra.cloud/mode";

/** A Ready node on a server with public addresses 192.0.2.<n> and 2001:db8:ff:<n>::1. */
function addPublicNode(env: FakeServiceController, name: string, n: number): void {
  env.cloud.simulator.sim.world.addServer(serverSeed({
    id: `srv-${name}`,
    hostname: name,
    zone: "de-fsn1",
    public_ipv4: `192.0.2.${n}`,
    public_ipv6: `2001:db8:ff:${n}::1`,
    interfaces: [{ network_id: "net-1", address: `10.0.0.${n}` }],
  }));
  env.nodes.put(fakeNode(name, { providerID: `ankracloud://de-fsn1/srv-${name}` }));
}

/** The Ankra requests that change something (anything but a read). */
function ankraWrites(env: FakeServiceController): string[] {
  return env.cloud.simulator.sim.log.filter((e) => e.method !== "GET" && e.operation !== "control")
    .map((e) => `${e.method} ${e.path}`);
}

Deno.test("node-address mode: the nodes' public addresses are the ingress, with no Ankra write", async () => {
  await using env = await startFakeServiceController();
  addPublicNode(env, "a", 10);
  addPublicNode(env, "b", 11);
  env.addService("web", {
    ipFamilies: ["IPv4"],
    ports: [{ port: 53, protocol: "UDP" }, { port: 80, protocol: "TCP", nodePort: 30080 }],
    annotations: { [MODE]: "node-addresses" },
  });
  const served = await env.served("web");
  assert.deepEqual(served.ingress, [{ ip: "192.0.2.10", ipMode: "VIP" }, { ip: "192.0.2.11", ipMode: "VIP" }]);
  await eventually(() => env.services.store.get("default/web")?.readyCondition?.reason === "ServingOnNodes", {
    what: "Ready ServingOnNodes",
  });
  assert.match(
    env.services.store.get("default/web")!.readyCondition!.message,
    /nodes a, b at 192\.0\.2\.10, 192\.0\.2\.11/,
  );
  assert.deepEqual(ankraWrites(env), [], "no Ankra write");
  assert.equal(env.cloud.simulator.sim.loadBalancers.items.size, 0);
  assert.deepEqual(
    env.writes.of("setFinalizer").map((w) => w.value),
    [{ finalizer: "service.kubernetes.io/load-balancer-cleanup", present: true }],
    "the cleanup finalizer, as upstream's service controller adds it",
  );
  assert.ok(env.providerEvents.reasons().includes("NodeAddressesPublished"));
  // A node that stops being Ready leaves the ingress (no drain period here).
  env.nodes.update("b", (node) => (node.ready = "False"));
  await eventually(() => env.services.store.get("default/web")?.ingress.length === 1 || undefined, {
    what: "b out of the ingress",
  });
  assert.deepEqual(env.services.store.get("default/web")!.ingress.map((i) => i.ip), ["192.0.2.10"]);
  assert.deepEqual(ankraWrites(env), []);
});

Deno.test("node-address mode refuses a reserved port with a Ready=False reason, and a port another Service has", async () => {
  await using env = await startFakeServiceController();
  addPublicNode(env, "a", 10);
  env.addService("ssh", {
    ports: [{ port: 22, protocol: "TCP", nodePort: 30022 }],
    annotations: { [MODE]: "node-addresses" },
  });
  const refused = await eventually(() => {
    const condition = env.services.store.get("default/ssh")?.readyCondition;
    return condition?.status === "False" ? condition : undefined;
  }, { what: "Ready False" });
  assert.equal(refused.reason, "PortReserved");
  assert.match(refused.message, /port 22\/TCP is reserved on the nodes' own addresses/);
  assert.deepEqual(env.services.store.get("default/ssh")!.ingress, []);
  env.addService("first", {
    creationTimestamp: "2026-12-01T00:00:00Z",
    loadBalancerClass: "ankra.cloud/node-addresses",
  });
  await env.served("first");
  env.addService("second", {
    creationTimestamp: "2026-12-02T00:00:00Z",
    annotations: { [MODE]: "node-addresses" },
  });
  const conflict = await eventually(() => {
    const condition = env.services.store.get("default/second")?.readyCondition;
    return condition?.reason === "PortConflict" ? condition : undefined;
  }, { what: "PortConflict" });
  assert.match(conflict.message, /port 80\/TCP on .* is already served by Service default\/first/);
  assert.ok(
    env.eventsOf("second").some((e) => e.reason === "SyncLoadBalancerFailed" && /default\/first/.test(e.message)),
  );
  // The first one goes: the second is served.
  env.services.remove("default/first");
  await env.served("second");
  assert.deepEqual(ankraWrites(env), []);
});

Deno.test("a Service moved from its Ankra load balancer to node-address mode has the load balancer deleted", async () => {
  await using env = await startFakeServiceController();
  addPublicNode(env, "a", 10);
  env.addService("web", { ipFamilies: ["IPv4"] });
  await env.served("web");
  assert.equal(env.cloud.simulator.sim.loadBalancers.items.size, 1);
  env.annotate("web", { [MODE]: "node-addresses" });
  await eventually(() => env.cloud.simulator.sim.loadBalancers.items.size === 0 || undefined, {
    what: "the load balancer deleted",
    timeoutMs: 10_000,
  });
  const moved = await eventually(() => {
    const service = env.services.store.get("default/web");
    return service?.ingress[0]?.ip === "192.0.2.10" ? service : undefined;
  }, { what: "the node's address", timeoutMs: 10_000 });
  assert.deepEqual(moved.ingress, [{ ip: "192.0.2.10", ipMode: "VIP" }]);
  // Deleted, the Service's finalizer goes with no further Ankra write.
  const writes = ankraWrites(env).length;
  env.services.update("default/web", (service) => (service.deletionTimestamp = "2026-12-04T00:00:00Z"));
  await eventually(() => !env.services.store.get("default/web")?.finalizers.length || undefined, {
    what: "the finalizer removed",
  });
  assert.equal(ankraWrites(env).length, writes);
});

Deno.test("a Local node-address Service is published on the nodes holding its pods, on every node while none does", async () => {
  await using env = await startFakeServiceController();
  addPublicNode(env, "a", 10);
  addPublicNode(env, "b", 11);
  env.addService("local", {
    ipFamilies: ["IPv4"],
    externalTrafficPolicy: "Local",
    annotations: { [MODE]: "node-addresses" },
  });
  // No pod yet: an address at once (upstream's e2e waits for one before it starts the pods), on every node.
  const served = await env.served("local");
  assert.deepEqual(served.ingress.map((i) => i.ip), ["192.0.2.10", "192.0.2.11"]);
  env.endpoints.set("local", ["b"]);
  await eventually(() => env.services.store.get("default/local")?.ingress.length === 1 || undefined, {
    what: "only b",
  });
  assert.deepEqual(env.services.store.get("default/local")!.ingress, [{ ip: "192.0.2.11", ipMode: "VIP" }]);
  env.endpoints.set("local", ["a"]);
  await eventually(() => env.services.store.get("default/local")?.ingress[0]?.ip === "192.0.2.10" || undefined, {
    what: "a published",
  });
  assert.deepEqual(env.services.store.get("default/local")!.ingress.map((i) => i.ip), ["192.0.2.10"]);
  assert.deepEqual(ankraWrites(env), []);
});

Deno.test("a server's new public IPv4 reaches the Service's ingress at the next server list, with a Normal event naming both", async () => {
  await using env = await startFakeServiceController({ serverListPeriodMs: 200 });
  addPublicNode(env, "a", 10);
  addPublicNode(env, "b", 11);
  env.addService("web", { ipFamilies: ["IPv4"], annotations: { [MODE]: "node-addresses" } });
  await env.served("web");
  const server = env.cloud.simulator.sim.world.server("srv-a");
  // The IPv4 add-on of a's server changes (released, another bought), as Ankra Cloud changes it under a running server.
  env.cloud.simulator.sim.world.changePublicAddresses(server, { public_ipv4: "192.0.2.99" });
  const moved = await eventually(() => {
    const service = env.services.store.get("default/web");
    return service?.ingress.some((i) => i.ip === "192.0.2.99") ? service : undefined;
  }, { what: "the new address in the ingress", timeoutMs: 5_000 });
  assert.deepEqual(moved.ingress.map((i) => i.ip), ["192.0.2.99", "192.0.2.11"], "in the nodes' order");
  const changed = env.providerEvents.events.filter((e) => e.reason === "NodeAddressesChanged");
  assert.equal(changed.length, 1, JSON.stringify(env.providerEvents.events));
  assert.equal(changed[0].type, "Normal");
  assert.match(changed[0].message, /IPv4 192\.0\.2\.10 → 192\.0\.2\.99 \(node a\)/);
  assert.match(
    changed[0].message,
    /now served on 192\.0\.2\.99, 192\.0\.2\.11, before on 192\.0\.2\.10, 192\.0\.2\.11/,
  );
  // Released: the node is left out (its server has no address of the Service's family), the other one serves.
  env.cloud.simulator.sim.world.changePublicAddresses(server, { public_ipv4: null });
  await eventually(() => env.services.store.get("default/web")?.ingress.length === 1 || undefined, {
    what: "a out of the ingress",
    timeoutMs: 5_000,
  });
  assert.deepEqual(env.services.store.get("default/web")!.ingress.map((i) => i.ip), ["192.0.2.11"]);
  // An IPv6 renumbering changes nothing for an IPv4 Service: no write, no event.
  const writes = env.writes.of("writeIngress").length;
  env.cloud.simulator.sim.world.changePublicAddresses(env.cloud.simulator.sim.world.server("srv-b"), {
    public_ipv6: "2001:db8:ee::1",
  });
  const lists = env.cloud.simulator.sim.count("list_servers");
  await eventually(() => env.cloud.simulator.sim.count("list_servers") >= lists + 2 || undefined, {
    what: "two more server lists",
  });
  assert.equal(env.writes.of("writeIngress").length, writes);
  assert.deepEqual(ankraWrites(env), [], "no Ankra write throughout");
});

Deno.test("a server's address changed before the first server list that saw its node is still followed", async () => {
  // As at a controller's start: the first server list runs while the node store is still empty, so it records no node.
  // (The controller listens to the server lists from the start: run() subscribes before its first await.)
  await using env = await startFakeServiceController();
  env.cloud.simulator.sim.world.addServer(serverSeed({
    id: "srv-a",
    hostname: "a",
    zone: "de-fsn1",
    public_ipv4: "192.0.2.10",
    interfaces: [{ network_id: "net-1", address: "10.0.0.10" }],
  }));
  assert.ok(await env.servers.refresh({ force: true }), "the first list");
  env.nodes.put(fakeNode("a", { providerID: "ankracloud://de-fsn1/srv-a" }));
  env.addService("web", { ipFamilies: ["IPv4"], annotations: { [MODE]: "node-addresses" } });
  assert.deepEqual((await env.served("web")).ingress.map((i) => i.ip), ["192.0.2.10"]);
  // The address changes before the next list, the first one to see node a: that list must not take it as the
  // baseline (the ingress would keep the old address for good), but let the Service look.
  env.cloud.simulator.sim.world.changePublicAddresses(env.cloud.simulator.sim.world.server("srv-a"), {
    public_ipv4: "192.0.2.99",
  });
  assert.ok(await env.servers.refresh({ force: true }), "the next list");
  await eventually(
    () => env.services.store.get("default/web")?.ingress.some((i) => i.ip === "192.0.2.99") || undefined,
    {
      what: "the new address in the ingress",
      timeoutMs: 5_000,
    },
  );
});
