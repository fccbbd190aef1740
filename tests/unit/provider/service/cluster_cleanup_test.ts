/**
 * What `ankra-cloud-ccm cleanup` removes, decided from labels and member names alone: this cluster's load balancers
 * (its UID, or none from the Go controller), never another cluster's with the same name, released ones only when
 * asked; its members on edges (by the cluster's prefix, and the Go controller's prefixes of its Services), every other
 * member kept; and which cluster "by name alone" means. Pure.
 */
import assert from "node:assert/strict";
import type { Edge, LoadBalancer } from "../../../../lib/cloud/schemas.ts";
import { clusterUidByName, planCleanup } from "../../../../lib/provider/service/cluster_cleanup.ts";
import { edgeMemberName, edgeMemberPrefix } from "../../../../lib/provider/service/load_balancer_names.ts";

const lb = (id: string, labels: Record<string, string>, state = "running") =>
  ({ id, name: `name-${id}`, labels, state }) as unknown as LoadBalancer;
const service = (key: string, uid?: string) => ({
  "ccm.ankra.cloud/service": key,
  "ccm.ankra.cloud/cluster": "prod",
  ...(uid ? { "ccm.ankra.cloud/cluster-uid": uid } : {}),
});
const LBS = [
  lb("mine", service("shop/web", "uid-a")),
  lb("legacy", service("shop/api")),
  lb("twin", service("shop/web", "uid-b")),
  lb("released", {
    "ccm.ankra.cloud/cluster": "prod",
    "ccm.ankra.cloud/cluster-uid": "uid-a",
    "ccm.ankra.cloud/released": "shop.old",
  }),
  lb("going", service("shop/gone", "uid-a"), "deleting"),
  lb("staging", { ...service("shop/web", "uid-c"), "ccm.ankra.cloud/cluster": "staging" }),
];
const TARGET = { name: "prod", uid: "uid-a", legacyEdgePrefixes: [], includeReleased: false };

Deno.test("this cluster's and the Go controller's load balancers are deleted; another cluster's and released ones stay", () => {
  const plan = planCleanup(LBS, [], TARGET);
  assert.deepEqual(plan.calls.map((c) => "loadBalancer" in c && "id" in c.loadBalancer ? c.loadBalancer.id : ""), [
    "mine",
    "legacy",
  ]);
  assert.deepEqual(plan.items.map((i) => [i.action, i.id]), [
    ["delete", "mine"],
    ["delete", "legacy"],
    ["keep", "released"],
    ["keep", "going"],
  ]);
  assert.equal(plan.items[0].service, "shop/web");
  assert.match(plan.items[2].text, /released with preserve-on-delete \(--include-released deletes it too\)/);
  assert.equal(plan.otherClusters, 1, "the twin with the same name and another UID");
  const all = planCleanup(LBS, [], { ...TARGET, includeReleased: true });
  assert.ok(all.items.some((i) => i.action === "delete" && i.id === "released"));
});

Deno.test("edge members of the cluster go (its prefix, and the Go controller's of its Services); every other stays", () => {
  const ours = edgeMemberName(edgeMemberPrefix("prod", "shop", "web", "uid-a"), 80, "10.0.0.5", 30080);
  const legacy = edgeMemberName(edgeMemberPrefix("prod", "shop", "api"), 81, "10.0.0.5", 30081);
  const twin = edgeMemberName(edgeMemberPrefix("prod", "shop", "web", "uid-b"), 82, "10.0.0.5", 30082);
  const member = (name: string, port: number) => ({
    id: name,
    name,
    frontend_port: port,
    address: "10.0.0.5",
    port: 30000 + port,
    weight: 100,
    enabled: true,
  });
  const edge = {
    id: "edge-1",
    name: "e",
    members: [member(ours, 80), member(legacy, 81), member(twin, 82), member("hand-made", 443)],
  } as unknown as Edge;
  const untouched = { id: "edge-2", name: "f", members: [member("hand-made", 443)] } as unknown as Edge;
  const plan = planCleanup([], [edge, untouched], {
    ...TARGET,
    legacyEdgePrefixes: [edgeMemberPrefix("prod", "shop", "api")],
  });
  assert.deepEqual(plan.calls, [{
    operation: "update_edge",
    edgeId: "edge-1",
    body: {
      members: [
        { name: twin, frontend_port: 82, address: "10.0.0.5", port: 30082, weight: 100, enabled: true },
        { name: "hand-made", frontend_port: 443, address: "10.0.0.5", port: 30443, weight: 100, enabled: true },
      ],
    },
  }]);
  assert.match(plan.items[0].text, /^remove 2 member\(s\) of this cluster from edge edge-1 \(e\), keep 2$/);
  const byNameOnly = planCleanup([], [edge], TARGET);
  assert.equal(byNameOnly.items[0].text.startsWith("remove 1 member(s)"), true, "without the cluster: its prefix only");
});

Deno.test("by name alone: the one UID the load balancers carry; several clusters with the name are named, none chosen", () => {
  assert.deepEqual(clusterUidByName(LBS.filter((l) => l.id !== "twin"), "prod"), { ok: true, uid: "uid-a" });
  assert.deepEqual(clusterUidByName([lb("legacy", service("shop/api"))], "prod"), { ok: true, uid: undefined });
  const two = clusterUidByName(LBS, "prod");
  assert.ok(!two.ok);
  assert.match(
    two.problem,
    /^load balancers of 2 clusters carry --cluster-name prod \(ccm\.ankra\.cloud\/cluster-uid=uid-a: 3, ccm\.ankra\.cloud\/cluster-uid=uid-b: 1\); name the one to clean up with --cluster-uid/,
  );
});
