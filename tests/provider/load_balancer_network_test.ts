/**
 * The load balancer's network and each Node's member address on it: from the servers' legs the API lists, never from
 * the addresses the kubelets report.
 */
import assert from "node:assert/strict";
import type { SlimNode } from "../../lib/kube/slim.ts";
import {
  namedNetwork,
  type NetworkWithLegs,
  placementMessage,
  placeOnNetwork,
  serviceNetworkMembers,
  sharedNetworks,
} from "../../lib/provider/load_balancer_network.ts";
import { defaultSettings } from "../../lib/provider/annotations.ts";

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

Deno.test("a named network whose legs miss a node is refused before anything is made, naming the node and the fix", () => {
  const placed = placeOnNetwork({
    nodes: [W1, W2, W3],
    networks: NETWORKS,
    named: { id: "net-1", source: "ANKRA_CLOUD_NETWORK_ID" },
  });
  assert.ok(!placed.ok);
  assert.deepEqual(placed.missing, ["worker-3"]);
  assert.equal(
    placed.problem,
    "node worker-3 (server srv-3) has no address on network net-1, the load balancer's network, so it cannot be a " +
      "member",
  );
  assert.match(placed.fix, /^attach its server to net-1 \(Ankra Cloud portal\)/);
  assert.match(placed.fix, /exclude-from-external-load-balancers=true/);
  assert.match(placementMessage(placed), /^node worker-3 .*: attach its server to net-1/);
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
    creationTimestamp: "",
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
  assert.ok(!existing.ok);
  assert.deepEqual(existing.missing, ["worker-2"]);
  assert.match(existing.fix, /delete and recreate the Service/);
});
