/**
 * The doctor's node-address check: made only when a Service is in node-address mode (class, annotation) or the
 * default mode is; warns, naming what to do, about serving nodes whose servers have no public address (of the
 * Service's family), ports the controller refuses, k3s ServiceLB and MetalLB; and in the checklist it sits after the
 * k3s checks.
 */
import assert from "node:assert/strict";
import type { V1Service } from "@kubernetes/client-node";
import { checklist } from "../../../lib/doctor/checklist.ts";
import type { ChecklistInput } from "../../../lib/doctor/checklist_input.ts";
import { leaseKey, type ServiceFacts } from "../../../lib/doctor/facts.ts";
import { fetched } from "../../../lib/doctor/fetched.ts";
import { serviceFacts } from "../../../lib/doctor/gather_facts.ts";
import {
  type NodeAddressCheckInput,
  nodeAddressesFinding,
  nodeAddressServices,
} from "../../../lib/doctor/node_address_checks.ts";
import { matchNodes } from "../../../lib/doctor/placement_checks.ts";
import { setupNeeds } from "../../../lib/doctor/setup_needs.ts";
import { parseReservedPorts } from "../../../lib/provider/service/reserved_ports.ts";
import { slimService } from "../../support/fakes/slim_service.ts";
import { capabilities, k3sArgs, network, node, server } from "./doctor_fixtures.ts";

const ON_NODES = { "load-balancer.ankra.cloud/mode": "node-addresses" };
const RESERVED = (() => {
  const parsed = parseReservedPorts("22,6443,8472/udp");
  assert.ok(parsed.ok);
  return parsed.ranges;
})();

/** A Service in the doctor's view; `shop/web` on TCP 80, IPv4 and IPv6 unless `extra` says otherwise. */
function service(extra: Partial<ServiceFacts> = {}): ServiceFacts {
  return slimService({ ipFamilies: ["IPv6", "IPv4"], ...extra });
}

/** A Ready, initialised k3s agent node on server `s-<name>`. */
function readyNode(name: string, extra = {}) {
  return node(name, {
    providerID: `ankracloud://de-fsn1/s-${name}`,
    taints: [],
    ready: "True",
    k3sNodeArgs: k3sArgs("agent"),
    ...extra,
  });
}

function withAddresses(id: string, hostname: string, addresses: { v6?: string; v4?: string; ula?: boolean }) {
  return {
    ...server(id, hostname),
    public_ipv6: addresses.v6 ?? null,
    public_ipv4: addresses.v4 ?? null,
    public_ipv6_is_private: addresses.ula ?? false,
  };
}

function input(extra: Partial<NodeAddressCheckInput> & { servers?: ReturnType<typeof server>[] } = {}) {
  const nodes = extra.nodes ?? [readyNode("a"), readyNode("b")];
  const servers = extra.servers ?? [
    withAddresses("s-a", "a", { v6: "2001:db8::a" }),
    withAddresses("s-b", "b", { v6: "2001:db8::b", v4: "203.0.113.2" }),
  ];
  return {
    settings: { clusterName: "kubernetes", nodeAddressReservedPorts: RESERVED },
    services: [service({ annotations: ON_NODES })],
    nodes,
    matches: matchNodes(nodes, servers),
    ...extra,
  };
}

Deno.test("doctor node-addresses: no Service of ours in the mode and not the default: the mode is not in use", () => {
  const settings = { clusterName: "kubernetes" };
  const inUse = (services: ServiceFacts[] | undefined) => setupNeeds(settings, services, []).nodeAddresses.needed;
  assert.equal(inUse([service()]), false);
  assert.equal(inUse(undefined), false);
  // A class another implementation serves is not ours, whatever its annotation says.
  assert.equal(inUse([service({ loadBalancerClass: "metallb.io/metallb", annotations: ON_NODES })]), false);
  assert.equal(inUse([service({ annotations: ON_NODES })]), true);
});

Deno.test("doctor node-addresses: class, annotation or default mode select the Services; a good setup passes", () => {
  const byClass = service({ name: "by-class", loadBalancerClass: "ankra.cloud/node-addresses" });
  const byAnnotation = service({ name: "by-annotation", annotations: ON_NODES });
  const plain = service({ name: "plain" });
  const deleting = service({ name: "deleting", annotations: ON_NODES, deletionTimestamp: "2026-01-01T00:00:00Z" });
  const all = [plain, byClass, byAnnotation, deleting];
  assert.deepEqual(nodeAddressServices(all, {}).map((s) => s.name), ["by-annotation", "by-class"]);
  assert.deepEqual(
    nodeAddressServices(all, { defaultLoadBalancerMode: "node-addresses" }).map((s) => s.name),
    ["by-annotation", "by-class", "plain"],
  );
  const finding = nodeAddressesFinding(input({ services: all }));
  assert.equal(finding.status, "pass", finding.result);
  assert.match(finding.result, /2 Services in node-address mode \(shop\/by-annotation, shop\/by-class\)/);
  assert.match(finding.result, /every node that would serve \(a, b\) has a public address/);
  assert.match(finding.result, /neither k3s ServiceLB nor MetalLB serves them/);
  // The default mode alone makes the check, before any Service exists.
  const byDefault = nodeAddressesFinding(
    input({ services: [], settings: { clusterName: "kubernetes", defaultLoadBalancerMode: "node-addresses" } }),
  )!;
  assert.equal(byDefault.status, "pass", byDefault.result);
  assert.match(byDefault.result, /--default-load-balancer-mode=node-addresses \(no such Service yet\)/);
});

Deno.test("doctor node-addresses: a serving node without a public address, or of the Service's family, is named", () => {
  const servers = [
    withAddresses("s-a", "a", { v6: "fd00::a", ula: true }),
    withAddresses("s-b", "b", { v6: "2001:db8::b" }),
  ];
  const finding = nodeAddressesFinding(input({ servers }))!;
  assert.equal(finding.status, "warn");
  assert.match(finding.result, /1 node that would serve has a server without a public address .*: a/);
  assert.match(finding.fix!, /public IPv6, or the IPv4 add-on\), or keep them out with the label/);
  // An IPv4 Service: b has IPv6 only, so a has nothing of its family either: the Service gets no address.
  const v4 = service({ ipFamilies: ["IPv4"], annotations: ON_NODES });
  const none = nodeAddressesFinding(input({ servers, services: [v4] }))!;
  assert.match(none.result, /1 Service would get no address: shop\/web \(IPv4: a, b\)/);
  assert.match(none.fix!, /the IPv4 add-on for an IPv4 Service.*mode: load-balancer/);
  // One node with IPv4: the other is left out, and said so.
  const partly = nodeAddressesFinding(input({
    services: [v4],
    servers: [withAddresses("s-a", "a", { v6: "2001:db8::a" }), withAddresses("s-b", "b", { v4: "203.0.113.2" })],
  }))!;
  assert.equal(partly.status, "warn");
  assert.match(partly.result, /left out of a Service's addresses .*shop\/web \(IPv4\): a/);
});

Deno.test("doctor node-addresses: the serving nodes are the controller's: exclusion label, node selector, Ready", () => {
  const nodes = [
    readyNode("a"),
    readyNode("excluded", { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "true" } }),
    readyNode("other-pool", { labels: { pool: "b" } }),
    readyNode("not-ready", { ready: "False", labels: { pool: "a" } }),
  ];
  const servers = [
    withAddresses("s-a", "a", { v6: "2001:db8::a" }),
    withAddresses("s-excluded", "excluded", {}),
    withAddresses("s-other-pool", "other-pool", {}),
    withAddresses("s-not-ready", "not-ready", {}),
  ];
  const selected = service({ annotations: { ...ON_NODES, "load-balancer.ankra.cloud/node-selector": "pool!=b" } });
  const finding = nodeAddressesFinding(input({ nodes, servers, services: [selected] }))!;
  assert.equal(finding.status, "pass", finding.result);
  assert.match(finding.result, /every node that would serve \(a\)/);
});

Deno.test("doctor node-addresses: a reserved port is named with its range and the flag", () => {
  const ssh = service({ annotations: ON_NODES, ports: [{ protocol: "TCP", port: 22, nodePort: 30022 }] });
  const vxlan = service({ name: "vx", annotations: ON_NODES, ports: [{ protocol: "UDP", port: 8472 }] });
  const finding = nodeAddressesFinding(input({ services: [ssh, vxlan] }))!;
  assert.equal(finding.status, "warn");
  assert.match(finding.result, /2 ports of node-address Services are reserved .*PortReserved/);
  assert.match(finding.result, /shop\/vx port 8472\/UDP \(8472\/udp\), shop\/web port 22\/TCP \(22\/tcp\)/);
  assert.match(finding.fix!, /--node-address-reserved-ports \(chart: loadBalancer\.nodeAddressReservedPorts\)/);
});

Deno.test("doctor node-addresses: k3s ServiceLB and MetalLB serving too are warned, with what to do", () => {
  const nodes = [readyNode("a", { k3sNodeArgs: k3sArgs("server") }), readyNode("b")];
  const withServiceLb = nodeAddressesFinding(input({ nodes }))!;
  assert.equal(withServiceLb.status, "warn");
  assert.match(withServiceLb.result, /k3s ServiceLB runs on 1 k3s server \(a\)/);
  assert.match(withServiceLb.fix!, /--disable=servicelb/);

  const allocated = service({
    annotations: ON_NODES,
    metalLbAllocation: "metallb.io/ip-allocated-from-pool=public",
  });
  const metalLb = nodeAddressesFinding(input({ services: [allocated] }))!;
  assert.equal(metalLb.status, "warn");
  assert.match(metalLb.result, /MetalLB gave 1 node-address Service an address too \(shop\/web: metallb\.io/);
  assert.match(metalLb.fix!, /--lb-class.*spec\.loadBalancerClass: ankra\.cloud\/node-addresses/);

  // MetalLB serving another Service: the class-less node-address Services are at risk, the classed one is not.
  const other = service({ name: "ingress", metalLbAllocation: "metallb.universe.tf/ip-allocated-from-pool=lan" });
  const classless = nodeAddressesFinding(input({ services: [other, service({ annotations: ON_NODES })] }))!;
  assert.match(classless.result, /MetalLB runs in this cluster \(it gave shop\/ingress an address\)/);
  const classed = service({ loadBalancerClass: "ankra.cloud/node-addresses" });
  assert.equal(nodeAddressesFinding(input({ services: [other, classed] }))!.status, "pass");
});

Deno.test("doctor node-addresses: MetalLB's annotation is kept from the Service as read", () => {
  const read = (annotations: Record<string, string>) =>
    serviceFacts({
      metadata: { namespace: "shop", name: "web", uid: "u", annotations },
      spec: { type: "LoadBalancer", ports: [{ port: 80 }] },
    } as V1Service);
  assert.equal(
    read({ "metallb.io/ip-allocated-from-pool": "public" }).metalLbAllocation,
    "metallb.io/ip-allocated-from-pool=public",
  );
  assert.equal(
    read({ "metallb.universe.tf/ip-allocated-from-pool": "lan" }).metalLbAllocation,
    "metallb.universe.tf/ip-allocated-from-pool=lan",
  );
  const plain = read({ "load-balancer.ankra.cloud/mode": "node-addresses" });
  assert.equal(plain.metalLbAllocation, undefined);
  assert.deepEqual(plain.annotations, { "load-balancer.ankra.cloud/mode": "node-addresses" });
});

Deno.test("doctor node-addresses: in the checklist after the k3s checks, skipped saying why when the mode is not in use", () => {
  const checklistInput = (services: ServiceFacts[]): ChecklistInput => ({
    warnings: [],
    settings: {
      apiUrl: "https://cloud.example",
      highAvailability: "auto",
      leaderElect: true,
      leaseName: "ankra-cloud-ccm",
      leaseNamespace: "kube-system",
      delegatedAuthorization: true,
      clusterName: "kubernetes",
      defaultLoadBalancerMode: "load-balancer",
      nodeAddressReservedPorts: RESERVED,
    },
    cloud: {
      reachability: { ok: true, url: "u", status: 401, body: "" },
      zones: fetched([{ name: "de-fsn1" }]),
      servers: fetched([withAddresses("srv-1", "worker-1", { v6: "2001:db8::1" })]),
      networks: fetched([network("net-1", ["srv-1"])]),
      loadBalancers: fetched([]),
      probe: { created: false, failure: { kind: "not_found", status: 404, message: "zone not found" } },
      capabilities: { "de-fsn1": fetched(capabilities(2)) },
    },
    cluster: {
      server: "https://k8s:6443",
      source: "/kubeconfig",
      reachability: { ok: true, url: "u", status: 200, body: "" },
      identity: fetched("admin"),
      version: fetched("v1.37.2"),
      nodes: fetched([
        node("worker-1", { k3sNodeArgs: k3sArgs("server", "--disable=servicelb", "--disable-cloud-controller") }),
      ]),
      services: fetched(services),
      leases: {
        [leaseKey("kube-system", "cloud-controller-manager")]: fetched(null),
        [leaseKey("kube-system", "k3s-cloud-controller-manager")]: fetched(null),
        [leaseKey("kube-system", "ankra-cloud-ccm")]: fetched(null),
      },
      access: fetched([{ check: { group: "", resource: "nodes", verb: "list" }, allowed: true }]),
      clusterUid: fetched("uid-a"),
    },
    now: new Date(),
  });
  const without = checklist(checklistInput([service()])).find((f) => f.id === "node-addresses")!;
  assert.equal(without.status, "skip");
  assert.match(
    without.result,
    /^skipped: node-address mode is not in use: no Service is served on node addresses and --default-load-balancer-mode=load-balancer$/,
  );
  const findings = checklist(checklistInput([service({ annotations: ON_NODES })]));
  const ids = findings.map((f) => f.id);
  assert.equal(ids.indexOf("node-addresses"), ids.indexOf("k3s-cloud-controller") + 1);
  const finding = findings.find((f) => f.id === "node-addresses")!;
  assert.equal(finding.status, "pass", finding.result);
  assert.match(finding.result, /every node that would serve \(worker-1\) has a public address/);
});

Deno.test("doctor node-addresses: what could not be read is said; with nothing to check it is skipped", () => {
  const settings = { clusterName: "kubernetes", defaultLoadBalancerMode: "node-addresses" as const };
  const noServices = nodeAddressesFinding(input({ settings, services: undefined, servicesWhy: "forbidden" }))!;
  assert.equal(noServices.status, "pass", noServices.result);
  assert.match(noServices.result, /k3s ServiceLB does not run \(MetalLB was not checked: forbidden\)/);
  const nothing = nodeAddressesFinding(
    input({ settings, services: undefined, servicesWhy: "forbidden", matches: undefined, serversWhy: "no token" }),
  )!;
  assert.equal(nothing.status, "skip");
  assert.match(nothing.result, /public addresses were not checked: no token; MetalLB was not checked: forbidden/);
});
