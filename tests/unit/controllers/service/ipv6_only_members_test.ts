/**
 * IPv6-only servers over fakes (fast tier), the world the member-address regression broke: 300 servers without a leg
 * on any private network and a Service naming the network the load balancer sits on get 256 members (the API's
 * limit), every one a server's public IPv6 address, and the TooManyMembers Warning counts the candidates. The mixed
 * world (a leg on one server, none on the other) runs end to end in tests/integration/member_address_worlds_test.ts.
 */
import assert from "node:assert/strict";
import { eventually } from "../../../support/wait/eventually.ts";
import { fakeNode } from "../../../support/fakes/fake_cluster.ts";
import { startFakeServiceController } from "../../../support/fakes/fake_service_controller.ts";
import { serverSeed } from "../../../support/cloud/simulator.ts";

Deno.test("300 IPv6-only servers and a Service naming the network: 256 members, each a server's public IPv6", async () => {
  await using env = await startFakeServiceController({ networkId: null });
  const { sim } = env.cloud.simulator;
  const publicIpv6 = new Set<string>();
  for (let i = 0; i < 300; i++) {
    const hostname = `v6only-${i}`;
    const server = sim.world.addServer(serverSeed({ hostname, zone: "de-fsn1" }));
    publicIpv6.add(server.public_ipv6!);
    env.nodes.put(fakeNode(hostname, {
      providerID: `ankracloud://de-fsn1/${server.id}`,
      addresses: [{ type: "InternalIP", address: server.public_ipv6! }, { type: "Hostname", address: hostname }],
    }));
  }
  env.addService("web6", {
    ipFamilies: ["IPv6"],
    annotations: { "load-balancer.ankra.cloud/network-id": "net-1" },
  });
  await env.served("web6", 20_000);
  const [lb] = [...sim.loadBalancers.items.values()];
  assert.equal(lb.network_id, "net-1", "the named network");
  const members = lb.backends[0].members;
  assert.equal(members.length, 256, "the API's limit, no more");
  assert.equal(new Set(members.map((m) => m.address)).size, 256, "256 different servers");
  assert.ok(members.every((m) => publicIpv6.has(m.address)), "every member is a server's public IPv6 address");
  await eventually(
    () =>
      env.eventsOf("web6").some((e) => e.reason === "TooManyMembers" && /256 of 300 node addresses/.test(e.message)),
    { what: "the TooManyMembers Warning" },
  );
  assert.ok(!env.eventsOf("web6").some((e) => e.reason === "NodeWithoutMemberAddress"), "no node left out");
});
