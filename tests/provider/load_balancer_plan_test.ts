import assert from "node:assert/strict";
import { loadBalancerName, memberName, shortHash } from "../../lib/provider/load_balancer_names.ts";
import {
  eligibleNodes,
  listenerSteps,
  loadBalancerIngress,
  memberAddresses,
  membersDiffer,
  portPlan,
  serviceFamilies,
} from "../../lib/provider/load_balancer_plan.ts";
import type { SlimNode, SlimService } from "../../lib/kube/slim.ts";
import type { LoadBalancer } from "../../lib/cloud/schemas.ts";

const node = (name: string, extra: Partial<SlimNode> = {}): SlimNode => ({
  name,
  uid: name,
  resourceVersion: "1",
  creationTimestamp: "",
  labels: {},
  taints: [],
  addresses: [],
  ...extra,
});

Deno.test("load balancer names follow the 64-byte hash rule exactly", async () => {
  assert.equal(await loadBalancerName("production", "shop", "web"), "k8s-production-shop-web");
  const long = await loadBalancerName(
    "production",
    "a-very-long-namespace-name",
    "and-an-even-longer-service-name-here",
  );
  assert.equal(long.length, 64);
  assert.equal(long.slice(0, 55), "k8s-production-a-very-long-namespace-name-and-an-even-l");
  assert.equal(
    long.slice(55),
    `-${await shortHash("production", "a-very-long-namespace-name", "and-an-even-longer-service-name-here")}`,
  );
  assert.match(await shortHash("a", "b"), /^[0-9a-f]{8}$/);
  assert.notEqual(await shortHash("a", "b"), await shortHash("ab", ""), "parts are separated by NUL");
});

Deno.test("member names are cleaned node names with a hash, valid for the API", async () => {
  const pattern = /^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/;
  for (
    const name of [
      "worker-1",
      "Worker_1.Example.COM",
      "a".repeat(60),
      "---",
      "ip-10-0-0-5.eu-central-1.compute.internal",
    ]
  ) {
    const member = await memberName(name, "10.0.0.5");
    assert.match(member, pattern, member);
    assert.ok(member.length <= 32);
  }
  assert.equal(await memberName("---", "10.0.0.5"), await shortHash("---", "10.0.0.5"), "empty prefix: just the hash");
  assert.ok((await memberName("Worker_1.Example", "10.0.0.5")).startsWith("worker-1-example-"));
});

Deno.test("ports: TCP with node ports forwarded; other protocols listed; missing node ports reported", () => {
  const service = {
    ports: [
      { protocol: "TCP", port: 80, nodePort: 30080 },
      { protocol: "UDP", port: 53, nodePort: 30053 },
      { protocol: "SCTP", port: 9, nodePort: 30009 },
      { protocol: "TCP", port: 443 },
    ],
  } as SlimService;
  assert.deepEqual(portPlan(service), {
    tcp: [{ port: 80, nodePort: 30080 }],
    unsupported: ["53/UDP", "9/SCTP"],
    withoutNodePort: [443],
  });
});

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

Deno.test("members: per family IPv6 first, each node's InternalIP before its ExternalIP", () => {
  const nodes = [
    node("n1", {
      addresses: [
        { type: "ExternalIP", address: "2001:db8::1" },
        { type: "InternalIP", address: "fd12::5" },
        { type: "InternalIP", address: "10.0.0.5" },
      ],
    }),
    node("n2", {
      addresses: [{ type: "ExternalIP", address: "2001:db8::2" }, { type: "InternalIP", address: "10.0.0.6" }],
    }),
    node("n3", { addresses: [{ type: "Hostname", address: "n3" }] }),
  ];
  assert.deepEqual(memberAddresses(nodes, serviceFamilies({ ipFamilies: [] } as unknown as SlimService)), [
    { node: "n1", address: "fd12::5" },
    { node: "n2", address: "2001:db8::2" },
    { node: "n1", address: "10.0.0.5" },
    { node: "n2", address: "10.0.0.6" },
  ]);
  assert.deepEqual(serviceFamilies({ ipFamilies: ["IPv4", "IPv6"] } as unknown as SlimService), [6, 4]);
  assert.deepEqual(serviceFamilies({ ipFamilies: ["IPv4"] } as unknown as SlimService), [4]);
});

Deno.test("members compare as multisets of name, address and port", () => {
  const a = [{ name: "m1", address: "fd12:0::5", port: 1 }, { name: "m2", address: "10.0.0.1", port: 1 }];
  assert.ok(
    !membersDiffer(a, [{ name: "m2", address: "10.0.0.1", port: 1 }, { name: "m1", address: "fd12::5", port: 1 }]),
  );
  assert.ok(
    membersDiffer(a, [{ name: "m1", address: "fd12::5", port: 2 }, { name: "m2", address: "10.0.0.1", port: 1 }]),
  );
});

const baseLb = {
  id: "lb",
  zone: "z",
  name: "n",
  network_id: "net",
  state: "running",
  labels: {},
  public_ipv4: null,
  public_ipv6: null,
  public_ipv6_addresses: [],
  address: null,
  configuration_generation: 1,
  is_configuration_applied: true,
  nodes: [],
  frontends: [],
  backends: [],
  active_operation: null,
  created_at: "",
} as unknown as LoadBalancer;
const hc = { type: "tcp" as const, path: "/", expected_status: "200-399", interval_seconds: 2, rise: 2, fall: 3 };

Deno.test("a new load balancer gets backend, members and frontend per port; a port change replaces them", () => {
  assert.deepEqual(listenerSteps(baseLb, [{ port: 80, nodePort: 30080 }], { healthCheck: hc, balance: "roundrobin" }), [
    { kind: "create-backend", name: "tcp-80", port: 80 },
    { kind: "replace-members", backendName: "tcp-80", port: 30080 },
    { kind: "create-frontend", name: "tcp-80", port: 80 },
  ]);
  const existing = {
    ...baseLb,
    frontends: [{ id: "f80", name: "tcp-80", port: 80, backend_id: "b80" }],
    backends: [{ id: "b80", name: "tcp-80", mode: "tcp", balance: "roundrobin", health_check: hc, members: [] }],
  } as unknown as LoadBalancer;
  assert.deepEqual(
    listenerSteps(existing, [{ port: 8080, nodePort: 30081 }], { healthCheck: hc, balance: "roundrobin" }),
    [
      { kind: "delete-frontend", frontendId: "f80", name: "tcp-80" },
      { kind: "create-backend", name: "tcp-8080", port: 8080 },
      { kind: "replace-members", backendName: "tcp-8080", port: 30081 },
      { kind: "create-frontend", name: "tcp-8080", port: 8080 },
      { kind: "delete-backend", backendId: "b80", name: "tcp-80" },
    ],
  );
  assert.deepEqual(
    listenerSteps(existing, [{ port: 80, nodePort: 30080 }], { healthCheck: hc, balance: "roundrobin" }),
    [{ kind: "replace-members", backendName: "tcp-80", port: 30080 }],
    "steady state: only the member comparison",
  );
  const tcpWithOtherPath = {
    ...existing,
    backends: [{ ...existing.backends[0], health_check: { ...hc, path: "/x" } }],
  };
  assert.equal(
    listenerSteps(tcpWithOtherPath as LoadBalancer, [{ port: 80, nodePort: 30080 }], {
      healthCheck: hc,
      balance: "roundrobin",
    })
      .length,
    1,
    "a tcp check's path does not matter: no endless updates",
  );
});

Deno.test("the ingress lists every IPv6 of a pair, then the IPv4", () => {
  assert.deepEqual(
    loadBalancerIngress({
      ...baseLb,
      public_ipv6: "2001:db8::1",
      public_ipv6_addresses: ["2001:db8::1", "2001:db8:1::1"],
      public_ipv4: "203.0.113.5",
    }),
    [{ ip: "2001:db8::1" }, { ip: "2001:db8:1::1" }, { ip: "203.0.113.5" }],
  );
});

Deno.test("TLS and redirect options go on frontends, and a changed mode or option remakes the listener", () => {
  const tls = { protocol: "http" as const, tlsPorts: [443], certificateIds: ["c1"], redirectHttpToHttps: true };
  const existing = {
    ...baseLb,
    frontends: [{
      id: "f443",
      name: "tcp-443",
      port: 443,
      backend_id: "b443",
      tls: false,
      certificate_ids: [],
      redirect_to_https: false,
    }],
    backends: [{ id: "b443", name: "tcp-443", mode: "tcp", balance: "roundrobin", health_check: hc, members: [] }],
  } as unknown as LoadBalancer;
  assert.deepEqual(
    listenerSteps(existing, [{ port: 443, nodePort: 30443 }], { healthCheck: hc, balance: "roundrobin", ...tls }),
    [
      { kind: "delete-frontend", frontendId: "f443", name: "tcp-443" },
      { kind: "delete-backend", backendId: "b443", name: "tcp-443" },
      { kind: "create-backend", name: "tcp-443", port: 443 },
      { kind: "replace-members", backendName: "tcp-443", port: 30443 },
      { kind: "create-frontend", name: "tcp-443", port: 443 },
    ],
  );
  const http = { ...existing, backends: [{ ...existing.backends[0], mode: "http" }] } as unknown as LoadBalancer;
  assert.deepEqual(
    listenerSteps(http, [{ port: 443, nodePort: 30443 }], { healthCheck: hc, balance: "roundrobin", ...tls }).map((s) =>
      s.kind
    ),
    ["replace-members", "delete-frontend", "create-frontend"],
    "only the frontend is remade when its TLS options change",
  );
});
