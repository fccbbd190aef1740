import assert from "node:assert/strict";
import type { SlimNode, SlimService } from "../../../../lib/kube/slim.ts";
import {
  nodeChangeMatters,
  serviceChangeMatters,
  serviceChangeNeedsRead,
} from "../../../../lib/provider/service/service_changes.ts";

const NODE: SlimNode = {
  name: "worker-1",
  uid: "u1",
  resourceVersion: "1",
  providerID: "ankracloud://de-fsn1/srv-1",
  labels: { "topology.kubernetes.io/zone": "de-fsn1", team: "a" },
  taints: [],
  addresses: [{ type: "InternalIP", address: "10.0.0.5" }],
  ready: "True",
};

const SERVICE: SlimService = {
  namespace: "shop",
  name: "web",
  uid: "s1",
  resourceVersion: "1",
  annotations: { "load-balancer.ankra.cloud/protocol": "tcp" },
  finalizers: [],
  type: "LoadBalancer",
  ports: [{ name: "http", protocol: "TCP", port: 80, nodePort: 30080 }],
  ipFamilies: ["IPv4"],
  loadBalancerSourceRanges: [],
  ingress: [],
};

Deno.test("node changes that can change members wake the Services (any label: a node-selector may name it); heartbeats do not", () => {
  const matters: Partial<SlimNode>[] = [
    { providerID: "ankracloud://de-fsn1/srv-2" },
    { deletionTimestamp: "2026-01-02T00:00:00Z" },
    { labels: { ...NODE.labels, "node.kubernetes.io/exclude-from-external-load-balancers": "true" } },
    { labels: { ...NODE.labels, "topology.kubernetes.io/zone": "de-fsn2" } },
    { taints: [{ key: "ToBeDeletedByClusterAutoscaler", effect: "NoSchedule" }] },
    { addresses: [{ type: "InternalIP", address: "10.0.0.6" }] },
    { k3sNodeArgs: '["server"]' },
    { labels: { ...NODE.labels, team: "b" } },
    // Which nodes serve a node-address Service: Ready, shut down, initialised.
    { ready: "False" },
    { taints: [{ key: "node.cloudprovider.kubernetes.io/shutdown", effect: "NoSchedule" }] },
  ];
  for (const change of matters) assert.ok(nodeChangeMatters(NODE, { ...NODE, ...change }), JSON.stringify(change));
  const ignored: Partial<SlimNode>[] = [
    { resourceVersion: "2" },
    { labels: { team: "a", "topology.kubernetes.io/zone": "de-fsn1" } },
    { taints: [{ key: "node.kubernetes.io/not-ready", effect: "NoSchedule" }] },
  ];
  for (const change of ignored) assert.ok(!nodeChangeMatters(NODE, { ...NODE, ...change }), JSON.stringify(change));
});

Deno.test("a change of the Service's spec or owned annotations reads the real load balancer; its own writes do not", () => {
  const reads: Partial<SlimService>[] = [
    { annotations: { "load-balancer.ankra.cloud/protocol": "http" } },
    { annotations: { ...SERVICE.annotations, "load-balancer.ankra.cloud/ipv4": "true" } },
    { annotations: {} },
    { ports: [{ name: "http", protocol: "TCP", port: 8080, nodePort: 30080 }] },
    { ipFamilies: ["IPv6", "IPv4"] },
    { externalTrafficPolicy: "Local" },
    { loadBalancerSourceRanges: ["10.0.0.0/8"] },
    { loadBalancerClass: "other" },
    { type: "NodePort" },
  ];
  for (const change of reads) {
    assert.ok(serviceChangeNeedsRead(SERVICE, { ...SERVICE, ...change }), JSON.stringify(change));
  }
  const own: Partial<SlimService>[] = [
    { resourceVersion: "2" },
    { ingress: [{ ip: "2001:db8::1" }] },
    { finalizers: ["service.kubernetes.io/load-balancer-cleanup"] },
  ];
  for (const change of own) {
    assert.ok(!serviceChangeNeedsRead(SERVICE, { ...SERVICE, ...change }), JSON.stringify(change));
  }
  const reordered = { ...SERVICE, annotations: { b: "2", a: "1" } };
  assert.ok(!serviceChangeNeedsRead({ ...SERVICE, annotations: { a: "1", b: "2" } }, reordered), "order is no change");
});

Deno.test("the controller's own Ready condition wakes no pass; every other change does", () => {
  const before = SERVICE;
  const condition = {
    type: "load-balancer.ankra.cloud/Ready",
    status: "False" as const,
    reason: "QuotaExceeded",
    message: "quota",
    lastTransitionTime: "2026-12-01T10:00:00Z",
  };
  assert.equal(serviceChangeMatters(before, { ...before, resourceVersion: "2", readyCondition: condition }), false);
  assert.equal(serviceChangeMatters(before, { ...before, ingress: [{ ip: "2001:db8::1" }] }), true);
  assert.equal(serviceChangeMatters(before, { ...before, generation: 2 }), true);
  assert.equal(
    serviceChangeMatters(before, { ...before, annotations: { "load-balancer.ankra.cloud/ipv4": "true" } }),
    true,
  );
});
