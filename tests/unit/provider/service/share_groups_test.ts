/**
 * Sharing across namespaces (`load-balancer.ankra.cloud/share-namespaces`), the rules: which group a Service is in,
 * the consent check (both sides, every Service of the group; those already on the load balancer keep their place; a
 * named namespace that shares the key within itself makes a newcomer wait), what is recorded, the group's name and
 * labels (with the namespaces on it, which only the controller writes), what the sweeper keeps, and the port order
 * across namespaces. Pure.
 */
import assert from "node:assert/strict";
import { parseAnnotations } from "../../../../lib/provider/service/annotations.ts";
import {
  sharedLoadBalancerLabels,
  sharedLoadBalancerName,
} from "../../../../lib/provider/service/load_balancer_names.ts";
import {
  ACROSS_NAMESPACES,
  keyOf,
  loadBalancerOwnership,
} from "../../../../lib/provider/service/load_balancer_ownership.ts";
import {
  loadBalancerKeyOf,
  planGroupMove,
  planNamespacesLabel,
  shareCheck,
} from "../../../../lib/provider/service/load_balancer_sharing.ts";
import {
  acrossOrder,
  consentCheck,
  groupMembers,
  liveGroupKeys,
  namespacesLabelValue,
  namespacesOnIt,
  recordedGroupOf,
  recordValue,
  shareGroupOf,
} from "../../../../lib/provider/service/share_groups.ts";
import { slimService } from "../../../support/fakes/slim_service.ts";

const SHARE = "load-balancer.ankra.cloud/share";
/** A consent check that admitted the Service (whatever the namespaces). */
const OK = { ok: true } as const;
const ok = (checked: ReturnType<typeof consentCheck>) => ({ ok: checked.ok });
const ALLOW = "load-balancer.ankra.cloud/share-namespaces";
const RECORDED = "ccm.ankra.cloud/share";

/** A Service of `namespace` sharing `key` (default web), allowing `allow` (unset: none), created at `created`. */
function svc(
  namespace: string,
  name: string,
  created: string,
  options: { allow?: string; key?: string; recorded?: string; ports?: number[] } = {},
) {
  return slimService({
    namespace,
    name,
    creationTimestamp: created,
    annotations: {
      [SHARE]: options.key ?? "web",
      ...(options.allow !== undefined ? { [ALLOW]: options.allow } : {}),
      ...(options.recorded !== undefined ? { [RECORDED]: options.recorded } : {}),
    },
    ports: (options.ports ?? [80]).map((port) => ({ protocol: "TCP", port, nodePort: 30000 + port })),
  });
}

const refusal = (service: ReturnType<typeof svc>, all: ReturnType<typeof svc>[], onIt = new Set<string>()) => {
  const checked = consentCheck(service, all, onIt);
  assert.ok(!checked.ok, `${service.namespace}/${service.name} should be refused`);
  return checked.message;
};

Deno.test("share-namespaces: namespace names or *, only with share; anything else is an invalid annotation", () => {
  const ok = parseAnnotations({ [SHARE]: "web", [ALLOW]: "team-b, team-c" });
  assert.ok(ok.ok);
  assert.deepEqual(ok.settings.shareNamespaces, { all: false, names: ["team-b", "team-c"] });
  const all = parseAnnotations({ [SHARE]: "web", [ALLOW]: "*" });
  assert.ok(all.ok && all.settings.shareNamespaces?.all);
  for (const bad of ["Team-B", "team_b", "a,*", "a,,b", "-a"]) {
    const parsed = parseAnnotations({ [SHARE]: "web", [ALLOW]: bad });
    assert.ok(!parsed.ok, bad);
    assert.match(parsed.problems[0].rule, /must be comma-separated namespace names .* or \*/);
  }
  const alone = parseAnnotations({ [ALLOW]: "team-b" });
  assert.ok(!alone.ok && /needs load-balancer\.ankra\.cloud\/share/.test(alone.problems[0].rule));
});

Deno.test("a namespace is in the group across namespaces only when one of its own Services opens it", () => {
  const a1 = svc("a", "s", "t1", { allow: "b" });
  const a2 = svc("a", "u", "t2");
  const b1 = svc("b", "t", "t3", { allow: "*" });
  const c1 = svc("c", "w", "t0");
  const all = [a1, a2, b1, c1];
  assert.deepEqual(shareGroupOf(a1, all), { namespace: "*", key: "web" });
  assert.deepEqual(shareGroupOf(a2, all), { namespace: "*", key: "web" }, "its namespace is open: all of it");
  assert.deepEqual(shareGroupOf(b1, all), { namespace: "*", key: "web" });
  assert.deepEqual(shareGroupOf(c1, all), { namespace: "c", key: "web" }, "another namespace's * changes nothing");
  assert.deepEqual(groupMembers({ namespace: "*", key: "web" }, all).map((s) => s.name), ["s", "u", "t"]);
  assert.deepEqual(shareGroupOf(svc("a", "x", "t1", { key: "api" }), all), { namespace: "a", key: "api" });
  assert.equal(shareGroupOf(slimService({ namespace: "a" }), all), undefined);
  const self = svc("d", "x", "t1", { allow: "d" });
  assert.deepEqual(shareGroupOf(self, [self]), { namespace: "d", key: "web" }, "naming only its own: not open");
});

Deno.test("consent on both sides: formed when each allows the other, refused naming the side that did not", () => {
  const a = svc("a", "s", "t1", { allow: "b" });
  const b = svc("b", "t", "t2", { allow: "a" });
  assert.deepEqual(consentCheck(a, [a, b]), { ok: true, namespaces: ["a", "b"] });
  assert.deepEqual(consentCheck(b, [a, b]), { ok: true, namespaces: ["a", "b"] });

  // The other side: a allows only c; b asks for a.
  const aOnlyC = svc("a", "s", "t1", { allow: "c" });
  assert.match(
    refusal(b, [aOnlyC, b]),
    /^Service a\/s of share group web across namespaces does not allow namespace b: add b \(or \*\) to its load-balancer\.ankra\.cloud\/share-namespaces, or give this Service another share key; nothing of this Service is applied$/,
  );
  // This side: a allows b; b allows only c.
  const bOnlyC = svc("b", "t", "t2", { allow: "c" });
  assert.match(
    refusal(bOnlyC, [a, bOnlyC]),
    /^this Service does not allow namespace a, where Service a\/s of its share group web is: add a \(or \*\) to its load-balancer\.ankra\.cloud\/share-namespaces/,
  );
  assert.deepEqual(ok(consentCheck(a, [a, bOnlyC])), OK, "the earlier one keeps its place");
  // * allows every namespace.
  assert.deepEqual(ok(consentCheck(b, [svc("a", "s", "t1", { allow: "*" }), b])), OK);
  // A group within a namespace needs no consent.
  assert.deepEqual(ok(consentCheck(svc("c", "w", "t1"), [svc("c", "w", "t1"), svc("c", "v", "t2")])), OK);
});

Deno.test("every Service of the group must allow the newcomer's namespace: one without share-namespaces refuses it", () => {
  const a1 = svc("a", "s", "t1", { allow: "b" });
  const a2 = svc("a", "u", "t2");
  const b = svc("b", "t", "t3", { allow: "a" });
  assert.match(
    refusal(b, [a1, a2, b]),
    /^Service a\/u of share group web across namespaces does not allow namespace b/,
  );
  assert.deepEqual(ok(consentCheck(a2, [a1, a2, b])), OK, "the namespace's own Services stay");
  assert.deepEqual(ok(consentCheck(b, [a1, svc("a", "u", "t2", { allow: "b" }), b])), OK);
});

Deno.test("namespaces on the group's load balancer come first: an older newcomer cannot push them out", () => {
  const member = svc("a", "s", "t5", { allow: "c" });
  const older = svc("b", "t", "t1", { allow: "a" });
  const onIt = new Set(["a"]);
  // a/s does not allow b; b/t is older, but team a is on the load balancer: b/t is the one refused.
  assert.deepEqual(consentCheck(member, [member, older], onIt), { ok: true, namespaces: ["a"] });
  assert.match(
    refusal(older, [member, older], onIt),
    /^Service a\/s of share group web across namespaces does not allow/,
  );
  // Without it, creation time decides.
  assert.match(refusal(member, [member, older]), /^this Service does not allow namespace b, where Service b\/t/);
  // A Service's own record of the group counts for nothing: only the load balancer's label does.
  const forged = svc("b", "t", "t1", { allow: "*", recorded: "*.web" });
  assert.match(refusal(forged, [member, forged], onIt), /^Service a\/s .* does not allow namespace b/);
  // A refused Service does not count for later ones.
  const later = svc("c", "v", "t6", { allow: "a,b" });
  assert.deepEqual(consentCheck(later, [member, older, later], onIt), { ok: true, namespaces: ["a", "c"] });
});

Deno.test("a newcomer waits while a namespace it names shares the key within itself; * and members do not", () => {
  const a1 = svc("a", "s", "t1");
  const a2 = svc("a", "u", "t2");
  const b = svc("b", "t", "t3", { allow: "a" });
  assert.match(
    refusal(b, [a1, a2, b]),
    /^namespace a, named in load-balancer\.ankra\.cloud\/share-namespaces, shares web within itself \(a\/s, a\/u\) and does not allow namespace b: add load-balancer\.ankra\.cloud\/share-namespaces: b \(or \*\) to its Services sharing web, or take a out of this Service's; nothing of this Service is applied until then$/,
  );
  const open = svc("b", "t", "t3", { allow: "*" });
  assert.deepEqual(consentCheck(open, [a1, a2, open]), { ok: true, namespaces: ["b"] }, "* waits for no one");
  assert.deepEqual(ok(consentCheck(b, [a1, a2, b], new Set(["b"]))), OK, "a namespace already on it keeps serving");
  assert.deepEqual(ok(consentCheck(b, [svc("a", "s", "t1", { key: "api" }), b])), OK, "another key");
});

Deno.test("what is recorded: the key within a namespace (as before), *.<key> across; the key it points to", () => {
  assert.deepEqual(recordedGroupOf(svc("a", "s", "t1", { recorded: "web" })), { namespace: "a", key: "web" });
  assert.deepEqual(recordedGroupOf(svc("a", "s", "t1", { recorded: "*.web" })), { namespace: "*", key: "web" });
  assert.equal(recordedGroupOf(slimService()), undefined);
  assert.equal(recordValue({ namespace: "a", key: "web" }), "web");
  assert.equal(recordValue({ namespace: ACROSS_NAMESPACES, key: "web" }), "*.web");
  assert.equal(loadBalancerKeyOf(svc("a", "s", "t1", { recorded: "*.web" })), "shared:*.web");
  assert.equal(loadBalancerKeyOf(svc("a", "s", "t1", { recorded: "web" })), "shared:a.web");
  assert.equal(loadBalancerKeyOf(svc("a", "s", "t1", { recorded: "*.api" })), "shared:a.web", "another key's record");
});

Deno.test("the group across namespaces has a name and labels of no namespace; the one within keeps today's", () => {
  assert.equal(sharedLoadBalancerName("prod", "shop", "web"), "k8s-prod-shop-shared-web");
  assert.equal(sharedLoadBalancerName("prod", "*", "web"), "k8s-prod-shared-web");
  const long = sharedLoadBalancerName("c".repeat(40), "*", "k".repeat(32));
  assert.equal(new TextEncoder().encode(long).length, 64);
  assert.match(long, /^k8s-c{40}-shared-k{3}-[0-9a-f]{8}$/);
  const labels: Record<string, string> = {
    ...sharedLoadBalancerLabels("prod", "*", "web"),
    "ccm.ankra.cloud/cluster-uid": "uid-1",
  };
  assert.equal(labels["ccm.ankra.cloud/shared"], "*.web");
  const cluster = { name: "prod", uid: "uid-1" };
  assert.deepEqual(loadBalancerOwnership(labels, cluster), { kind: "shared", group: "*.web" });
  assert.equal(keyOf(labels, cluster), "shared:*.web");
  const move = planGroupMove(
    { id: "lb-1", labels: { "ccm.ankra.cloud/shared": "a.web", "ccm.ankra.cloud/cluster": "prod", keep: "me" } },
    { name: "k8s-prod-shared-web", labels },
  );
  assert.deepEqual(move, {
    operation: "update_load_balancer",
    loadBalancer: { id: "lb-1" },
    body: {
      name: "k8s-prod-shared-web",
      labels: {
        "ccm.ankra.cloud/shared": "*.web",
        "ccm.ankra.cloud/cluster": "prod",
        "ccm.ankra.cloud/cluster-uid": "uid-1",
        keep: "me",
      },
    },
  });
});

Deno.test("the sweeper keeps every group a Service is in, may be in, or last joined", () => {
  const keys = liveGroupKeys([
    svc("a", "s", "t1", { allow: "b" }),
    svc("a", "u", "t2", { recorded: "web" }),
    svc("c", "w", "t3", { key: "api" }),
    slimService({ namespace: "d", name: "x", annotations: { [RECORDED]: "*.old" } }),
    slimService({ namespace: "e", name: "y" }),
  ]);
  assert.deepEqual([...keys].sort(), ["shared:*.old", "shared:*.web", "shared:a.web", "shared:c.api"]);
});

Deno.test("ports across namespaces: the Service already on the load balancer keeps its port against an older one", () => {
  const onIt = svc("a", "s", "t5", { allow: "*", ports: [80] });
  const older = svc("b", "t", "t1", { allow: "*", ports: [80, 443] });
  const order = acrossOrder(new Set(["a"]));
  const settings = { ipv4: false };
  assert.equal(shareCheck(onIt, settings, [older], order).conflict, undefined);
  assert.match(
    shareCheck(older, settings, [onIt], order).conflict!,
    /^port 80 is already served by Service a\/s on the load balancer/,
  );
  assert.ok(shareCheck(older, settings, [onIt]).conflict === undefined, "by creation time alone the older would win");
});

Deno.test("the namespaces on the load balancer: read from its label, written in order as many as fit", () => {
  assert.deepEqual([...namespacesOnIt({ "ccm.ankra.cloud/shared-namespaces": "a,b" })], ["a", "b"]);
  assert.deepEqual([...namespacesOnIt({})], []);
  assert.deepEqual([...namespacesOnIt(undefined)], []);
  assert.equal(namespacesLabelValue(["team-a", "team-b"]), "team-a,team-b");
  const many = Array.from({ length: 10 }, (_, i) => `${"n".repeat(60)}${i}`);
  const value = namespacesLabelValue(many);
  assert.ok(value.length <= 255);
  assert.equal(value.split(",").length, 4, "61 characters each: four fit with their commas");
  const lb = { id: "lb-1", labels: { "ccm.ankra.cloud/shared": "*.web", "ccm.ankra.cloud/shared-namespaces": "a" } };
  assert.equal(planNamespacesLabel(lb, ["a"]), undefined, "in step: no call");
  assert.deepEqual(planNamespacesLabel(lb, ["a", "b"]), {
    operation: "update_load_balancer",
    loadBalancer: { id: "lb-1" },
    body: { labels: { "ccm.ankra.cloud/shared": "*.web", "ccm.ankra.cloud/shared-namespaces": "a,b" } },
  });
  const back = planGroupMove(lb, { name: "k8s-prod-a-shared-web", labels: { "ccm.ankra.cloud/shared": "a.web" } });
  assert.deepEqual(back.operation === "update_load_balancer" && back.body.labels, {
    "ccm.ankra.cloud/shared": "a.web",
  });
});
