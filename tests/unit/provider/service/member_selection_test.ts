import assert from "node:assert/strict";
import type { SlimNode } from "../../../../lib/kube/slim.ts";
import {
  MAX_MEMBERS,
  memberAddress,
  proportionalShares,
  selectMembers,
} from "../../../../lib/provider/service/member_selection.ts";

function node(name: string, options: { zone?: string; v4?: string; v6?: string; external6?: string } = {}): SlimNode {
  const addresses = [];
  if (options.external6) addresses.push({ type: "ExternalIP", address: options.external6 });
  if (options.v6) addresses.push({ type: "InternalIP", address: options.v6 });
  if (options.v4) addresses.push({ type: "InternalIP", address: options.v4 });
  return {
    name,
    uid: name,
    resourceVersion: "1",
    providerID: `ankracloud://${options.zone ?? "de-fsn1"}/${name}`,
    labels: options.zone ? { "topology.kubernetes.io/zone": options.zone } : {},
    taints: [],
    addresses,
  };
}

function cluster(count: number, zones = ["de-fsn1"]): SlimNode[] {
  return Array.from({ length: count }, (_, i) =>
    node(`node-${String(i).padStart(4, "0")}`, {
      zone: zones[i % zones.length],
      v4: `10.0.${(i >> 8) & 255}.${i & 255}`,
      v6: `fd12::${i.toString(16)}`,
    }));
}

Deno.test("members: per family IPv6 first, each node's InternalIP before its ExternalIP", () => {
  const nodes = [
    node("n1", { external6: "2001:db8::1", v6: "fd12::5", v4: "10.0.0.5" }),
    node("n2", { external6: "2001:db8::2", v4: "10.0.0.6" }),
    { ...node("n3"), addresses: [{ type: "Hostname", address: "n3" }] },
  ];
  assert.deepEqual(selectMembers(nodes, [6, 4], { serviceKey: "ns/a" }).members, [
    { node: "n1", address: "fd12::5" },
    { node: "n2", address: "2001:db8::2" },
    { node: "n1", address: "10.0.0.5" },
    { node: "n2", address: "10.0.0.6" },
  ]);
  assert.equal(memberAddress(nodes[2], 4), undefined);
});

Deno.test("up to 256 addresses every eligible node serves; past that a dual-stack Service keeps both families", () => {
  const small = selectMembers(cluster(128), [6, 4], { serviceKey: "ns/a" });
  assert.equal(small.members.length, 256);
  assert.equal(small.candidates, 256);
  const big = selectMembers(cluster(300), [6, 4], { serviceKey: "ns/a" });
  assert.equal(big.members.length, MAX_MEMBERS);
  assert.equal(big.candidates, 600);
  const v6 = big.members.filter((m) => m.address.includes(":")).length;
  assert.equal(v6, 128, "half the places for IPv6");
  assert.equal(big.members.length - v6, 128, "half for IPv4: the second family is never lost");
  // The same nodes carry both families.
  const v6Nodes = new Set(big.members.filter((m) => m.address.includes(":")).map((m) => m.node));
  const v4Nodes = new Set(big.members.filter((m) => !m.address.includes(":")).map((m) => m.node));
  assert.deepEqual([...v6Nodes].sort(), [...v4Nodes].sort());
});

Deno.test("a family with fewer candidates leaves its places to the other", () => {
  const nodes = cluster(300).map((n, i) =>
    i < 20 ? n : { ...n, addresses: n.addresses.filter((a) => a.address.includes(".")) }
  );
  const selection = selectMembers(nodes, [6, 4], { serviceKey: "ns/a" });
  assert.equal(selection.members.filter((m) => m.address.includes(":")).length, 20);
  assert.equal(selection.members.filter((m) => !m.address.includes(":")).length, 236);
});

Deno.test("past the limit the chosen nodes spread over the zones in proportion", () => {
  const nodes = [
    ...cluster(300, ["de-fsn1"]).slice(0, 200),
    ...cluster(300, ["de-fsn1", "de-fsn2", "de-nbg1"]).slice(200).map((n, i) => ({
      ...n,
      name: `other-${i}`,
      labels: { "topology.kubernetes.io/zone": i % 2 ? "de-fsn2" : "de-nbg1" },
    })),
  ];
  const selection = selectMembers(nodes, [4], { serviceKey: "ns/a" });
  const zoneOf = new Map(nodes.map((n) => [n.name, n.labels["topology.kubernetes.io/zone"]]));
  const perZone = new Map<string, number>();
  for (const member of selection.members) {
    const zone = zoneOf.get(member.node)!;
    perZone.set(zone, (perZone.get(zone) ?? 0) + 1);
  }
  // 200 : 50 : 50 candidates → 256 places as 171 : 43 : 42 (largest remainder).
  assert.equal(perZone.get("de-fsn1"), 171);
  assert.equal((perZone.get("de-fsn2") ?? 0) + (perZone.get("de-nbg1") ?? 0), 85);
  assert.deepEqual(proportionalShares([200, 50, 50], 256), [171, 43, 42]);
});

Deno.test("different Services prefer different nodes, and every node carries some Service", () => {
  const nodes = cluster(1000);
  const carried = new Map<string, number>();
  const firstTwo: Set<string>[] = [];
  for (let s = 0; s < 20; s++) {
    const chosen = new Set(selectMembers(nodes, [4], { serviceKey: `ns/svc-${s}` }).members.map((m) => m.node));
    if (s < 2) firstTwo.push(chosen);
    for (const name of chosen) carried.set(name, (carried.get(name) ?? 0) + 1);
  }
  const overlap = [...firstTwo[0]].filter((n) => firstTwo[1].has(n)).length;
  assert.ok(overlap < 120, `two Services share ${overlap} of 256 nodes (about a quarter expected, not all)`);
  assert.ok(carried.size > 950, `${carried.size} of 1000 nodes carry at least one of 20 Services`);
});

Deno.test("a node joining or leaving changes at most a couple of places (minimal churn)", () => {
  const nodes = cluster(400, ["de-fsn1", "de-fsn2"]);
  const before = new Set(selectMembers(nodes, [4], { serviceKey: "ns/a" }).members.map((m) => m.address));
  const joined = [...nodes, node("node-new", { zone: "de-fsn1", v4: "10.9.9.9", v6: "fd12::9999" })];
  const after = new Set(selectMembers(joined, [4], { serviceKey: "ns/a" }).members.map((m) => m.address));
  const changed = [...after].filter((a) => !before.has(a)).length;
  assert.ok(changed <= 2, `${changed} members changed after one node joined`);
  const left = nodes.filter((n) => n.name !== "node-0007");
  const afterLeave = new Set(selectMembers(left, [4], { serviceKey: "ns/a" }).members.map((m) => m.address));
  assert.ok([...afterLeave].filter((a) => !before.has(a)).length <= 2);
});

Deno.test("on a private network the member address comes from the given rule, not from the node's reported addresses", () => {
  const nodes = [node("n1", { v4: "10.1.0.5" }), node("n2", { v4: "10.0.0.6" }), node("n3", { v4: "10.0.0.7" })];
  const onNetwork: Record<string, string> = { n1: "10.0.0.5", n2: "10.0.0.6" };
  const selection = selectMembers(nodes, [4], {
    serviceKey: "ns/a",
    address: (n, family) => (family === 4 ? onNetwork[n.name] : undefined),
  });
  assert.deepEqual(selection.members, [{ node: "n1", address: "10.0.0.5" }, { node: "n2", address: "10.0.0.6" }]);
  assert.equal(selection.candidates, 2, "a node without an address by the rule is no candidate");
});
