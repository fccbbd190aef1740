/**
 * The cached placement facts: the networks carry the servers' legs, a cached read serves later callers, and a
 * fresh read (after a node was found without a leg) sees a server attached since.
 */
import assert from "node:assert/strict";
import { PlacementFacts } from "../../../../lib/controllers/service/placement_facts.ts";
import { serverSeed, startTestCloud, testSeed } from "../../../support/cloud/simulator.ts";

Deno.test("networks come with their legs; a fresh read sees a server attached after the cached one", async () => {
  await using cloud = await startTestCloud(testSeed());
  const { sim } = cloud.simulator;
  sim.world.addServer(serverSeed({ hostname: "a", zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }));
  const facts = new PlacementFacts(cloud.client);
  const first = await facts.networks();
  assert.deepEqual(first.map((n) => n.members?.length), [1]);
  const reads = sim.count("get_network");
  sim.world.addServer(serverSeed({ hostname: "b", zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }));
  assert.equal((await facts.networks())[0].members?.length, 1, "the cached read");
  assert.equal((await facts.network("net-1"))?.members?.length, 2, "one network is its own read");
  assert.equal((await facts.networks({ maxAgeMs: 0 }))[0].members?.length, 2, "a fresh read");
  assert.equal(sim.count("get_network"), reads + 2);
  assert.equal(await facts.network("net-404"), undefined, "no such network");
});

Deno.test("the servers' public IPv6 addresses: one list for concurrent callers, cached, a fresh read sees a new server", async () => {
  await using cloud = await startTestCloud(testSeed());
  const { sim } = cloud.simulator;
  const a = sim.world.addServer(serverSeed({ hostname: "a", zone: "de-fsn1" }));
  sim.world.addServer(serverSeed({ hostname: "none", zone: "de-fsn1", public_ipv6: null }));
  const facts = new PlacementFacts(cloud.client);
  const lists = sim.count("list_servers");
  const [first, second] = await Promise.all([facts.publicIpv6(), facts.publicIpv6()]);
  assert.deepEqual(first, second, "concurrent callers read the same list");
  assert.deepEqual([...first], [[a.id, a.public_ipv6]], "a server without a public IPv6 address is absent");
  assert.equal(sim.count("list_servers"), lists + 1);
  const b = sim.world.addServer(serverSeed({ hostname: "b", zone: "de-fsn1" }));
  assert.equal((await facts.publicIpv6()).has(b.id), false, "the cached read");
  assert.equal((await facts.publicIpv6({ maxAgeMs: 0 })).get(b.id), b.public_ipv6, "a fresh read");
  assert.equal(sim.count("list_servers"), lists + 2);
});
