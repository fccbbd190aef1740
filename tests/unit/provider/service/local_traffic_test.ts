import assert from "node:assert/strict";
import type { SlimNode } from "../../../../lib/kube/slim.ts";
import { trafficNodes } from "../../../../lib/provider/service/local_traffic.ts";
import { decideService } from "../../../../lib/provider/service/service_decision.ts";
import { serviceIntent } from "../../../../lib/provider/service/service_plan.ts";
import { asLoadBalancer, slimService } from "../../../support/fakes/slim_service.ts";

function node(name: string, extra: Partial<SlimNode> = {}): SlimNode {
  return {
    name,
    uid: name,
    resourceVersion: "1",
    providerID: `ankracloud://de-fsn1/${name}`,
    labels: {},
    taints: [],
    addresses: [{ type: "InternalIP", address: `10.0.0.${name.length + 10}` }],
    ...extra,
  };
}

const NODES = [node("a"), node("bb"), node("ccc")];
const names = (nodes: readonly SlimNode[]) => nodes.map((n) => n.name);

Deno.test("a Local Service is served only by the nodes holding a ready endpoint", () => {
  assert.deepEqual(names(trafficNodes({ externalTrafficPolicy: "Local" }, NODES, new Set(["bb", "ccc"]))), [
    "bb",
    "ccc",
  ]);
});

Deno.test("a Cluster Service is served by every node whatever its endpoints", () => {
  assert.deepEqual(names(trafficNodes({ externalTrafficPolicy: "Cluster" }, NODES, new Set(["bb"]))), names(NODES));
  assert.deepEqual(names(trafficNodes({}, NODES, new Set(["bb"]))), names(NODES));
});

Deno.test("a Local Service without any ready endpoint keeps every node rather than an empty backend", () => {
  assert.deepEqual(names(trafficNodes({ externalTrafficPolicy: "Local" }, NODES, new Set())), names(NODES));
});

Deno.test("a Local Service keeps every node while its EndpointSlices are not known yet", () => {
  assert.deepEqual(names(trafficNodes({ externalTrafficPolicy: "Local" }, NODES, undefined)), names(NODES));
});

Deno.test("endpoints only on nodes that cannot be members leave every node, never an empty backend", () => {
  const nodes = [
    ...NODES,
    node("excluded", { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "true" } }),
    node("foreign", { providerID: "aws:///eu-west-1a/i-1" }),
  ];
  const chosen = trafficNodes({ externalTrafficPolicy: "Local" }, nodes, new Set(["excluded", "foreign", "gone"]));
  assert.deepEqual(names(chosen), names(nodes));
});

Deno.test("the members of a Local Service are the ready nodes' addresses", () => {
  const service = slimService({ externalTrafficPolicy: "Local" });
  const intent = serviceIntent(service, trafficNodes(service, NODES, new Set(["a"])), {
    clusterName: "prod",
    defaults: { highAvailability: "auto" },
  });
  assert.deepEqual(asLoadBalancer(intent).members.map((m) => m.node), ["a"]);
});

Deno.test("a Local Service's notices about the cluster's nodes are decided over every node", () => {
  const service = slimService({ externalTrafficPolicy: "Local" });
  // A k3s server running ServiceLB that holds no endpoint of this Service.
  const k3sServer = node("k3s", {
    labels: { "node-role.kubernetes.io/control-plane": "true" },
    k3sNodeArgs: JSON.stringify(["server"]),
  });
  const nodes = [...NODES, k3sServer];
  const options = { clusterName: "prod", defaults: { highAvailability: "auto" as const } };
  const intent = decideService(service, nodes, { ...options, readyNodes: new Set(["a"]) });
  assert.deepEqual(asLoadBalancer(intent).members.map((m) => m.node), ["a"]);
  const k3sNotice = (i: typeof intent) => i.notices.find((n) => n.topic === "service-lb")?.message;
  assert.equal(
    k3sNotice(intent),
    k3sNotice(decideService({ ...service, externalTrafficPolicy: "Cluster" }, nodes, options)),
  );
  assert.ok(k3sNotice(intent), "the k3s ServiceLB notice still names the server");
});
