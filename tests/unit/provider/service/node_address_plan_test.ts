import assert from "node:assert/strict";
import type { SlimNode } from "../../../../lib/kube/slim.ts";
import {
  ingressChange,
  type NodeAddressInput,
  type NodeAddressPlan,
  planNodeAddresses,
  publicAddressesOf,
  servingNodes,
} from "../../../../lib/provider/service/node_address_plan.ts";
import {
  DEFAULT_RESERVED_PORTS,
  parseReservedPorts,
  reservedRangeOf,
} from "../../../../lib/provider/service/reserved_ports.ts";
import { servingMode, servingModeOf } from "../../../../lib/provider/service/serving_mode.ts";
import { serviceIntent } from "../../../../lib/provider/service/service_plan.ts";
import { decideService } from "../../../../lib/provider/service/service_decision.ts";
import { slimService } from "../../../support/fakes/slim_service.ts";

function node(name: string, extra: Partial<SlimNode> = {}): SlimNode {
  return {
    name,
    uid: name,
    resourceVersion: "1",
    providerID: `ankracloud://de-fsn1/srv-${name}`,
    labels: {},
    taints: [],
    addresses: [{ type: "InternalIP", address: "10.0.0.2" }],
    ready: "True",
    ...extra,
  };
}

/** Server addresses by node name: a has both families, b both, c only IPv6. */
const ADDRESSES: Record<string, { ipv4?: string; ipv6?: string }> = {
  a: { ipv4: "192.0.2.10", ipv6: "2001:db8:1::1" },
  b: { ipv4: "192.0.2.11", ipv6: "2001:db8:2::1" },
  c: { ipv6: "2001:db8:3::1" },
};

const RESERVED = (() => {
  const parsed = parseReservedPorts(DEFAULT_RESERVED_PORTS);
  if (!parsed.ok) throw new Error(parsed.rule);
  return parsed.ranges;
})();

function input(overrides: Partial<NodeAddressInput> = {}): NodeAddressInput {
  return {
    service: {
      ...slimService({ name: "web", ports: [{ port: 80, protocol: "TCP", nodePort: 30080 }], ipFamilies: ["IPv4"] }),
      creationTimestamp: "2026-12-01T00:00:00Z",
    },
    candidates: [node("a"), node("b")],
    addressesOf: (name) => ADDRESSES[name],
    reserved: RESERVED,
    others: [],
    style: { firstFamily: 4, ipMode: "VIP" },
    drain: { periodMs: 0, now: 1_000_000, published: [], leaving: new Map() },
    ...overrides,
  };
}

function served(plan: NodeAddressPlan) {
  assert.ok(plan.ok, plan.ok ? "" : plan.message);
  return plan;
}

Deno.test("node-address mode: the class decides, then the annotation, then the controller's default", () => {
  assert.equal(
    servingMode({ loadBalancerClass: "ankra.cloud/node-addresses" }, "load-balancer", "load-balancer"),
    "node-addresses",
  );
  assert.equal(servingMode({}, "node-addresses", "load-balancer"), "node-addresses");
  assert.equal(servingMode({}, "load-balancer", "node-addresses"), "load-balancer");
  assert.equal(servingMode({}, undefined, "node-addresses"), "node-addresses");
  assert.equal(servingMode({ loadBalancerClass: "other.example/lb" }, undefined, "load-balancer"), "load-balancer");
  assert.equal(servingMode({}, undefined, undefined), "load-balancer", "without --default-load-balancer-mode");
});

Deno.test("servingModeOf reads the annotation itself; an invalid one says nothing, so the class or the default decides", () => {
  const annotated = slimService({ annotations: { "load-balancer.ankra.cloud/mode": "node-addresses" } });
  assert.equal(servingModeOf(annotated, undefined), "node-addresses");
  assert.equal(servingModeOf(slimService({}), "node-addresses"), "node-addresses");
  assert.equal(servingModeOf(slimService({}), undefined), "load-balancer");
  const invalid = slimService({ annotations: { "load-balancer.ankra.cloud/mode": "nodes-please" } });
  assert.equal(servingModeOf(invalid, "load-balancer"), "load-balancer");
  assert.equal(servingModeOf(invalid, "node-addresses"), "node-addresses");
  const classed = slimService({ loadBalancerClass: "ankra.cloud/node-addresses", annotations: invalid.annotations });
  assert.equal(servingModeOf(classed, "load-balancer"), "node-addresses");
});

Deno.test("a server's public addresses: its IPv6 unless a private ULA, its IPv4 add-on; a change named per family", () => {
  assert.deepEqual(
    publicAddressesOf({ public_ipv6: "2001:db8::1", public_ipv4: "198.51.100.7", public_ipv6_is_private: false }),
    { ipv6: "2001:db8::1", ipv4: "198.51.100.7" },
  );
  assert.deepEqual(publicAddressesOf({ public_ipv6: "fd00::1", public_ipv4: null, public_ipv6_is_private: true }), {});
  const nodeOf = (ip: string) => ({ "198.51.100.8": "a", "2001:db8:3::1": "b", "198.51.100.5": "c" })[ip];
  assert.equal(
    ingressChange(
      ["2001:db8:2::1", "198.51.100.7", "198.51.100.9"],
      ["2001:db8:3::1", "198.51.100.8", "198.51.100.9"],
      nodeOf,
    ),
    "IPv6 2001:db8:2::1 → 2001:db8:3::1 (node b); IPv4 198.51.100.7 → 198.51.100.8 (node a)",
  );
  assert.equal(
    ingressChange(["198.51.100.9"], ["198.51.100.9", "198.51.100.5"], nodeOf),
    "IPv4 none → 198.51.100.5 (node c)",
  );
  assert.equal(ingressChange(["198.51.100.7", "198.51.100.9"], ["198.51.100.9"], nodeOf), "IPv4 198.51.100.7 → none");
  assert.equal(ingressChange(["198.51.100.9"], ["198.51.100.9"], nodeOf), "", "nothing changed");
});

Deno.test("the ingress is each serving node's public address of the Service's families, primary family first, ipMode VIP", () => {
  const ipv4Only = served(planNodeAddresses(input()));
  assert.deepEqual(ipv4Only.ingress, [{ ip: "192.0.2.10", ipMode: "VIP" }, { ip: "192.0.2.11", ipMode: "VIP" }]);
  assert.deepEqual(ipv4Only.nodes, ["a", "b"]);
  const dual = served(planNodeAddresses(input({
    service: { ...input().service, ipFamilies: ["IPv6", "IPv4"] },
    style: { firstFamily: 6, ipMode: "VIP" },
  })));
  assert.deepEqual(dual.ingress.map((i) => i.ip), ["2001:db8:1::1", "2001:db8:2::1", "192.0.2.10", "192.0.2.11"]);
});

Deno.test("only Ready nodes serve, not shut down, not being deleted; none Ready: every eligible node keeps the address", () => {
  const nodes = [
    node("a"),
    node("b", { ready: "False" }),
    node("c", { taints: [{ key: "node.cloudprovider.kubernetes.io/shutdown", effect: "NoSchedule" }] }),
    node("d", { deletionTimestamp: "2026-12-04T00:00:00Z" }),
  ];
  assert.deepEqual(servingNodes(nodes).map((n) => n.name), ["a"]);
  const noneReady = [node("b", { ready: "False" }), node("a", { ready: "Unknown" })];
  assert.deepEqual(servingNodes(noneReady).map((n) => n.name), ["a", "b"], "never no address while a node is eligible");
});

Deno.test("a node without an address of the Service's family is left out and named; none with one: refused", () => {
  const plan = served(planNodeAddresses(input({ candidates: [node("a"), node("c")] })));
  assert.deepEqual(plan.ingress.map((i) => i.ip), ["192.0.2.10"]);
  assert.deepEqual(plan.withoutAddress, ["c"]);
  const none = planNodeAddresses(input({ candidates: [node("c")] }));
  assert.equal(none.ok, false);
  assert.equal(!none.ok && none.reason, "NoNodeAddresses");
  assert.match(
    !none.ok ? none.message : "",
    /no serving node \(c\) has a public address of the Service's IP family \(IPv4\)/,
  );
});

Deno.test("a reserved port is refused, naming the port and the list entry; UDP and other ports are served", () => {
  for (
    const [port, protocol, entry] of [[22, "TCP", "22/tcp"], [10250, "TCP", "10248-10259/tcp"], [
      8472,
      "UDP",
      "8472/udp",
    ]] as const
  ) {
    const plan = planNodeAddresses(
      input({ service: { ...input().service, ports: [{ port, protocol, nodePort: 30000 }] } }),
    );
    assert.equal(plan.ok, false, `${port}/${protocol}`);
    assert.equal(!plan.ok && plan.reason, "PortReserved");
    assert.ok(
      !plan.ok && plan.message.includes(`port ${port}/${protocol} is reserved`) && plan.message.includes(entry),
    );
  }
  const udp = planNodeAddresses(input({ service: { ...input().service, ports: [{ port: 53, protocol: "UDP" }] } }));
  assert.ok(udp.ok, "UDP 53 without a node port");
  assert.equal(reservedRangeOf(8472, "TCP", RESERVED), undefined, "8472 is reserved for UDP only");
});

Deno.test("reserved-port lists: ranges and protocols parse, mistakes are named", () => {
  const parsed = parseReservedPorts("22, 30000-30100/udp,80/SCTP");
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.ok && parsed.ranges, [
    { from: 22, to: 22, protocol: "tcp" },
    { from: 30000, to: 30100, protocol: "udp" },
    { from: 80, to: 80, protocol: "sctp" },
  ]);
  for (const bad of ["0", "70000", "100-90", "ssh", "22/icmp"]) {
    const result = parseReservedPorts(bad);
    assert.equal(result.ok, false, bad);
    assert.match(!result.ok ? result.rule : "", new RegExp(`"${bad.replace("/", "\\/")}" is not a port or range`));
  }
});

Deno.test("two node-address Services may not claim one address and port: the later is refused, naming the earlier", () => {
  const earlier = {
    key: "default/first",
    creationTimestamp: "2026-11-01T00:00:00Z",
    ports: [{ port: 80, protocol: "TCP" }],
    ingress: [{ ip: "192.0.2.10" }],
  };
  const refused = planNodeAddresses(input({ others: [earlier] }));
  assert.equal(!refused.ok && refused.reason, "PortConflict");
  assert.match(
    !refused.ok ? refused.message : "",
    /port 80\/TCP on 192\.0\.2\.10 is already served by Service default\/first/,
  );
  // The earlier one is not refused by the later.
  const later = { ...earlier, key: "default/later", creationTimestamp: "2026-12-02T00:00:00Z" };
  assert.ok(planNodeAddresses(input({ others: [later] })).ok);
  // Another protocol, another port, or other nodes: no conflict.
  assert.ok(planNodeAddresses(input({ others: [{ ...earlier, ports: [{ port: 80, protocol: "UDP" }] }] })).ok);
  assert.ok(planNodeAddresses(input({ others: [{ ...earlier, ports: [{ port: 8080, protocol: "TCP" }] }] })).ok);
  assert.ok(planNodeAddresses(input({ others: [{ ...earlier, ingress: [{ ip: "192.0.2.99" }] }] })).ok);
  // An earlier one not yet published claims every node.
  assert.equal(planNodeAddresses(input({ others: [{ ...earlier, ingress: [] }] })).ok, false);
});

Deno.test("a node that stops serving stays in the ingress for the drain period, then leaves", () => {
  const drain = { periodMs: 30_000, now: 1_000_000, published: ["a", "b"], leaving: new Map<string, number>() };
  const candidates = [node("a"), node("b", { ready: "False" })];
  const first = served(planNodeAddresses(input({ candidates, drain })));
  assert.deepEqual(first.ingress.map((i) => i.ip), ["192.0.2.10", "192.0.2.11"], "b drains");
  assert.deepEqual([...first.leaving], [["b", 1_000_000]]);
  assert.equal(first.nextAtMs, 1_030_000);
  const later = served(planNodeAddresses(input({
    candidates,
    drain: { ...drain, now: 1_030_000, published: ["a", "b"], leaving: first.leaving },
  })));
  assert.deepEqual(later.ingress.map((i) => i.ip), ["192.0.2.10"], "b left after 30 s");
  assert.equal(later.nextAtMs, undefined);
  const atOnce = served(planNodeAddresses(input({ candidates, drain: { ...drain, periodMs: 0 } })));
  assert.deepEqual(atOnce.ingress.map((i) => i.ip), ["192.0.2.10"]);
});

Deno.test("in node-address mode UDP, source ranges and Services without node ports are served, no TCP-only notice", () => {
  const service = slimService({
    name: "dns",
    annotations: { "load-balancer.ankra.cloud/mode": "node-addresses" },
    ports: [{ port: 53, protocol: "UDP" }],
    loadBalancerSourceRanges: ["192.0.2.0/24"],
    allocateLoadBalancerNodePorts: false,
  });
  const options = { clusterName: "k", defaults: { highAvailability: "auto" as const } };
  const onNodes = serviceIntent(service, [node("a")], options);
  assert.equal(onNodes.mode, "node-addresses");
  assert.equal(onNodes.waitFor, undefined);
  assert.deepEqual(onNodes.notices.filter((n) => n.message).map((n) => n.reason), []);
  const onLoadBalancer = serviceIntent({ ...service, annotations: {} }, [node("a")], options);
  assert.equal(onLoadBalancer.mode, "load-balancer");
  assert.ok(onLoadBalancer.waitFor, "an Ankra load balancer forwards TCP only");
  assert.deepEqual(
    onLoadBalancer.notices.filter((n) => n.message).map((n) => n.reason).sort(),
    ["UnsupportedPort", "UnsupportedSetting"],
  );
  // The controller's default makes class-less Services node-address ones.
  assert.equal(
    serviceIntent({ ...service, annotations: {} }, [], {
      ...options,
      defaults: { ...options.defaults, mode: "node-addresses" },
    }).mode,
    "node-addresses",
  );
});

Deno.test("a Local node-address Service is published on the nodes holding a ready endpoint", () => {
  const service = slimService({
    name: "local",
    externalTrafficPolicy: "Local",
    annotations: { "load-balancer.ankra.cloud/mode": "node-addresses" },
    ports: [{ port: 80, protocol: "TCP", nodePort: 30080 }],
  });
  const intent = decideService(service, [node("a"), node("b")], {
    clusterName: "k",
    defaults: { highAvailability: "auto" },
    readyNodes: new Set(["b"]),
  });
  const plan = served(planNodeAddresses(input({ candidates: intent.nodes })));
  assert.deepEqual(plan.nodes, ["b"]);
  assert.deepEqual(plan.ingress.map((i) => i.ip), ["192.0.2.11"]);
});
