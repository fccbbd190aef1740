/**
 * Several Services on one load balancer (`load-balancer.ankra.cloud/share`), the rules: which load balancer a Service
 * uses, who came first, the conflicts a later Service is refused for (a port, a creation-time setting) naming the
 * other, the listeners that are another sharer's, and what leaving takes off the load balancer. Pure.
 */
import assert from "node:assert/strict";
import type { LoadBalancer } from "../../../../lib/cloud/schemas.ts";
import {
  earlier,
  loadBalancerKeyOf,
  planShareLeave,
  shareCheck,
  shareKeyOf,
} from "../../../../lib/provider/service/load_balancer_sharing.ts";
import { loadBalancerOwnership, servesService } from "../../../../lib/provider/service/load_balancer_ownership.ts";
import { parseAnnotations } from "../../../../lib/provider/service/annotations.ts";
import { slimService } from "../../../support/fakes/slim_service.ts";

const SHARE = "load-balancer.ankra.cloud/share";
const sharer = (name: string, created: string, ports: number[], annotations: Record<string, string> = {}) =>
  slimService({
    name,
    creationTimestamp: created,
    annotations: { [SHARE]: "web", ...annotations },
    ports: ports.map((port) => ({ protocol: "TCP", port, nodePort: 30000 + port })),
  });

Deno.test("a sharing Service uses its group's load balancer; a key that is not one is refused as an annotation", () => {
  assert.equal(loadBalancerKeyOf(sharer("a", "t1", [80])), "shared:shop.web");
  assert.equal(loadBalancerKeyOf(slimService()), "shop/web");
  assert.equal(shareKeyOf({ annotations: { [SHARE]: "Web!" } }), undefined);
  const bad = parseAnnotations({ [SHARE]: "Web!" });
  assert.ok(!bad.ok);
  assert.match(bad.problems[0].rule, /1-32 lower-case letters, digits and inner '-'/);
  const withEdge = parseAnnotations({ [SHARE]: "web", "load-balancer.ankra.cloud/edge": "edge-1" });
  assert.ok(
    !withEdge.ok && /cannot be combined with load-balancer\.ankra\.cloud\/edge/.test(withEdge.problems[0].rule),
  );
});

Deno.test("the earlier Service is the one created first, then the one whose name sorts first", () => {
  assert.ok(
    earlier({ name: "b", creationTimestamp: "2026-01-01T00:00:00Z" }, {
      name: "a",
      creationTimestamp: "2026-01-02T00:00:00Z",
    }),
  );
  assert.ok(earlier({ name: "a", creationTimestamp: "t" }, { name: "b", creationTimestamp: "t" }));
});

Deno.test("the other sharers' ports are theirs; a port an earlier one serves is refused, naming it", () => {
  const api = sharer("api", "t1", [80, 8080]);
  const admin = sharer("admin", "t2", [9000]);
  const web = sharer("web", "t3", [443]);
  const settings = { ipv4: false };
  const ok = shareCheck(web, settings, [api, admin]);
  assert.equal(ok.conflict, undefined);
  assert.deepEqual([...ok.claimedByOthers].sort(), ["tcp-80", "tcp-8080", "tcp-9000"]);
  const clash = shareCheck(sharer("late", "t4", [8080, 9443]), settings, [api, admin]);
  assert.match(
    clash.conflict!,
    /^port 8080 is already served by Service shop\/api on the load balancer this Service shares/,
  );
  assert.match(clash.conflict!, /nothing of this Service is applied/);
  // The earlier one keeps its port: the later one that asks for it does not block it.
  const first = shareCheck(api, settings, [sharer("late", "t4", [8080])]);
  assert.equal(first.conflict, undefined);
  assert.ok(!first.claimedByOthers.has("tcp-8080"), "its own port is not another's");
});

Deno.test("ipv4, network-id or zone unlike the earliest sharer's is refused, naming it and each difference", () => {
  const first = sharer("api", "t1", [80], { "load-balancer.ankra.cloud/ipv4": "true" });
  const later = sharer("web", "t2", [443], { "load-balancer.ankra.cloud/zone": "de-fsn2" });
  const checked = shareCheck(later, { ipv4: false, zone: "de-fsn2" }, [first]);
  assert.match(
    checked.conflict!,
    /^asks for ipv4 false \(it has true\), zone de-fsn2 \(it has not set\), unlike Service shop\/api/,
  );
  assert.equal(shareCheck(first, { ipv4: true }, [later]).conflict, undefined, "the earliest one is never refused");
});

Deno.test("leaving takes off the listeners no remaining sharer claims (frontends first); hand-made ones stay", () => {
  const hc = { type: "tcp", path: "/", expected_status: "200-399", interval_seconds: 2, rise: 2, fall: 3 };
  const lb = {
    id: "lb-1",
    frontends: ["tcp-80", "tcp-443", "admin"].map((name) => ({ id: `f-${name}`, name })),
    backends: ["tcp-80", "tcp-443", "admin"].map((name) => ({ id: `b-${name}`, name, health_check: hc, members: [] })),
  } as unknown as LoadBalancer;
  const calls = planShareLeave(lb, new Set(["tcp-80"]));
  assert.deepEqual(calls.map((c) => [c.operation, "name" in c ? c.name : ""]), [
    ["delete_load_balancer_frontend", "tcp-443"],
    ["delete_load_balancer_backend", "tcp-443"],
  ]);
});

Deno.test("a shared load balancer is the group's: this cluster's name and UID and the shared label", () => {
  const cluster = { name: "prod", uid: "uid-a" };
  const labels = {
    "ccm.ankra.cloud/shared": "shop.web",
    "ccm.ankra.cloud/cluster": "prod",
    "ccm.ankra.cloud/cluster-uid": "uid-a",
  };
  assert.deepEqual(loadBalancerOwnership(labels, cluster), { kind: "shared", group: "shop.web" });
  assert.ok(servesService(labels, cluster, "shared:shop.web"));
  assert.ok(!servesService(labels, cluster, "shop/web"), "never a single Service's");
  assert.equal(loadBalancerOwnership({ ...labels, "ccm.ankra.cloud/cluster-uid": "uid-b" }, cluster).kind, "foreign");
});
