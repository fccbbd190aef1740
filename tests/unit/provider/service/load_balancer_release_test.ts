/**
 * Keeping a Service's load balancer when it goes (`preserve-on-delete`) and taking one back (`load-balancer-id`): the
 * release calls, the released label and name, who may use a named load balancer, and that hand-made listeners on an
 * adopted load balancer are never touched. Pure.
 */
import assert from "node:assert/strict";
import type { LoadBalancer } from "../../../../lib/cloud/schemas.ts";
import { parseAnnotations, preservesOnDelete } from "../../../../lib/provider/service/annotations.ts";
import { handMadePortsNotice, listenerCalls } from "../../../../lib/provider/service/listener_plan.ts";
import { planLoadBalancer } from "../../../../lib/provider/service/load_balancer_plan.ts";
import { isManagedListener, releasedName } from "../../../../lib/provider/service/load_balancer_names.ts";
import {
  loadBalancerOwnership,
  namedLoadBalancerUse,
} from "../../../../lib/provider/service/load_balancer_ownership.ts";
import { planRelease } from "../../../../lib/provider/service/load_balancer_release.ts";

const CLUSTER = { name: "prod", uid: "uid-a" };
const hc = { type: "tcp" as const, path: "/", expected_status: "200-399", interval_seconds: 2, rise: 2, fall: 3 };
const MEMBERS = [{ node: "worker-1", address: "10.0.0.5" }];
const OURS = {
  "ccm.ankra.cloud/service": "shop/web",
  "ccm.ankra.cloud/cluster": "prod",
  "ccm.ankra.cloud/cluster-uid": "uid-a",
};

function lb(extra: Partial<LoadBalancer> = {}): LoadBalancer {
  return {
    id: "lb-7",
    name: "k8s-prod-shop-web",
    labels: OURS,
    public_ipv6_addresses: ["2001:db8::1"],
    public_ipv6: "2001:db8::1",
    public_ipv4: null,
    frontends: [
      { id: "f80", name: "tcp-80", port: 80, backend_id: "b80", tls: false, certificate_ids: [] },
      { id: "fh", name: "admin", port: 9000, backend_id: "bh", tls: false, certificate_ids: [] },
    ],
    backends: [
      { id: "b80", name: "tcp-80", mode: "tcp", balance: "roundrobin", health_check: hc, members: [] },
      { id: "bh", name: "admin", mode: "tcp", balance: "roundrobin", health_check: hc, members: [] },
    ],
    ...extra,
  } as unknown as LoadBalancer;
}

Deno.test("release: this controller's listeners go (frontends first), then one rename and relabel; hand-made ones stay", () => {
  const calls = planRelease(lb(), { namespace: "shop", name: "web" }, "uid-a");
  assert.deepEqual(calls.map((c) => c.operation), [
    "delete_load_balancer_frontend",
    "delete_load_balancer_backend",
    "update_load_balancer",
  ]);
  assert.deepEqual(calls[2], {
    operation: "update_load_balancer",
    loadBalancer: { id: "lb-7" },
    body: {
      name: releasedName("k8s-prod-shop-web", "lb-7"),
      labels: {
        "ccm.ankra.cloud/cluster": "prod",
        "ccm.ankra.cloud/cluster-uid": "uid-a",
        "ccm.ankra.cloud/released": "shop.web",
      },
    },
  });
  assert.match(releasedName("k8s-prod-shop-web", "lb-7"), /^k8s-prod-shop-web-released-[0-9a-f]{8}$/);
  const long = releasedName(`k8s-prod-${"n".repeat(60)}`, "lb-7");
  assert.ok(new TextEncoder().encode(long).length <= 64, long);
  assert.notEqual(releasedName("x", "lb-1"), releasedName("x", "lb-2"), "two releases of one Service never collide");
});

Deno.test("a released load balancer is this cluster's, never a Service's, and only the UID it carries counts", () => {
  const released = {
    "ccm.ankra.cloud/cluster": "prod",
    "ccm.ankra.cloud/cluster-uid": "uid-a",
    "ccm.ankra.cloud/released": "shop.web",
  };
  assert.deepEqual(loadBalancerOwnership(released, CLUSTER), { kind: "released", service: "shop.web" });
  assert.equal(loadBalancerOwnership({ ...released, "ccm.ankra.cloud/cluster-uid": "uid-b" }, CLUSTER).kind, "foreign");
});

Deno.test("load-balancer-id: own, released and unlabelled ones may be used; another Service's or cluster's are refused", () => {
  const use = (labels: Record<string, string>, key = "shop/web") =>
    namedLoadBalancerUse({ id: "lb-7", labels }, CLUSTER, key);
  assert.deepEqual(use(OURS), { ok: true, adopt: false });
  assert.deepEqual(use({ "ccm.ankra.cloud/service": "shop/web", "ccm.ankra.cloud/cluster": "prod" }), {
    ok: true,
    adopt: true,
  });
  assert.deepEqual(use({ "ccm.ankra.cloud/cluster-uid": "uid-a", "ccm.ankra.cloud/released": "old.web" }), {
    ok: true,
    adopt: true,
  });
  assert.deepEqual(use({ team: "edge" }), { ok: true, adopt: true });
  const other = use(OURS, "shop/api");
  assert.ok(!other.ok);
  assert.match(other.reason, /^load balancer lb-7 is Service shop\/web's; nothing of it is changed/);
  const foreign = use({ ...OURS, "ccm.ankra.cloud/cluster-uid": "uid-b" });
  assert.ok(!foreign.ok);
  assert.match(foreign.reason, /belongs to another cluster \(ccm\.ankra\.cloud\/cluster-uid=uid-b\)/);
});

Deno.test("an adopted load balancer's hand-made listeners are left alone; a port one serves is named, not forwarded", () => {
  assert.ok(isManagedListener("tcp-80") && isManagedListener("tcp-65535"));
  assert.ok(!isManagedListener("admin") && !isManagedListener("tcp-") && !isManagedListener("tcp-080"));
  const intent = {
    ports: [{ port: 443, nodePort: 30443 }, { port: 9000, nodePort: 30900 }],
    members: MEMBERS,
    settings: { healthCheck: hc, balance: "roundrobin" as const },
  };
  const calls = listenerCalls(lb(), intent, { id: "lb-7" });
  const touched = calls.map((c) => ("name" in c ? c.name : "body" in c && "name" in c.body ? c.body.name : ""));
  assert.ok(!touched.includes("admin"), "the hand-made frontend and backend are never touched");
  assert.deepEqual(calls.map((c) => c.operation), [
    "delete_load_balancer_frontend",
    "create_load_balancer_backend",
    "replace_load_balancer_members",
    "create_load_balancer_frontend",
    "delete_load_balancer_backend",
  ], "tcp-80 goes, tcp-443 comes, nothing for port 9000");
  const notice = handMadePortsNotice(lb(), intent);
  assert.equal(notice.reason, "PortInUse");
  assert.match(
    notice.message!,
    /already serves port 9000 \(frontend admin\) with a frontend this controller did not make/,
  );
  assert.equal(handMadePortsNotice(lb(), { ports: [{ port: 80, nodePort: 1 }] }).message, undefined);
});

Deno.test("taking back a released load balancer relabels it as the Service's: the released label goes", () => {
  const released = lb({
    labels: {
      "ccm.ankra.cloud/cluster": "prod",
      "ccm.ankra.cloud/cluster-uid": "uid-a",
      "ccm.ankra.cloud/released": "shop.web",
    },
    frontends: [],
    backends: [],
  });
  const plan = planLoadBalancer({
    intent: {
      ports: [{ port: 80, nodePort: 30080 }],
      members: MEMBERS,
      settings: { healthCheck: hc, balance: "roundrobin" },
    },
    currentIngress: [],
    target: { existing: released },
    ensuringOpen: false,
    adopt: { labels: OURS },
  });
  assert.deepEqual(plan.calls[0], {
    operation: "update_load_balancer",
    loadBalancer: { id: "lb-7" },
    body: { labels: OURS },
  });
  assert.deepEqual(plan.ingress, [{ ip: "2001:db8::1" }], "the address it kept is the Service's again");
});

Deno.test("preserve-on-delete is read on its own, so invalid other annotations never lose the address", () => {
  assert.ok(
    preservesOnDelete({
      "load-balancer.ankra.cloud/preserve-on-delete": "true",
      "load-balancer.ankra.cloud/zone": "!",
    }),
  );
  assert.ok(!preservesOnDelete({}));
  const parsed = parseAnnotations({
    "load-balancer.ankra.cloud/load-balancer-id": "lb-7",
    "load-balancer.ankra.cloud/edge": "edge-1",
  });
  assert.ok(!parsed.ok);
  assert.match(parsed.problems[0].rule, /cannot be combined with load-balancer\.ankra\.cloud\/edge/);
  const bad = parseAnnotations({ "load-balancer.ankra.cloud/load-balancer-id": "../lb" });
  assert.ok(!bad.ok, "an id that could become another path is refused");
});
