import assert from "node:assert/strict";
import type { Edge } from "../../../../lib/cloud/schemas.ts";
import {
  edgeIngress,
  edgeMembersPlan,
  edgeMembersWithout,
  planEdge,
  wantedEdgeMembers,
} from "../../../../lib/provider/service/edge_plan.ts";
import { edgeMemberName, edgeMemberPrefix } from "../../../../lib/provider/service/load_balancer_names.ts";

const PREFIX = edgeMemberPrefix("prod", "shop", "web", "uid-a");
const LEGACY = edgeMemberPrefix("prod", "shop", "web");
const INTENT = {
  ports: [{ port: 80, nodePort: 30080 }],
  members: [{ node: "worker-1", address: "10.0.0.5" }, { node: "worker-2", address: "10.0.0.6" }],
  edgePrefix: PREFIX,
  legacyEdgePrefix: LEGACY,
};

function edge(extra: Record<string, unknown> = {}): Edge {
  return {
    id: "edge-1",
    zone: "de-fsn1",
    name: "edge",
    network_id: "net-1",
    roles: ["load_balancer", "nat"],
    placement: "combined",
    state: "running",
    public_ipv4: "203.0.113.7",
    load_balancer_id: null,
    configuration_generation: 1,
    machines: [{ id: "m1", name: "m1", roles: ["load_balancer"], state: "running", public_ipv6: "2001:db8::7" }],
    members: [],
    active_operation: null,
    created_at: "",
    ...extra,
  } as unknown as Edge;
}

const other = { id: "x", name: "hand-made", frontend_port: 443, address: "10.0.0.9", port: 31443 };

Deno.test("a Service's members go on the edge after everyone else's, which are kept untouched and in order", () => {
  const plan = planEdge(edge({ members: [other] }), INTENT, {
    currentIngress: [],
    ensuringOpen: false,
    recordChanges: true,
  });
  assert.ok(plan.ok);
  assert.equal(plan.calls.length, 1);
  const call = plan.calls[0];
  assert.equal(call.operation, "update_edge");
  assert.deepEqual(call.operation === "update_edge" ? call.body.members : [], [
    { name: "hand-made", frontend_port: 443, address: "10.0.0.9", port: 31443, weight: 100, enabled: true },
    ...wantedEdgeMembers(INTENT),
  ]);
  assert.deepEqual(wantedEdgeMembers(INTENT)[0], {
    name: edgeMemberName(PREFIX, 80, "10.0.0.5", 30080),
    frontend_port: 80,
    address: "10.0.0.5",
    port: 30080,
    weight: 100,
    enabled: true,
  });
  assert.deepEqual(plan.ingress, [{ ip: "2001:db8::7" }, { ip: "203.0.113.7" }], "IPv6 of the machine, then IPv4");
  assert.deepEqual(plan.events.map((e) => [e.when, e.reason]), [
    ["before", "EnsuringLoadBalancer"],
    ["after", "EnsuredLoadBalancer"],
  ]);
  assert.equal(plan.ensuringOpen, false);
});

Deno.test("an edge that already has the Service's members and status needs no call and no event", () => {
  const members = [other, ...wantedEdgeMembers(INTENT).map((m, i) => ({ ...m, id: `m${i}` }))];
  const plan = planEdge(edge({ members }), INTENT, {
    currentIngress: [{ ip: "2001:db8::7" }, { ip: "203.0.113.7" }],
    ensuringOpen: false,
    recordChanges: false,
  });
  assert.ok(plan.ok);
  assert.deepEqual(plan.calls, []);
  assert.deepEqual(plan.events, []);
  assert.equal(plan.ingress, undefined);
  assert.equal(plan.served, true);
});

Deno.test("a port another member serves, or an edge that is not a combined load balancer, is refused with the fix", () => {
  const clash = planEdge(edge({ members: [{ ...other, frontend_port: 80 }] }), INTENT, {
    currentIngress: [],
    ensuringOpen: false,
    recordChanges: false,
  });
  assert.equal(clash.ok, false);
  assert.match(!clash.ok ? clash.problem : "", /port 80 of edge edge-1 is already served by member hand-made; choose/);
  const dedicated = planEdge(edge({ placement: "dedicated" }), INTENT, {
    currentIngress: [],
    ensuringOpen: false,
    recordChanges: false,
  });
  assert.match(!dedicated.ok ? dedicated.problem : "", /not a combined edge with the load_balancer role; drop/);
  const noRole = planEdge(edge({ roles: ["nat"] }), INTENT, {
    currentIngress: [],
    ensuringOpen: false,
    recordChanges: false,
  });
  assert.equal(noRole.ok, false);
});

Deno.test("an edge without an address keeps the Ensuring open: the Service is not reported as served", () => {
  const plan = planEdge(edge({ public_ipv4: null, machines: [] }), INTENT, {
    currentIngress: [],
    ensuringOpen: false,
    recordChanges: true,
  });
  assert.ok(plan.ok);
  assert.equal(plan.served, false);
  assert.equal(plan.ensuringOpen, true);
  assert.deepEqual(plan.events.map((e) => e.reason), ["EnsuringLoadBalancer"]);
  assert.deepEqual(edgeIngress(edge({ public_ipv4: null })), [{ ip: "2001:db8::7" }]);
});

Deno.test("an edge's ingress lists the Service's primary family first", () => {
  const ips = (firstFamily: 4 | 6) => edgeIngress(edge(), { firstFamily, ipMode: "VIP" });
  assert.deepEqual(ips(4), [{ ip: "203.0.113.7", ipMode: "VIP" }, { ip: "2001:db8::7", ipMode: "VIP" }]);
  assert.deepEqual(ips(6), [{ ip: "2001:db8::7", ipMode: "VIP" }, { ip: "203.0.113.7", ipMode: "VIP" }]);
});

Deno.test("leaving an edge removes only the Service's own members; an edge without them needs no call", () => {
  const mine = wantedEdgeMembers(INTENT).map((m) => ({ ...m, id: "" }));
  assert.deepEqual(edgeMembersWithout(edge({ members: [...mine, other] }), [PREFIX, LEGACY]), [
    { name: "hand-made", frontend_port: 443, address: "10.0.0.9", port: 31443, weight: 100, enabled: true },
  ]);
  assert.equal(edgeMembersWithout(edge({ members: [other] }), [PREFIX, LEGACY]), undefined);
  const reordered = edgeMembersPlan(
    edge({ members: [...mine].reverse() }),
    [PREFIX, LEGACY],
    wantedEdgeMembers(INTENT),
  );
  assert.deepEqual(reordered.ok && reordered.changed, false, "the same members in another order are no change");
});

Deno.test("members the Go controller named for the Service are its own: replaced by this cluster's names, never kept", () => {
  const legacy = wantedEdgeMembers({ ...INTENT, edgePrefix: LEGACY }).map((m) => ({ ...m, id: "" }));
  const otherCluster = wantedEdgeMembers({ ...INTENT, edgePrefix: edgeMemberPrefix("prod", "shop", "web", "uid-b") })
    .map((m) => ({ ...m, id: "", frontend_port: 8080 }));
  const plan = edgeMembersPlan(
    edge({ members: [...legacy, ...otherCluster] }),
    [PREFIX, LEGACY],
    wantedEdgeMembers(INTENT),
  );
  assert.ok(plan.ok && plan.changed);
  assert.deepEqual(
    plan.members.map((m) => m.name.slice(0, 8)),
    [...otherCluster.map((m) => m.name.slice(0, 8)), ...wantedEdgeMembers(INTENT).map((m) => m.name.slice(0, 8))],
    "another cluster's members with the same --cluster-name are kept; the legacy names are gone",
  );
  assert.ok(plan.members.every((m) => !m.name.startsWith(LEGACY)));
});
