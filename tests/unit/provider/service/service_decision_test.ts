import assert from "node:assert/strict";
import type { SlimNode } from "../../../../lib/kube/slim.ts";
import { decideService } from "../../../../lib/provider/service/service_decision.ts";
import { asLoadBalancer, slimService } from "../../../support/fakes/slim_service.ts";

function node(name: string): SlimNode {
  return {
    name,
    resourceVersion: "1",
    providerID: `ankracloud://de-fsn1/srv-${name}`,
    labels: {},
    taints: [],
    addresses: [{ type: "InternalIP", address: `10.0.0.${name.length}` }],
    conditions: [{ type: "Ready", status: "True" }],
  } as unknown as SlimNode;
}

const OPTIONS = { clusterName: "prod", defaults: { highAvailability: "auto" as const } };
const NODES = [node("a"), node("bb"), node("ccc")];

Deno.test("a node whose server is about to go down leaves a load balancer's members and a node-address Service's nodes, named in leaving", () => {
  const leaving = new Set(["bb"]);
  const lb = asLoadBalancer(decideService(slimService(), NODES, { ...OPTIONS, leaving }));
  assert.deepEqual(lb.nodes.map((n) => n.name), ["a", "ccc"]);
  assert.deepEqual([...new Set(lb.members.map((m) => m.node))], ["a", "ccc"]);
  assert.deepEqual(lb.leaving, ["bb"]);
  const onNodes = decideService(
    slimService({ annotations: { "load-balancer.ankra.cloud/mode": "node-addresses" } }),
    NODES,
    { ...OPTIONS, leaving },
  );
  assert.equal(onNodes.mode, "node-addresses");
  assert.deepEqual(onNodes.nodes.map((n) => n.name), ["a", "ccc"]);
  assert.deepEqual(onNodes.leaving, ["bb"]);
});

Deno.test("nodes about to go down stay when no other node could serve; nothing leaves without an announcement", () => {
  const all = new Set(NODES.map((n) => n.name));
  const kept = asLoadBalancer(decideService(slimService(), NODES, { ...OPTIONS, leaving: all }));
  assert.deepEqual(kept.nodes.map((n) => n.name), ["a", "bb", "ccc"], "a sole way to serve is kept");
  assert.equal(kept.leaving, undefined);
  const none = asLoadBalancer(decideService(slimService(), NODES, OPTIONS));
  assert.deepEqual(none.nodes.map((n) => n.name), ["a", "bb", "ccc"]);
  assert.equal(none.leaving, undefined);
  const selected = asLoadBalancer(decideService(
    slimService({ annotations: { "load-balancer.ankra.cloud/node-selector": "pool=edge" } }),
    NODES.map((n) => n.name === "ccc" ? n : { ...n, labels: { pool: "edge" } }),
    { ...OPTIONS, leaving: new Set(["ccc"]) },
  ));
  assert.equal(selected.leaving, undefined, "a node the Service does not use is not its to drain");
});
