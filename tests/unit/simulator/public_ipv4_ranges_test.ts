/**
 * Public IPv4 addresses come from the seed's `public_ipv4_ranges`, in order, so a harness that routes them into its own
 * namespaces can keep them apart from every address its machine uses (and the `netns` data plane serves exactly them).
 */
import assert from "node:assert/strict";
import { World } from "../../../simulator/world.ts";
import { testSeed } from "../../support/cloud/simulator.ts";

Deno.test("public IPv4 addresses come from the seeded ranges in order, then the account has none left", () => {
  const world = new World(testSeed({ settings: { public_ipv4_ranges: ["198.51.100.0/30", "198.51.100.8/30"] } }));
  const allocated = Array.from({ length: 4 }, () => world.allocatePublicIpv4());
  assert.deepEqual(allocated, ["198.51.100.1", "198.51.100.2", "198.51.100.9", "198.51.100.10"]);
  assert.throws(() => world.allocatePublicIpv4(), /no public IPv4 address is free/);
  const defaults = new World(testSeed());
  assert.equal(defaults.allocatePublicIpv4(), "203.0.113.1", "the documentation ranges by default");
  assert.throws(() => testSeed({ settings: { public_ipv4_ranges: ["2001:db8::/64"] } }), /must be an IPv4 prefix/);
});
