import assert from "node:assert/strict";
import type { SlimNode } from "../../../../lib/kube/slim.ts";
import { serviceNetworkMembers } from "../../../../lib/provider/service/load_balancer_network.ts";
import { asLoadBalancer, slimService } from "../../../support/fakes/slim_service.ts";
import {
  chooseZone,
  FINALIZER,
  needsCleanup,
  portPlan,
  serviceFamilies,
  serviceIntent,
  wantsLoadBalancer,
} from "../../../../lib/provider/service/service_plan.ts";

const OPTIONS = { clusterName: "prod", defaults: { highAvailability: "auto" as const } };

function node(name: string, extra: Partial<SlimNode> = {}): SlimNode {
  return {
    name,
    uid: name,
    resourceVersion: "1",
    providerID: `ankracloud://de-fsn1/${name}`,
    labels: { "topology.kubernetes.io/zone": "de-fsn1" },
    taints: [],
    addresses: [{ type: "InternalIP", address: `10.0.0.${name.length + 10}` }],
    ...extra,
  };
}

const noticeOf = (intent: ReturnType<typeof serviceIntent>, topic: string) =>
  intent.notices.find((n) => n.topic === topic)?.message;

Deno.test("ports: TCP with node ports forwarded; other protocols listed; missing node ports reported", () => {
  const plan = portPlan(slimService({
    ports: [
      { protocol: "TCP", port: 80, nodePort: 30080 },
      { protocol: "UDP", port: 53, nodePort: 30053 },
      { protocol: "SCTP", port: 9, nodePort: 30009 },
      { protocol: "TCP", port: 443 },
    ],
  }));
  assert.deepEqual(plan, {
    tcp: [{ port: 80, nodePort: 30080 }],
    unsupported: ["53/UDP", "9/SCTP"],
    withoutNodePort: [443],
  });
});

Deno.test("IP families: IPv6 first, both when none are set", () => {
  assert.deepEqual(serviceFamilies(slimService({ ipFamilies: [] })), [6, 4]);
  assert.deepEqual(serviceFamilies(slimService({ ipFamilies: ["IPv4", "IPv6"] })), [6, 4]);
  assert.deepEqual(serviceFamilies(slimService({ ipFamilies: ["IPv4"] })), [4]);
});

Deno.test("which Services are served, and when the load balancer must go", () => {
  assert.ok(wantsLoadBalancer(slimService()));
  assert.ok(!wantsLoadBalancer(slimService({ loadBalancerClass: "other.io/lb" })));
  assert.ok(wantsLoadBalancer(slimService({ loadBalancerClass: "ankra.cloud/lb" }), "ankra.cloud/lb"));
  assert.ok(!needsCleanup(slimService()));
  assert.ok(needsCleanup(slimService({ finalizers: [FINALIZER], type: "ClusterIP" })));
  assert.ok(needsCleanup(slimService({ finalizers: [FINALIZER], deletionTimestamp: "2026-01-01T00:00:00Z" })));
  assert.ok(!needsCleanup(slimService({ type: "ClusterIP" })), "without the finalizer there is nothing to clean up");
});

Deno.test("only nodes matched to Ankra servers are members: a foreign or unmatched node never is", () => {
  const nodes = [
    node("ankra-1"),
    node("aws-1", {
      providerID: "aws:///eu-central-1a/i-0abc",
      addresses: [{ type: "InternalIP", address: "10.0.0.99" }],
    }),
    node("joining", {
      providerID: undefined,
      taints: [{ key: "node.cloudprovider.kubernetes.io/uninitialized", effect: "NoSchedule", value: "true" }],
    }),
    node("plain", { providerID: undefined }),
  ];
  const intent = serviceIntent(slimService(), nodes, OPTIONS);
  assert.deepEqual(intent.nodes.map((n) => n.name), ["ankra-1"]);
  assert.deepEqual(
    asLoadBalancer(intent).members.map((m) => m.node),
    ["ankra-1"],
    "10.0.0.99 of the AWS node is not a member",
  );
  assert.equal(intent.pendingNodes, 1, "the joining node will be matched soon");
  assert.equal(intent.noNodes, false);
});

Deno.test("one unmatched node does not block the network choice: only matched nodes decide it", () => {
  const leg = (server_id: string, network_id: string, address: string) => ({
    server_id,
    network_id,
    address,
    address6: `fd64:1:0:${network_id.slice(-1)}::5`,
  });
  const networks = [
    { id: "net-1", name: "one", cidr: "10.0.0.0/16", members: [leg("ankra-1", "net-1", "10.0.0.5")] },
    {
      id: "net-2",
      name: "two",
      cidr: "10.1.0.0/16",
      members: [leg("ankra-2", "net-2", "10.1.0.6"), leg("ankra-3", "net-2", "10.1.0.7")],
    },
  ];
  networks[0].members.push(leg("ankra-2", "net-1", "10.0.0.6"));
  const nodes = [
    node("ankra-1", { addresses: [{ type: "InternalIP", address: "10.0.0.5" }] }),
    node("ankra-2", { addresses: [{ type: "InternalIP", address: "10.1.0.6" }] }),
    node("orphan", { providerID: undefined, addresses: [{ type: "InternalIP", address: "192.168.1.5" }] }),
    node("foreign", { providerID: "aws:///x/i-1", addresses: [{ type: "InternalIP", address: "172.16.0.5" }] }),
  ];
  const intent = serviceIntent(slimService(), nodes, OPTIONS);
  const chosen = serviceNetworkMembers(intent, [4], { networks });
  assert.ok(chosen.ok && chosen.networkId === "net-1");
  const split = serviceIntent(slimService(), [...nodes, node("ankra-3")], OPTIONS);
  const refused = serviceNetworkMembers(split, [4], { networks });
  assert.ok(!refused.ok && /do not share one Ankra private network/.test(refused.problem));
  const named = serviceNetworkMembers(split, [4], { networks, defaultNetworkId: "net-2" });
  assert.ok(named.ok && named.networkId === "net-2", "the default wins");
  assert.deepEqual(named.leftOut?.nodes.map((n) => n.node), ["ankra-1"], "the node off it is named, and left out");
  assert.deepEqual(named.members.map((m) => m.node), ["ankra-2", "ankra-3"]);
});

Deno.test("a Service with no TCP port creates nothing, and says so once with the ports it cannot forward", () => {
  for (const protocol of ["UDP", "SCTP"]) {
    const intent = serviceIntent(
      slimService({ ports: [{ protocol, port: 53, nodePort: 30053 }] }),
      [node("n1")],
      OPTIONS,
    );
    assert.ok(intent.waitFor, `${protocol}-only: nothing may be created`);
    assert.equal(intent.waitFor.reported, true, "the UnsupportedPort Warning is the report");
    assert.match(noticeOf(intent, "ports")!, new RegExp(`53/${protocol}.*no TCP port, so no load balancer is made`));
  }
  const mixed = serviceIntent(
    slimService({
      ports: [{ protocol: "TCP", port: 80, nodePort: 30080 }, { protocol: "UDP", port: 53, nodePort: 30053 }],
    }),
    [node("n1")],
    OPTIONS,
  );
  assert.equal(mixed.waitFor, undefined);
  assert.match(noticeOf(mixed, "ports")!, /not forwarding 53\/UDP$/);
});

Deno.test("invalid annotations and missing node ports wait for the user; the first with its own Warning", () => {
  const invalid = serviceIntent(
    slimService({ annotations: { "load-balancer.ankra.cloud/health-check-type": "udp" } }),
    [node("n1")],
    OPTIONS,
  );
  assert.equal(invalid.waitFor?.reported, true);
  assert.match(noticeOf(invalid, "annotations")!, /health-check-type must be tcp, http or none, not "udp"/);
  const noNodePort = serviceIntent(slimService({ ports: [{ protocol: "TCP", port: 80 }] }), [node("n1")], OPTIONS);
  assert.equal(noNodePort.waitFor?.reported, false, "reported as SyncLoadBalancerFailed by the controller");
  assert.match(noNodePort.waitFor!.message, /allocateLoadBalancerNodePorts must not be false/);
});

Deno.test("the zone: annotation, default, else the zone most nodes are in", () => {
  const nodes = [
    node("a", { labels: { "topology.kubernetes.io/zone": "de-nbg1" } }),
    node("b", { labels: { "topology.kubernetes.io/zone": "de-fsn1" } }),
    node("c", { labels: {}, providerID: "ankracloud://de-fsn1/c" }),
  ];
  const intent = serviceIntent(slimService(), nodes, OPTIONS);
  assert.deepEqual(chooseZone(intent), { ok: true, value: "de-fsn1" }, "two of three nodes are in de-fsn1");
  assert.deepEqual(chooseZone(intent, "de-hel1"), { ok: true, value: "de-hel1" });
  const annotated = serviceIntent(
    slimService({ annotations: { "load-balancer.ankra.cloud/zone": "de-ham1" } }),
    nodes,
    OPTIONS,
  );
  assert.deepEqual(chooseZone(annotated, "de-hel1"), { ok: true, value: "de-ham1" });
  const none = chooseZone(serviceIntent(slimService(), [], OPTIONS));
  assert.ok(!none.ok && /set the load-balancer.ankra.cloud\/zone annotation or ANKRA_CLOUD_ZONE/.test(none.problem));
});

Deno.test("source ranges are named as not enforced; externalTrafficPolicy: Local is honoured, not refused", () => {
  const intent = serviceIntent(
    slimService({ loadBalancerSourceRanges: ["10.0.0.0/8"], externalTrafficPolicy: "Local" }),
    [node("n1")],
    OPTIONS,
  );
  assert.match(noticeOf(intent, "settings")!, /loadBalancerSourceRanges \(10.0.0.0\/8\) is not enforced/);
  assert.doesNotMatch(noticeOf(intent, "settings")!, /Local/);
  const local = serviceIntent(slimService({ externalTrafficPolicy: "Local" }), [node("n1")], OPTIONS);
  assert.equal(noticeOf(local, "settings"), undefined);
  assert.equal(noticeOf(serviceIntent(slimService(), [node("n1")], OPTIONS), "settings"), undefined);
});

Deno.test("k3s servers started without --disable=servicelb are found in every spelling of the flag", async () => {
  const { k3sServersRunningServiceLb } = await import("../../../../lib/provider/k3s.ts");
  const withArgs = (name: string, args: string[] | string) => ({
    name,
    k3sNodeArgs: typeof args === "string" ? args : JSON.stringify(args),
  });
  assert.deepEqual(
    k3sServersRunningServiceLb([
      withArgs("s1", ["server", "--disable-cloud-controller"]),
      withArgs("s2", ["server", "--disable", "servicelb"]),
      withArgs("s3", ["server", "--disable=traefik,servicelb"]),
      withArgs("s4", ["server", "--no-deploy=servicelb"]),
      withArgs("a1", ["agent", "--kubelet-arg", "cloud-provider=external"]),
      withArgs("broken", "{not json"),
      { name: "plain", k3sNodeArgs: undefined },
    ]),
    ["s1"],
  );
});

Deno.test("ANKRA_CLOUD_LOAD_BALANCER_IPV4 is the ipv4 of a Service that does not say; the annotation wins either way", () => {
  const withDefault = { ...OPTIONS, defaults: { ...OPTIONS.defaults, ipv4: true } };
  assert.equal(serviceIntent(slimService(), [], OPTIONS).settings.ipv4, false, "the Go controller's default");
  assert.equal(serviceIntent(slimService(), [], withDefault).settings.ipv4, true);
  const no = slimService({ annotations: { "load-balancer.ankra.cloud/ipv4": "false" } });
  assert.equal(serviceIntent(no, [], withDefault).settings.ipv4, false);
  const yes = slimService({ annotations: { "load-balancer.ankra.cloud/ipv4": "true" } });
  assert.equal(serviceIntent(yes, [], OPTIONS).settings.ipv4, true);
});
