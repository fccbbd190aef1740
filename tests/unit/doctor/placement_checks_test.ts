/**
 * Where new load balancers go: the private network and the zones' capabilities, from already-read answers.
 */
import assert from "node:assert/strict";
import { failedRead, fetched } from "../../../lib/doctor/fetched.ts";
import {
  memberNodes,
  networkFinding,
  zoneCapabilitiesFinding,
  zonesToCheck,
} from "../../../lib/doctor/placement_checks.ts";
import { sharedNetworks } from "../../../lib/provider/service/load_balancer_network.ts";
import { capabilities, network, node, server } from "./doctor_fixtures.ts";

const a = { node: "a", serverId: "srv-a" };
const b = { node: "b", serverId: "srv-b" };

Deno.test("one network shared by every member node's server passes, naming it and each node's address on it", () => {
  const networks = [network("net-1", ["srv-a", "srv-b"]), network("net-2", ["srv-a"])];
  assert.deepEqual(sharedNetworks(networks, ["srv-a", "srv-b"]).map((n) => n.id), ["net-1"]);
  const finding = networkFinding({ networks: fetched(networks), nodes: [a, b] });
  assert.equal(finding.status, "pass");
  assert.match(finding.result, /the 2 member nodes' servers share net-1 \(name-net-1, 10\.0\.0\.0\/16\)/);
  assert.match(finding.result, /members: a 10\.0\.0\.10 fd64:1:0:1::a00:a, b 10\.0\.0\.11 fd64:1:0:1::a00:b$/);
});

Deno.test("servers on different networks, or on two shared ones, fail with the setting to choose", () => {
  const apart = networkFinding({
    networks: fetched([network("net-1", ["srv-a"]), network("net-2", ["srv-b"])]),
    nodes: [a, b],
  });
  assert.equal(apart.status, "fail");
  assert.match(apart.result, /do not share one Ankra private network \(a: net-1, b: net-2\)/);
  assert.match(apart.fix!, /ANKRA_CLOUD_NETWORK_ID/);
  assert.match(apart.fix!, /load-balancer\.ankra\.cloud\/network-id/);
  const two = networkFinding({
    networks: fetched([network("net-1", ["srv-a", "srv-b"]), network("net-2", ["srv-a", "srv-b"])]),
    nodes: [a, b],
  });
  assert.equal(two.status, "fail");
  assert.match(two.result, /share 2 networks \(net-1, net-2\)/);
  assert.equal(networkFinding({ networks: fetched([]), nodes: [] }).status, "skip");
});

Deno.test("ANKRA_CLOUD_NETWORK_ID must exist, reach ANKRA_CLOUD_ZONE and hold every member node's server", () => {
  const missing = networkFinding({
    configuredId: "net-x",
    configured: failedRead({ kind: "not_found", status: 404, message: "get_network: not found (HTTP 404)" }),
    nodes: [a],
  });
  assert.equal(missing.status, "fail");
  assert.match(missing.result, /ANKRA_CLOUD_NETWORK_ID net-x names no network of the account/);
  const good = networkFinding({ configuredId: "net-1", configured: fetched(network("net-1", ["srv-a"])), nodes: [a] });
  assert.equal(good.status, "pass");
  const outside = networkFinding({
    configuredId: "net-1",
    configured: fetched(network("net-1", ["srv-a"])),
    nodes: [a, b],
  });
  assert.equal(outside.status, "warn", "the controller serves from a, and leaves b out with a Warning");
  assert.match(
    outside.result,
    /serves 2 member nodes; members: a 10\.0\.0\.10 fd64:1:0:1::a00:a; but node b \(server srv-b\) has no IPv6 or IPv4 address for the load balancer on network net-1 .*so it is not a member$/,
  );
  assert.match(outside.fix!, /attach its server to net-1/);
  assert.match(outside.fix!, /exclude-from-external-load-balancers=true/);
  // b's server has a public IPv6 address: it serves IPv6 Services by it, and only IPv4 leaves it out.
  const ipv6 = networkFinding({
    configuredId: "net-1",
    configured: fetched(network("net-1", ["srv-a"])),
    nodes: [a, { ...b, publicIpv6: "2001:db8:10::b" }],
  });
  assert.equal(ipv6.status, "warn");
  assert.match(
    ipv6.result,
    /members: a 10\.0\.0\.10 fd64:1:0:1::a00:a, b 2001:db8:10::b; but node b .* no IPv4 address .* over IPv6 only$/,
  );
  const none = networkFinding({ configuredId: "net-1", configured: fetched(network("net-1", [])), nodes: [b] });
  assert.equal(none.status, "fail", "no node can be a member: the controller creates nothing");
  assert.match(none.result, /^node b \(server srv-b\) has no IPv6 or IPv4 address .*: no node can be a member$/);
  const wrongZone = networkFinding({
    configuredId: "net-1",
    configured: fetched(network("net-1", ["srv-a"], ["de-fsn1"])),
    nodes: [a],
    zone: "us-nyc1",
  });
  assert.equal(wrongZone.status, "fail");
  assert.match(wrongZone.result, /does not reach ANKRA_CLOUD_ZONE us-nyc1/);
});

Deno.test("the member nodes are the eligible nodes matched to servers, by providerID or hostname", () => {
  const servers = [server("srv-a", "a"), server("srv-b", "b"), server("srv-c", "c")];
  const nodes = [
    node("a", { providerID: "ankracloud://de-fsn1/srv-a", taints: [] }),
    node("b.cluster.example"),
    node("c", { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "true" } }),
    node("d"),
  ];
  assert.deepEqual(memberNodes(nodes, servers), [
    { node: "a", serverId: "srv-a" },
    { node: "b.cluster.example", serverId: "srv-b" },
  ]);
});

Deno.test("zone capabilities: a pair passes, a one-compute-node zone warns with the API's reason", () => {
  const zones = zonesToCheck(["de-fsn2", "de-fsn1", "de-fsn1"]);
  assert.deepEqual(zones.map((z) => z.name), ["de-fsn1", "de-fsn2"]);
  const answers = { "de-fsn1": fetched(capabilities(2)), "de-fsn2": fetched(capabilities(1)) };
  const auto = zoneCapabilitiesFinding(zones, answers, "auto");
  assert.equal(auto.status, "warn");
  assert.equal(
    auto.result,
    "de-fsn1: HA pair; de-fsn2: single VM only, no failover (the zone has 1 compute node(s); it needs 2)",
  );
  assert.match(auto.fix!, /ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY=false/);
  assert.equal(zoneCapabilitiesFinding(zones.slice(0, 1), answers, "auto").status, "pass");
});

Deno.test("ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY is respected: false passes, true fails where no pair fits", () => {
  const zones = zonesToCheck(["de-fsn2"]);
  const answers = { "de-fsn2": fetched(capabilities(1)) };
  const single = zoneCapabilitiesFinding(zones, answers, "false");
  assert.equal(single.status, "pass");
  assert.equal(single.result, "de-fsn2: single VM (as configured)");
  const pair = zoneCapabilitiesFinding(zones, answers, "true");
  assert.equal(pair.status, "fail");
  assert.match(pair.result, /asks for a pair, which the zone cannot place/);
});

Deno.test("ANKRA_CLOUD_ZONE is checked first; unknown it fails; a zone without compute fails", () => {
  const zones = zonesToCheck(["de-fsn1"], "nowhere");
  assert.deepEqual(zones, [{ name: "nowhere", source: "ANKRA_CLOUD_ZONE" }, { name: "de-fsn1", source: "nodes" }]);
  const unknown = zoneCapabilitiesFinding(zones, {
    nowhere: failedRead({ kind: "not_found", status: 404, message: "get_zone_capabilities: not found" }),
    "de-fsn1": fetched(capabilities(2)),
  }, "auto");
  assert.equal(unknown.status, "fail");
  assert.match(unknown.result, /ANKRA_CLOUD_ZONE nowhere is not a zone of the account/);
  const empty = zoneCapabilitiesFinding(zonesToCheck(["edge-only"]), { "edge-only": fetched(capabilities(0)) }, "auto");
  assert.equal(empty.status, "fail");
  assert.match(empty.result, /no load balancer can be placed/);
  assert.equal(zoneCapabilitiesFinding([], {}, "auto").status, "skip");
});
