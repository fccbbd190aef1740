/**
 * Kubernetes 1.36 validates addresses strictly: a Service's `status.loadBalancer.ingress[].ip` and a Node's addresses
 * with an octet's leading zeros or an IPv4-mapped IPv6 are refused by the API server. Whatever form the Ankra API
 * answers in, what the controllers write is canonical — here with the in-process simulator answering non-canonical
 * forms (its address pools replaced for the test).
 */
import assert from "node:assert/strict";
import { eventually } from "../../../support/wait/eventually.ts";
import { fakeNode } from "../../../support/fakes/fake_cluster.ts";
import { startFakeNodeControllers } from "../../../support/fakes/fake_node_controllers.ts";
import { startFakeServiceController } from "../../../support/fakes/fake_service_controller.ts";
import { serverSeed } from "../../../support/cloud/simulator.ts";
import { UNINITIALIZED_TAINT } from "../../../../lib/provider/node/node_plan.ts";

Deno.test("a load balancer whose addresses the API gives zero-padded, uncompressed or IPv4-mapped is published canonical", async () => {
  await using env = await startFakeServiceController();
  const { world } = env.cloud.simulator.sim;
  env.addNode("a", "10.0.0.5");
  let v6 = 0;
  world.allocatePublicIpv4 = () => "203.000.113.007";
  world.allocatePublicIpv6 = () =>
    ++v6 === 1
      ? { address: "2001:0DB8:0000:0000:0000:0000:0000:0042", prefix: "2001:db8::/64" }
      : { address: "::ffff:203.0.113.9", prefix: "::ffff:203.0.113.0/120" };
  env.addService("web", {
    ipFamilies: ["IPv4", "IPv6"],
    annotations: { "load-balancer.ankra.cloud/ipv4": "true" },
  });
  const served = await env.served("web");
  const [lb] = [...env.cloud.simulator.sim.loadBalancers.items.values()];
  assert.equal(lb.public_ipv4, "203.000.113.007", "the API really answered the padded form");
  assert.deepEqual(
    served.ingress.map((i) => i.ip),
    lb.public_ipv6_addresses.length === 2
      ? ["203.0.113.7", "203.0.113.9", "2001:db8::42"]
      : ["203.0.113.7", "2001:db8::42"],
    "no leading zeros, the mapped address as the IPv4 it is (with the IPv4s), IPv6 compressed lower-case",
  );
});

Deno.test("a server whose addresses the API gives zero-padded or uncompressed gets canonical Node addresses", async () => {
  await using env = await startFakeNodeControllers();
  const server = env.cloud.simulator.sim.world.addServer(serverSeed({
    hostname: "worker-9",
    zone: "de-fsn1",
    interfaces: [{ network_id: "net-1", address: "10.0.0.9" }],
  }));
  // The simulator's seed takes canonical addresses only; its documents are changed to answer the other forms.
  server.public_ipv4 = "078.046.001.002";
  server.public_ipv6 = "2001:0DB8:0000:0000:0000:0000:0000:0001";
  server.interfaces[0].address = "010.000.000.009";
  env.nodes.put(fakeNode("worker-9", {
    taints: [{ key: UNINITIALIZED_TAINT, effect: "NoSchedule" }],
    providerID: undefined,
    labels: {},
    ready: "False",
  }));
  await eventually(() => env.writes.of("initialise").length === 1, { what: "the initialisation" });
  assert.deepEqual(env.nodes.store.get("worker-9")!.addresses.map((a) => `${a.type} ${a.address}`), [
    "ExternalIP 2001:db8::1",
    "ExternalIP 78.46.1.2",
    "InternalIP fd64:1:0:1::a00:9",
    "InternalIP 10.0.0.9",
    "Hostname worker-9",
  ]);
});
