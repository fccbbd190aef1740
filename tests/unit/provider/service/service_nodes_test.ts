/**
 * Which nodes may serve a Service's load balancer: the framework's stable node set and the exclusion label as upstream
 * reads it.
 */
import assert from "node:assert/strict";
import { eligibleNodes, isExcludedFromLoadBalancers } from "../../../../lib/provider/service/service_nodes.ts";
import { fakeNode as node } from "../../../support/fakes/fake_cluster.ts";

Deno.test("eligible nodes: not being deleted, not excluded (any value but false), not leaving with the autoscaler", () => {
  const nodes = [
    node("b"),
    node("a"),
    node("gone", { deletionTimestamp: "2026-01-01T00:00:00Z" }),
    node("excluded", { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "" } }),
    node("kept", { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "false" } }),
    node("scaling-down", { taints: [{ key: "ToBeDeletedByClusterAutoscaler", effect: "NoSchedule" }] }),
    node("not-ready", { ready: "False" }),
  ];
  assert.deepEqual(eligibleNodes(nodes).map((n) => n.name), ["a", "b", "kept", "not-ready"]);
});

Deno.test("the exclusion label is read as upstream's strconv.ParseBool: false values keep the node, the rest exclude it", () => {
  const label = "node.kubernetes.io/exclude-from-external-load-balancers";
  const members = ["0", "f", "F", "FALSE", "false", "False"];
  const excluded = ["1", "t", "T", "TRUE", "true", "True", "fAlSe", "yes", "no", "", " false"];
  const nodes = [...members, ...excluded].map((value, i) => node(`n${i}`, { labels: { [label]: value } }));
  const kept = new Set(eligibleNodes(nodes).map((n) => n.labels[label]));
  assert.deepEqual([...kept].sort(), [...members].sort());
  for (const value of members) assert.equal(isExcludedFromLoadBalancers({ [label]: value }), false, value);
  for (const value of excluded) {
    assert.equal(isExcludedFromLoadBalancers({ [label]: value }), true, JSON.stringify(value));
  }
  assert.equal(isExcludedFromLoadBalancers({}), false, "no label: a member");
});
