/**
 * The simulator's member address rule, shared by load balancers and edges: which addresses the API accepts as members
 * of a load balancer on a private network.
 */
import assert from "node:assert/strict";
import { parseIp } from "../../../lib/ip_address.ts";
import { checkMemberAddress, memberAddressAllowed } from "../../../simulator/member_addresses.ts";
import { ProblemError } from "../../../simulator/problem.ts";
import { World } from "../../../simulator/world.ts";
import { testSeed } from "../../support/cloud/simulator.ts";

function world(): World {
  const w = new World(testSeed(), { clock: () => 0 });
  w.addServer(
    {
      zone: "de-fsn1",
      hostname: "worker-1",
      plan: "standard-2c-4g",
      state: "started",
      labels: {},
      interfaces: [{ network_id: "net-1" }],
      public_ipv6: "fd00:aa::5",
    } as Parameters<World["addServer"]>[0],
  );
  return w;
}

function allowed(w: World, address: string): boolean {
  return memberAddressAllowed(w, { networkId: "net-1", ip: parseIp(address)! });
}

Deno.test("a member is a host of the load balancer's network, never its network, gateway or broadcast address", () => {
  const w = world();
  assert.equal(allowed(w, "10.0.0.10"), true);
  assert.equal(allowed(w, "10.0.255.254"), true);
  assert.equal(allowed(w, "10.0.0.0"), false, "network address");
  assert.equal(allowed(w, "10.0.0.1"), false, "gateway");
  assert.equal(allowed(w, "10.0.255.255"), false, "broadcast");
  assert.equal(allowed(w, "10.1.0.5"), false, "another network's range");
});

Deno.test("an IPv6 member is in the network's ULA /64, a global address, or some server's public IPv6", () => {
  const w = world();
  assert.equal(allowed(w, "fd64:1:0:1::a"), true);
  assert.equal(allowed(w, "2a01:4f8::1"), true);
  assert.equal(allowed(w, "fd00:aa::5"), true, "a server's public IPv6, even a ULA");
  assert.equal(allowed(w, "fd64:1:0:2::a"), false, "another /64 of the ULA range");
});

Deno.test("a refused member address is a 400 naming the member, the network and what is allowed", () => {
  const w = world();
  assert.equal(checkMemberAddress(w, { network_id: "net-1" }, { address: " 10.0.0.10", where: "x" }), "10.0.0.10");
  assert.throws(
    () => checkMemberAddress(w, { network_id: "net-1" }, { address: "10.1.0.5", where: "field members.0.address" }),
    (error) => {
      assert.ok(error instanceof ProblemError);
      assert.equal(error.status, 400);
      assert.match(
        error.message,
        /^field members\.0\.address: 10\.1\.0\.5 is neither a host of network net-1 \(10\.0\.0\.0\/16\)/,
      );
      return true;
    },
  );
  assert.throws(
    () => checkMemberAddress(w, { network_id: "net-1" }, { address: "worker-1", where: "field address" }),
    /field address: worker-1 is not an IP address/,
  );
});
