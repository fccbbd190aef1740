/**
 * The label selector of the `node-selector` annotation: Kubernetes' text form, the label rules, and which nodes match.
 */
import assert from "node:assert/strict";
import { matchesSelector, parseLabelSelector } from "../../../../lib/provider/service/label_selector.ts";
import { decideService } from "../../../../lib/provider/service/service_decision.ts";
import type { SlimNode } from "../../../../lib/kube/slim.ts";
import { asLoadBalancer, slimService } from "../../../support/fakes/slim_service.ts";

function matches(selector: string, labels: Record<string, string>): boolean {
  const parsed = parseLabelSelector(selector);
  assert.ok(parsed.ok, selector);
  return matchesSelector(labels, parsed.requirements);
}

Deno.test("equality, inequality, sets and existence, all of them holding", () => {
  const edge = { pool: "edge", "topology.kubernetes.io/zone": "de-fsn1", gpu: "" };
  assert.equal(matches("pool=edge", edge), true);
  assert.equal(matches("pool==edge", edge), true);
  assert.equal(matches("pool=edge,topology.kubernetes.io/zone!=de-fsn2", edge), true);
  assert.equal(matches("pool=edge,topology.kubernetes.io/zone!=de-fsn1", edge), false);
  assert.equal(matches("pool in (edge, web)", edge), true);
  assert.equal(matches("pool notin (edge)", edge), false);
  assert.equal(matches("tier notin (db)", edge), true, "notin holds where the key is absent");
  assert.equal(matches("tier!=db", edge), true, "!= holds where the key is absent");
  assert.equal(matches("gpu", edge), true, "an empty value exists");
  assert.equal(matches("!spot", edge), true);
  assert.equal(matches("!gpu", edge), false);
});

Deno.test("a selector that breaks the label rules is refused with the rule", () => {
  for (const text of ["", "pool=", "a,,b", "pool in (edge", "-bad=1", "pool=two words", "pool=x/y", "a in (b,c))"]) {
    const parsed = parseLabelSelector(text);
    if (text === "pool=") {
      assert.ok(parsed.ok, "an empty value is a label value");
      continue;
    }
    assert.ok(!parsed.ok, text);
  }
  const bad = parseLabelSelector("-bad=1");
  assert.ok(!bad.ok && /"-bad" is not a label key/.test(bad.rule));
});

function node(name: string, labels: Record<string, string>): SlimNode {
  return {
    name,
    uid: name,
    resourceVersion: "1",
    providerID: `ankracloud://de-fsn1/srv-${name}`,
    labels,
    taints: [],
    addresses: [{ type: "InternalIP", address: `10.0.0.${name.length}` }],
  };
}

Deno.test("node-selector: members are the matching nodes; none matching waits with NoMatchingNodes; invalid is InvalidAnnotation", () => {
  const nodes = [node("a", { pool: "edge" }), node("bb", { pool: "web" })];
  const options = { clusterName: "prod", defaults: { highAvailability: "auto" as const } };
  const selected = decideService(
    slimService({ annotations: { "load-balancer.ankra.cloud/node-selector": "pool=edge" } }),
    nodes,
    options,
  );
  assert.deepEqual(asLoadBalancer(selected).members.map((m) => m.node), ["a"]);
  assert.equal(selected.waitFor, undefined);
  assert.equal(selected.notices.find((n) => n.topic === "node-selector")?.message, undefined);
  const none = decideService(
    slimService({ annotations: { "load-balancer.ankra.cloud/node-selector": "pool=gpu" } }),
    nodes,
    options,
  );
  assert.ok(none.waitFor, "the load balancer is kept as it is");
  const notice = none.notices.find((n) => n.topic === "node-selector")!;
  assert.equal(notice.reason, "NoMatchingNodes");
  assert.match(notice.message!, /"pool=gpu" matches no eligible node/);
  const invalid = decideService(
    slimService({ annotations: { "load-balancer.ankra.cloud/node-selector": "pool in (edge" } }),
    nodes,
    options,
  );
  assert.equal(invalid.notices.find((n) => n.topic === "annotations")?.reason, "InvalidAnnotation");
  assert.ok(invalid.waitFor);
});
