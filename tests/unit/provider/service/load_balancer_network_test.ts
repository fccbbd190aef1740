/**
 * The load balancer's network and each Node's member address on it: from the servers' legs the API lists, never from
 * the addresses the kubelets report.
 */
import assert from "node:assert/strict";
import type { SlimNode } from "../../../../lib/kube/slim.ts";
import {
  namedNetwork,
  type NetworkWithLegs,
  placementMessage,
  placeOnNetwork,
  serviceNetworkMembers,
  sharedNetworks,
} from "../../../../lib/provider/service/load_balancer_network.ts";
import { defaultSettings } from "../../../../lib/provider/service/annotations.ts";
import { tooManyMembersNotice } from "../../../../lib/provider/service/service_plan.ts";

function net(id: string, legs: [serverId: string, address: string][]): NetworkWithLegs {
  const third = id === "net-1" ? 0 : 1;
  return {
    id,
    name: id,
    cidr: `10.${third}.0.0/16`,
    members: legs.map(([server_id, address]) => ({
      server_id,
      network_id: id,
      address,
      address6: `fd64:1:0:${third + 1}::${address.split(".").slice(2).map(Number).reduce((a, b) => a * 256 + b, 0)}`,
    })),
  };
}

/** server-1 on net-1 (10.0.0.5) and net-2 (10.1.0.5); server-2 on net-1 only; server-3 on net-2 only. */
const NETWORKS = [
  net("net-1", [["srv-1", "10.0.0.5"], ["srv-2", "10.0.0.6"]]),
  net("net-2", [["srv-1", "10.1.0.5"], ["srv-3", "10.1.0.7"]]),
];
const W1 = { node: "worker-1", serverId: "srv-1" };
const W2 = { node: "worker-2", serverId: "srv-2" };
const W3 = { node: "worker-3", serverId: "srv-3" };

Deno.test("the one network every node's server is on is chosen, and each node's address is its server's leg there", () => {
  const placed = placeOnNetwork({ nodes: [W1, W2], networks: NETWORKS });
  assert.ok(placed.ok);
  assert.equal(placed.networkId, "net-1");
  assert.equal(placed.source, "shared");
  assert.deepEqual(placed.addresses.get("worker-1"), { 4: "10.0.0.5", 6: "fd64:1:0:1::5" });
  assert.deepEqual(placed.addresses.get("worker-2"), { 4: "10.0.0.6", 6: "fd64:1:0:1::6" });
});

Deno.test("a node whose server has no leg on the named network stays out, named with the fix; the others serve", () => {
  const placed = placeOnNetwork({
    nodes: [W1, W2, W3],
    networks: NETWORKS,
    named: { id: "net-1", source: "ANKRA_CLOUD_NETWORK_ID" },
  });
  assert.ok(placed.ok);
  assert.deepEqual([...placed.addresses.keys()], ["worker-1", "worker-2"]);
  assert.ok(placed.leftOut);
  assert.deepEqual(placed.leftOut.nodes.map((n) => [n.node, n.families, n.out]), [["worker-3", [6, 4], true]]);
  assert.equal(
    placed.leftOut.problem,
    "node worker-3 (server srv-3) has no IPv6 or IPv4 address for the load balancer on network net-1 (its server has " +
      "no leg there and no public IPv6 address), so it is not a member",
  );
  assert.match(placed.leftOut.fix, /^attach its server to net-1 \(Ankra Cloud portal\)/);
  assert.match(placed.leftOut.fix, /exclude-from-external-load-balancers=true/);
});

Deno.test("when no node has an address the load balancer may use, nothing is placed, naming the nodes and the fix", () => {
  const placed = placeOnNetwork({
    nodes: [W3],
    networks: NETWORKS,
    named: { id: "net-1", source: "annotation" },
    families: [4],
  });
  assert.ok(!placed.ok);
  assert.deepEqual(placed.missing, ["worker-3"]);
  assert.match(placed.problem, /^node worker-3 \(server srv-3\) has no IPv4 address .*: no node can be a member$/);
  assert.match(placed.fix, /spec\.ipFamilies: \[IPv6\]/);
  assert.match(placementMessage(placed), /^node worker-3 .*: attach its server to net-1/);
});

/** Servers with only their public IPv6: no leg on any network (IPv6 is always on; private networks are extras). */
const V6 = [1, 2].map((i) => ({ node: `worker-${i}`, serverId: `v6-${i}`, publicIpv6: `2001:db8:10::${i}` }));

Deno.test("IPv6-only servers: on a named network they have no leg on, their public IPv6 addresses are the members", () => {
  const named = { id: "net-1", source: "annotation" as const };
  const ipv6 = placeOnNetwork({ nodes: V6, networks: NETWORKS, named, families: [6] });
  assert.ok(ipv6.ok);
  assert.equal(ipv6.leftOut, undefined);
  assert.deepEqual(ipv6.addresses.get("worker-1"), { 6: "2001:db8:10::1" });
  // Dual-stack: served over IPv6; the IPv4 family has no member, and the user is told why.
  const dual = placeOnNetwork({ nodes: V6, networks: NETWORKS, named, families: [6, 4] });
  assert.ok(dual.ok);
  assert.deepEqual(dual.leftOut?.nodes.map((n) => [n.node, n.families, n.out]), [
    ["worker-1", [4], false],
    ["worker-2", [4], false],
  ]);
  assert.match(dual.leftOut!.problem, /^nodes worker-1 and worker-2 have no IPv4 address .* over IPv6 only$/);
  // IPv4 only: no member at all.
  const ipv4 = placeOnNetwork({ nodes: V6, networks: NETWORKS, named, families: [4] });
  assert.ok(!ipv4.ok);
  assert.deepEqual(ipv4.missing, ["worker-1", "worker-2"]);
  // Nothing named, no network shared: the operator is asked to name the load balancer's network.
  const unnamed = placeOnNetwork({ nodes: V6, networks: NETWORKS, families: [6] });
  assert.ok(!unnamed.ok);
  assert.match(unnamed.problem, /do not share one Ankra private network/);
  assert.match(unnamed.fix, /network-id annotation or ANKRA_CLOUD_NETWORK_ID .*public IPv6 address/);
});

Deno.test("a mixed world: servers with a leg serve both families by the leg, servers without one IPv6 by their public address", () => {
  const nodes = [{ ...W1, publicIpv6: "2001:db8:10::5" }, {
    node: "worker-4",
    serverId: "v6-4",
    publicIpv6: "2001:db8:10::4",
  }];
  const placed = placeOnNetwork({ nodes, networks: NETWORKS, named: { id: "net-1", source: "annotation" } });
  assert.ok(placed.ok);
  // The leg's ULA wins over the public address where there is a leg.
  assert.deepEqual(placed.addresses.get("worker-1"), { 6: "fd64:1:0:1::5", 4: "10.0.0.5" });
  assert.deepEqual(placed.addresses.get("worker-4"), { 6: "2001:db8:10::4" });
  assert.deepEqual(placed.leftOut?.nodes.map((n) => [n.node, n.families]), [["worker-4", [4]]]);
});

Deno.test("300 IPv6-only nodes: 256 members, their public addresses", () => {
  const names = Array.from({ length: 300 }, (_, i) => `node-${String(i).padStart(3, "0")}`);
  const intent = {
    key: "default/web",
    settings: { ...defaultSettings(), networkId: "net-1" },
    nodes: names.map((name, i) => node(name, `v6-${i}`, `2001:db8:10::${i.toString(16)}`)),
  };
  const publicIpv6 = (id: string) => `2001:db8:10::${Number(id.slice(3)).toString(16)}`;
  const decided = serviceNetworkMembers(intent, [6], { networks: NETWORKS, publicIpv6 });
  assert.ok(decided.ok);
  assert.equal(decided.members.length, 256);
  assert.ok(decided.members.every((m) => m.address === publicIpv6(`v6-${Number(m.node.slice(5))}`)));
  assert.equal(decided.leftOut, undefined);
});

Deno.test("past 256 the candidates are the servers' addresses on the network, whatever the kubelets report", () => {
  // 150 dual-stack servers whose kubelets report only their IPv4: 300 candidate addresses, as TooManyMembers says.
  const names = Array.from({ length: 150 }, (_, i) => `node-${String(i).padStart(3, "0")}`);
  const legs = names.map((_, i): [string, string] => [`srv-${i}`, `10.0.${Math.floor(i / 200)}.${(i % 200) + 10}`]);
  const intent = {
    key: "default/web",
    settings: { ...defaultSettings(), networkId: "net-1" },
    nodes: names.map((name, i) => node(name, `srv-${i}`, legs[i][1])),
  };
  const decided = serviceNetworkMembers(intent, [6, 4], { networks: [net("net-1", legs)] });
  assert.ok(decided.ok);
  assert.equal(decided.members.length, 256);
  assert.equal(decided.candidates, 300);
  assert.match(tooManyMembersNotice(decided).message ?? "", /256 of 300 node addresses serve this Service/);
  assert.equal(tooManyMembersNotice({ members: decided.members.slice(0, 10), candidates: 10 }).message, undefined);
});

Deno.test("no shared network, two shared networks, no nodes, an unknown named network: each says why", () => {
  const apart = placeOnNetwork({ nodes: [W2, W3], networks: NETWORKS });
  assert.ok(!apart.ok);
  assert.match(apart.problem, /do not share one Ankra private network/);
  assert.match(apart.fix, /network-id annotation or ANKRA_CLOUD_NETWORK_ID/);
  const both = [net("net-1", [["srv-1", "10.0.0.5"]]), net("net-2", [["srv-1", "10.1.0.5"]])];
  const two = placeOnNetwork({ nodes: [W1], networks: both });
  assert.ok(!two.ok);
  assert.match(two.problem, /share 2 networks \(net-1, net-2\)/);
  const none = placeOnNetwork({ nodes: [], networks: NETWORKS });
  assert.ok(!none.ok);
  assert.match(none.problem, /no node is matched to an Ankra server yet/);
  const unknown = placeOnNetwork({ nodes: [W1], networks: [], named: { id: "net-9", source: "annotation" } });
  assert.ok(!unknown.ok);
  assert.equal(unknown.problem, "network net-9 (annotation) is not a network of the account");
  assert.deepEqual(sharedNetworks(NETWORKS, ["srv-1"]).map((n) => n.id), ["net-1", "net-2"]);
});

Deno.test("the annotation names the network before ANKRA_CLOUD_NETWORK_ID; neither leaves the choice to the legs", () => {
  assert.deepEqual(namedNetwork("net-2", "net-1"), { id: "net-2", source: "annotation" });
  assert.deepEqual(namedNetwork(undefined, "net-1"), { id: "net-1", source: "ANKRA_CLOUD_NETWORK_ID" });
  assert.equal(namedNetwork(undefined, undefined), undefined);
});

function node(name: string, serverId: string, internal: string): SlimNode {
  return {
    name,
    uid: name,
    resourceVersion: "1",
    providerID: `ankracloud://de-fsn1/${serverId}`,
    labels: {},
    taints: [],
    addresses: [{ type: "InternalIP", address: internal }],
  };
}

Deno.test("a kubelet reporting its address on another network still gets its server's address on the load balancer's", () => {
  // worker-1's kubelet reports 10.1.0.5 (net-2); the load balancer sits on net-1, the only network both share.
  const intent = {
    key: "default/web",
    settings: defaultSettings({}),
    nodes: [node("worker-1", "srv-1", "10.1.0.5"), node("worker-2", "srv-2", "10.0.0.6")],
  };
  const decided = serviceNetworkMembers(intent, [6, 4], { networks: NETWORKS });
  assert.ok(decided.ok);
  assert.equal(decided.networkId, "net-1");
  assert.deepEqual(decided.members, [
    { node: "worker-1", address: "fd64:1:0:1::5" },
    { node: "worker-2", address: "fd64:1:0:1::6" },
    { node: "worker-1", address: "10.0.0.5" },
    { node: "worker-2", address: "10.0.0.6" },
  ]);
  // An existing load balancer keeps its own network, whatever the settings name now.
  const existing = serviceNetworkMembers(intent, [4], {
    networks: [NETWORKS[1]],
    defaultNetworkId: "net-1",
    existingNetworkId: "net-2",
  });
  assert.ok(existing.ok);
  assert.deepEqual(existing.members, [{ node: "worker-1", address: "10.1.0.5" }]);
  assert.deepEqual(existing.leftOut?.nodes.map((n) => n.node), ["worker-2"]);
  assert.match(existing.leftOut!.fix, /delete and recreate the Service/);
});
