import assert from "node:assert/strict";
import type { LoadBalancer } from "../../../../lib/cloud/schemas.ts";
import type { CloudCall } from "../../../../lib/provider/service/cloud_calls.ts";
import { describeCall } from "../../../../lib/provider/service/cloud_calls.ts";
import {
  chooseHighAvailability,
  createLoadBalancerBody,
  immutableNotice,
  passEvents,
  planLoadBalancer,
  planServed,
} from "../../../../lib/provider/service/load_balancer_plan.ts";
import { listenerCalls, type ListenerIntent } from "../../../../lib/provider/service/listener_plan.ts";
import { memberName } from "../../../../lib/provider/service/load_balancer_names.ts";
import { backendMembers, membersDiffer } from "../../../../lib/provider/service/member_drain.ts";
import {
  ingressIpMode,
  ingressStyle,
  keepsIpMode,
  loadBalancerIngress,
  sameIngress,
} from "../../../../lib/provider/service/service_ingress.ts";

const hc = { type: "tcp" as const, path: "/", expected_status: "200-399", interval_seconds: 2, rise: 2, fall: 3 };
const MEMBERS = [{ node: "worker-1", address: "fd12::5" }, { node: "worker-2", address: "10.0.0.6" }];

function intent(ports: { port: number; nodePort: number }[], extra: Partial<ListenerIntent["settings"]> = {}) {
  return { ports, members: MEMBERS, settings: { healthCheck: hc, balance: "roundrobin" as const, ...extra } };
}

const baseLb = {
  id: "lb",
  zone: "z",
  name: "n",
  network_id: "net",
  state: "running",
  labels: {},
  public_ipv4: null,
  public_ipv6: "2001:db8::1",
  public_ipv6_addresses: ["2001:db8::1"],
  address: null,
  configuration_generation: 1,
  is_configuration_applied: true,
  nodes: [],
  frontends: [],
  backends: [],
  active_operation: null,
  created_at: "",
} as unknown as LoadBalancer;

const ops = (calls: CloudCall[]) => calls.map((c) => c.operation);

Deno.test("members are named as the Go controller names them and compared as multisets", () => {
  assert.deepEqual(backendMembers(MEMBERS, 30080), [
    { name: memberName("worker-1", "fd12::5"), address: "fd12::5", port: 30080 },
    { name: memberName("worker-2", "10.0.0.6"), address: "10.0.0.6", port: 30080 },
  ]);
  const a = [{ name: "m1", address: "fd12:0::5", port: 1 }, { name: "m2", address: "10.0.0.1", port: 1 }];
  assert.ok(
    !membersDiffer(a, [{ name: "m2", address: "10.0.0.1", port: 1 }, { name: "m1", address: "fd12::5", port: 1 }]),
  );
  assert.ok(
    membersDiffer(a, [{ name: "m1", address: "fd12::5", port: 2 }, { name: "m2", address: "10.0.0.1", port: 1 }]),
  );
});

Deno.test("a new load balancer: create, then per port a backend, its members and a frontend, with exact bodies", () => {
  const create = createLoadBalancerBody(
    {
      loadBalancerName: "k8s-prod-shop-web",
      labels: { "ccm.ankra.cloud/service": "shop/web" },
      settings: { ipv4: false },
    },
    { zone: "de-fsn1", networkId: "network-1", pair: true },
  );
  assert.equal(
    JSON.stringify(create),
    '{"zone":"de-fsn1","name":"k8s-prod-shop-web","network_id":"network-1","labels":{"ccm.ankra.cloud/service":"shop/web"},"public_ipv4":false}',
    "the Go controller's create body, key order included (HA: no high_availability field)",
  );
  const single = createLoadBalancerBody(
    { loadBalancerName: "k8s-prod-shop-web", labels: {}, settings: { ipv4: true } },
    { zone: "de-fsn1", networkId: "network-1", pair: false },
  );
  assert.deepEqual(Object.keys(single), ["zone", "name", "network_id", "labels", "high_availability", "public_ipv4"]);
  const plan = planLoadBalancer({
    intent: intent([{ port: 80, nodePort: 30080 }, { port: 443, nodePort: 30443 }]),
    currentIngress: [],
    target: { create },
    ensuringOpen: false,
  });
  assert.deepEqual(ops(plan.calls), [
    "create_load_balancer",
    "create_load_balancer_backend",
    "replace_load_balancer_members",
    "create_load_balancer_frontend",
    "create_load_balancer_backend",
    "replace_load_balancer_members",
    "create_load_balancer_frontend",
  ], "7 calls for a two-port load balancer: the floor the API allows");
  assert.deepEqual(plan.calls[1], {
    operation: "create_load_balancer_backend",
    loadBalancer: { created: true },
    body: { name: "tcp-80", mode: "tcp", balance: "roundrobin", health_check: hc },
  });
  assert.deepEqual(plan.calls[2], {
    operation: "replace_load_balancer_members",
    loadBalancer: { created: true },
    backend: { createdName: "tcp-80" },
    name: "tcp-80",
    body: { members: backendMembers(MEMBERS, 30080) },
  });
  assert.deepEqual(plan.calls[3], {
    operation: "create_load_balancer_frontend",
    loadBalancer: { created: true },
    backend: { createdName: "tcp-80" },
    body: { name: "tcp-80", port: 80, tls: false, certificate_ids: [], redirect_to_https: false },
  });
  assert.deepEqual(plan.events.map((e) => `${e.when}:${e.reason}`), ["before:EnsuringLoadBalancer"]);
  assert.equal(plan.ensuringOpen, true, "EnsuredLoadBalancer comes once the load balancer has an address");
  assert.equal(plan.served, false);
  assert.match(
    describeCall(plan.calls[0]),
    /create load balancer k8s-prod-shop-web in zone de-fsn1 on network network-1/,
  );
});

Deno.test("a port change 80→8080 deletes the old frontend first and the old backend last", () => {
  const existing = {
    ...baseLb,
    frontends: [{ id: "f80", name: "tcp-80", port: 80, backend_id: "b80" }],
    backends: [{
      id: "b80",
      name: "tcp-80",
      mode: "tcp",
      balance: "roundrobin",
      health_check: hc,
      members: backendMembers(MEMBERS, 30080),
    }],
  } as unknown as LoadBalancer;
  const calls = listenerCalls(existing, intent([{ port: 8080, nodePort: 30081 }]), { id: "lb" });
  assert.deepEqual(ops(calls), [
    "delete_load_balancer_frontend",
    "create_load_balancer_backend",
    "replace_load_balancer_members",
    "create_load_balancer_frontend",
    "delete_load_balancer_backend",
  ]);
  assert.deepEqual(listenerCalls(existing, intent([{ port: 80, nodePort: 30080 }]), { id: "lb" }), [], "steady state");
  const tcpWithOtherPath = {
    ...existing,
    backends: [{ ...existing.backends[0], health_check: { ...hc, path: "/x" } }],
  };
  assert.deepEqual(
    listenerCalls(tcpWithOtherPath as LoadBalancer, intent([{ port: 80, nodePort: 30080 }]), { id: "lb" }),
    [],
    "a tcp check's path does not matter: no endless updates",
  );
  const moved = listenerCalls(existing, { ...intent([{ port: 80, nodePort: 30080 }]), members: MEMBERS.slice(0, 1) }, {
    id: "lb",
  });
  assert.deepEqual(ops(moved), ["replace_load_balancer_members"], "a node change is one replace per backend");
});

Deno.test("TLS and redirect options go on frontends, and a changed mode or option remakes the listener", () => {
  const tls = { protocol: "http" as const, tlsPorts: [443], certificateIds: ["c1"], redirectHttpToHttps: true };
  const existing = {
    ...baseLb,
    frontends: [{ id: "f443", name: "tcp-443", port: 443, backend_id: "b443", tls: false, certificate_ids: [] }],
    backends: [{
      id: "b443",
      name: "tcp-443",
      mode: "tcp",
      balance: "roundrobin",
      health_check: hc,
      members: backendMembers(MEMBERS, 30443),
    }],
  } as unknown as LoadBalancer;
  assert.deepEqual(ops(listenerCalls(existing, intent([{ port: 443, nodePort: 30443 }], tls), { id: "lb" })), [
    "delete_load_balancer_frontend",
    "delete_load_balancer_backend",
    "create_load_balancer_backend",
    "replace_load_balancer_members",
    "create_load_balancer_frontend",
  ]);
  const http = { ...existing, backends: [{ ...existing.backends[0], mode: "http" }] } as unknown as LoadBalancer;
  const calls = listenerCalls(http, intent([{ port: 443, nodePort: 30443 }], tls), { id: "lb" });
  assert.deepEqual(ops(calls), ["delete_load_balancer_frontend", "create_load_balancer_frontend"]);
  assert.deepEqual((calls[1] as Extract<CloudCall, { operation: "create_load_balancer_frontend" }>).body, {
    name: "tcp-443",
    port: 443,
    tls: true,
    certificate_ids: ["c1"],
    redirect_to_https: false,
  });
});

Deno.test("framework events: Ensuring and Ensured always as a pair; a node change is UpdatedLoadBalancer alone", () => {
  const shape = (e: ReturnType<typeof passEvents>) => [e.events.map((x) => `${x.when}:${x.reason}`), e.ensuringOpen];
  assert.deepEqual(shape(passEvents({ changes: true, membersOnly: false, served: true, ensuringOpen: false })), [
    ["before:EnsuringLoadBalancer", "after:EnsuredLoadBalancer"],
    false,
  ]);
  assert.deepEqual(shape(passEvents({ changes: true, membersOnly: false, served: false, ensuringOpen: false })), [
    ["before:EnsuringLoadBalancer"],
    true,
  ]);
  assert.deepEqual(
    shape(passEvents({ changes: false, membersOnly: false, served: true, ensuringOpen: true })),
    [["after:EnsuredLoadBalancer"], false],
    "the pass that finds the address closes the open Ensuring",
  );
  assert.deepEqual(shape(passEvents({ changes: true, membersOnly: true, served: true, ensuringOpen: false })), [
    ["after:UpdatedLoadBalancer"],
    false,
  ]);
  assert.deepEqual(shape(passEvents({ changes: false, membersOnly: false, served: true, ensuringOpen: false })), [
    [],
    false,
  ]);
  const served = planServed([], { ...baseLb, public_ipv4: "203.0.113.5" }, { ensuringOpen: true });
  assert.deepEqual(served.ingress, [{ ip: "2001:db8::1" }, { ip: "203.0.113.5" }]);
  assert.deepEqual(served.events.map((e) => e.reason), ["EnsuredLoadBalancer"]);
});

Deno.test("an unlabelled load balancer with the Service's name is labelled first (adoption), nothing else", () => {
  const existing = {
    ...baseLb,
    labels: { team: "a" },
    frontends: [{ id: "f80", name: "tcp-80", port: 80, backend_id: "b80", tls: false, certificate_ids: [] }],
    backends: [{
      id: "b80",
      name: "tcp-80",
      mode: "tcp",
      balance: "roundrobin",
      health_check: hc,
      members: backendMembers(MEMBERS, 30080),
    }],
  } as unknown as LoadBalancer;
  const plan = planLoadBalancer({
    intent: intent([{ port: 80, nodePort: 30080 }]),
    currentIngress: [{ ip: "2001:db8::1" }],
    target: { existing },
    ensuringOpen: false,
    adopt: { labels: { "ccm.ankra.cloud/service": "shop/web" } },
  });
  assert.deepEqual(plan.calls, [{
    operation: "update_load_balancer",
    loadBalancer: { id: "lb" },
    body: { labels: { team: "a", "ccm.ankra.cloud/service": "shop/web" } },
  }]);
});

Deno.test("the ingress lists every IPv6 of a pair, then the IPv4", () => {
  assert.deepEqual(
    loadBalancerIngress({
      public_ipv6: "2001:db8::1",
      public_ipv6_addresses: ["2001:db8::1", "2001:db8:1::1"],
      public_ipv4: "203.0.113.5",
    }),
    [{ ip: "2001:db8::1" }, { ip: "2001:db8:1::1" }, { ip: "203.0.113.5" }],
  );
});

Deno.test("pair or single VM: configured, else from the zone's capabilities; unknown capabilities mean a pair", () => {
  assert.deepEqual(chooseHighAvailability({ mode: "true", zone: "z", capabilities: undefined }), { pair: true });
  assert.match(chooseHighAvailability({ mode: "false", zone: "z", capabilities: undefined }).singleReason!, /is false/);
  assert.deepEqual(chooseHighAvailability({ mode: "auto", zone: "z", capabilities: "unknown" }), { pair: true });
  const small = chooseHighAvailability({
    mode: "auto",
    zone: "de-fsn2",
    capabilities: { stage: 1, servers: 3, compute_nodes: 1, features: { load_balancer_ha: false } } as never,
  });
  assert.deepEqual(small.pair, false);
  assert.match(small.singleReason!, /zone de-fsn2 is at growth stage 1 with 1 compute node\(s\)/);
});

Deno.test("creation-time settings the load balancer lacks are one ImmutableSetting notice", () => {
  const notice = immutableNotice({ ...baseLb, network_id: "net-a" }, { networkId: "net-b", ipv4: true });
  assert.match(notice.message!, /on network net-a, not the requested net-b.*has no public IPv4/);
  assert.equal(immutableNotice(baseLb, { ipv4: false }).message, undefined);
});

Deno.test("ipMode: Proxy where the load balancer does what kube-proxy's shortcut would skip, VIP otherwise; the annotation wins", () => {
  const tcp = { tlsPorts: [], protocol: "tcp" as const };
  assert.equal(ingressIpMode(tcp), "VIP");
  assert.equal(ingressIpMode({ ...tcp, tlsPorts: [443] }), "Proxy", "TLS is terminated by the load balancer");
  assert.equal(ingressIpMode({ ...tcp, protocol: "http" }), "Proxy", "http mode and its redirect");
  assert.equal(ingressIpMode({ ...tcp, protocol: "http", ipMode: "VIP" }), "VIP");
  assert.equal(ingressIpMode({ ...tcp, ipMode: "Proxy" }), "Proxy");
  const lb = { public_ipv6_addresses: ["2001:db8::1"], public_ipv6: null, public_ipv4: "203.0.113.5" };
  const v6 = (ipMode: "Proxy" | "VIP") => ({ firstFamily: 6 as const, ipMode });
  assert.deepEqual(loadBalancerIngress(lb, v6("Proxy")), [
    { ip: "2001:db8::1", ipMode: "Proxy" },
    { ip: "203.0.113.5", ipMode: "Proxy" },
  ]);
  // A Service published without ipMode (before the upgrade) is written once more; then it is the same.
  const published = [{ ip: "2001:db8::1" }, { ip: "203.0.113.5" }];
  assert.equal(sameIngress(published, loadBalancerIngress(lb, v6("VIP"))), false);
  assert.equal(sameIngress(loadBalancerIngress(lb, v6("VIP")), loadBalancerIngress(lb, v6("VIP"))), true);
  assert.equal(sameIngress(published, loadBalancerIngress(lb)), true, "no ipMode asked: addresses alone");
  const served = planServed(published, lb, { ensuringOpen: false, ingressStyle: v6("Proxy") });
  assert.deepEqual(served.ingress?.map((i) => i.ipMode), ["Proxy", "Proxy"]);
});

Deno.test("the ingress lists the Service's primary family first: ingress[0] of an IPv4 Service is its IPv4", () => {
  const pair = { public_ipv6_addresses: ["2001:db8::1", "2001:db8::2"], public_ipv6: null, public_ipv4: "203.0.113.5" };
  const ips = (ipFamilies: string[]) => loadBalancerIngress(pair, ingressStyle({ ipFamilies })).map((i) => i.ip);
  assert.deepEqual(ips(["IPv4"]), ["203.0.113.5", "2001:db8::1", "2001:db8::2"], "an IPv4 cluster's pods reach [0]");
  assert.deepEqual(ips(["IPv4", "IPv6"]), ["203.0.113.5", "2001:db8::1", "2001:db8::2"]);
  assert.deepEqual(ips(["IPv6", "IPv4"]), ["2001:db8::1", "2001:db8::2", "203.0.113.5"]);
  assert.deepEqual(
    ips([]),
    ["2001:db8::1", "2001:db8::2", "203.0.113.5"],
    "no family known: the Go controller's order",
  );
  assert.deepEqual(ips(["IPv4"]).length, 3, "the other family's addresses are still published");
  assert.deepEqual(loadBalancerIngress({ ...pair, public_ipv4: null }, ingressStyle({ ipFamilies: ["IPv4"] })), [
    { ip: "2001:db8::1" },
    { ip: "2001:db8::2" },
  ]);
  // A Service published IPv6-first by the Go controller is rewritten once, IPv4 first; then it stays.
  const goOrder = [{ ip: "2001:db8::1" }, { ip: "2001:db8::2" }, { ip: "203.0.113.5" }];
  const served = planServed(goOrder, pair, {
    ensuringOpen: false,
    ingressStyle: ingressStyle({ ipFamilies: ["IPv4"] }),
  });
  assert.deepEqual(served.ingress?.map((i) => i.ip), ["203.0.113.5", "2001:db8::1", "2001:db8::2"]);
  assert.equal(
    planServed(served.ingress!, pair, { ensuringOpen: false, ingressStyle: ingressStyle({ ipFamilies: ["IPv4"] }) })
      .ingress,
    undefined,
  );
});

Deno.test("ipMode is published only to API servers that keep it (1.30 and later)", () => {
  assert.equal(keepsIpMode("v1.35.4"), true);
  assert.equal(keepsIpMode("v1.30.0+k3s1"), true);
  assert.equal(keepsIpMode("v1.29.9"), false);
  assert.equal(keepsIpMode("v2.0.0"), true);
  assert.equal(keepsIpMode(undefined), true, "unknown counts as new");
});
