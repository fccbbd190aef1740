/**
 * The cached placement facts: the networks carry the servers' legs, a cached read serves later callers, and a
 * fresh read (after a node was found without a leg) sees a server attached since.
 */
import assert from "node:assert/strict";
import { PlacementFacts } from "../../lib/controllers/placement_facts.ts";
import { serverSeed, startTestCloud, testSeed } from "../support/simulator.ts";

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
