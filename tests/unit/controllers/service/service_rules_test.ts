/**
 * The Service rules that went wrong before, over fakes (fast tier): only nodes matched to Ankra servers count; a
 * Service without a TCP port gets nothing; past 256 member addresses each Service keeps a stable, dual-stack subset;
 * a k3s server still running ServiceLB is named; a failure after the create makes no second load balancer; a node
 * labelled node.ankra.cloud/managed=false is never a member.
 *
 * End to end, against a real API server: the framework's event pairing and wording
 * (tests/integration/service_rules_test.ts) and the member rule's worlds (member_address_worlds_test.ts).
 */
import assert from "node:assert/strict";
import { moreReads, WRITES } from "../../../support/cloud/cloud_passes.ts";
import { eventually } from "../../../support/wait/eventually.ts";
import { fakeNode } from "../../../support/fakes/fake_cluster.ts";
import { startFakeServiceController } from "../../../support/fakes/fake_service_controller.ts";

Deno.test("a node with no server or another provider's neither blocks the network choice nor becomes a member", async () => {
  await using env = await startFakeServiceController({ networkId: null });
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addNode("b", "10.0.0.6");
  env.nodes.put(fakeNode("plain", { addresses: [{ type: "InternalIP", address: "192.168.7.7" }] }));
  // Its InternalIP even lies in the Ankra network: it must still not be a member.
  env.nodes.put(fakeNode("aws", {
    providerID: "aws:///eu-central-1a/i-0123456789",
    addresses: [{ type: "InternalIP", address: "10.0.0.250" }],
  }));
  env.addService("mixed");
  await env.served("mixed");
  const [lb] = [...sim.loadBalancers.items.values()];
  assert.equal(lb.network_id, "net-1", "the network all Ankra nodes share");
  assert.deepEqual(lb.backends[0].members.map((m) => m.address).sort(), ["10.0.0.5", "10.0.0.6"]);
  assert.ok(!env.eventsOf("mixed").some((e) => e.reason === "SyncLoadBalancerFailed"));
});

Deno.test("a UDP-only or SCTP-only Service gets no load balancer, no status, and its Warning, until it has a TCP port", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addService("udp", { ports: [{ protocol: "UDP", port: 53, nodePort: 30053 }] });
  env.addService("sctp", { ports: [{ protocol: "SCTP", port: 9, nodePort: 30009 }] });
  for (const [name, port] of [["udp", "53/UDP"], ["sctp", "9/SCTP"]]) {
    const warning = await eventually(() => env.eventsOf(name).find((e) => e.reason === "UnsupportedPort"), {
      what: `${name}'s UnsupportedPort`,
    });
    assert.equal(warning.type, "Warning");
    assert.match(warning.message, new RegExp(`not forwarding ${port}; the Service has no TCP port`));
  }
  assert.deepEqual(WRITES.map((op) => sim.count(op)), WRITES.map(() => 0), "nothing created, nothing billed");
  for (const name of ["udp", "sctp"]) {
    assert.deepEqual(env.services.store.get(`default/${name}`)!.ingress, [], "no status");
    assert.ok(!env.eventsOf(name).some((e) => e.reason === "EnsuredLoadBalancer"), "never reported as ensured");
  }
  const changedAt = sim.log.length;
  for (const name of ["udp", "sctp"]) {
    env.services.update(`default/${name}`, (copy) => {
      copy.ports = [{ name: "web", protocol: "TCP", port: 80, nodePort: 30080 }];
    });
  }
  await env.served("udp");
  await env.served("sctp");
  const firstWrite = sim.log.findIndex((e) => (WRITES as readonly string[]).includes(e.operation));
  assert.ok(firstWrite >= changedAt, `a cloud write (${sim.log[firstWrite]?.operation}) before the TCP port`);
  assert.equal(sim.count("create_load_balancer"), 2);
});

Deno.test("past 256 addresses each dual-stack Service keeps both families on its own stable choice of nodes", async () => {
  await using env = await startFakeServiceController({ driftCheckMs: 500 });
  const { sim } = env.cloud.simulator;
  // 150 dual-stack servers: 300 candidate addresses per backend. The kubelets report only their IPv4 (as with an IPv4
  // --node-ip): members and the TooManyMembers count come from the servers' addresses on the network.
  for (let i = 0; i < 150; i++) env.addNode(`many-${i}`, `10.0.${Math.floor(i / 200)}.${(i % 200) + 10}`);
  const dual = { ipFamilies: ["IPv4", "IPv6"] };
  env.addService("first", dual);
  env.addService("second", dual);
  await env.served("first");
  await env.served("second");
  const byService = (name: string) =>
    [...sim.loadBalancers.items.values()].find((lb) => lb.labels["ccm.ankra.cloud/service"] === `default/${name}`)!;
  const members = (name: string) => byService(name).backends[0].members;
  for (const name of ["first", "second"]) {
    const list = members(name);
    assert.equal(list.length, 256, "the API's limit, no more");
    assert.equal(list.filter((m) => m.address.includes(":")).length, 128, "IPv6 kept");
    assert.equal(list.filter((m) => !m.address.includes(":")).length, 128, "IPv4 kept");
  }
  const nodesOf = (name: string) => new Set(members(name).map((m) => m.name.replace(/-[0-9a-f]{8}$/, "")));
  const shared = [...nodesOf("first")].filter((n) => nodesOf("second").has(n)).length;
  assert.ok(shared < 128, `the two Services share ${shared} of 128 nodes: each has its own choice`);
  await eventually(
    () =>
      env.eventsOf("first").some((e) => e.reason === "TooManyMembers" && /256 of 300 node addresses/.test(e.message)),
    { what: "the TooManyMembers Warning" },
  );
  // One more node: at most a member or two change (per family), not the whole list.
  const before = new Set(members("first").map((m) => m.address));
  const replaces = sim.count("replace_load_balancer_members");
  env.addNode("many-150", "10.0.0.250");
  // Two more drift reads of its load balancer: a whole pass with the new node has run.
  await moreReads(sim, { operation: "get_load_balancer", pathIncludes: byService("first").id }, { count: 2 });
  const after = members("first").map((m) => m.address);
  assert.ok(after.filter((a) => !before.has(a)).length <= 2, "minimal churn");
  assert.ok(sim.count("replace_load_balancer_members") - replaces <= 4, "at most one replace per backend");
});

Deno.test("k3s ServiceLB still running on a k3s server gets a Warning on the Service naming the fix", async () => {
  await using env = await startFakeServiceController();
  env.addNode("a", "10.0.0.5");
  env.nodes.put(fakeNode("k3s-server", {
    providerID: "ankracloud://de-fsn1/srv-k3s-server",
    addresses: [{ type: "InternalIP", address: "10.0.3.3" }],
    k3sNodeArgs: JSON.stringify(["server", "--disable-cloud-controller"]),
  }));
  env.addService("k3s-svc");
  const warning = await eventually(() => env.eventsOf("k3s-svc").find((e) => e.reason === "K3sServiceLBActive"), {
    what: "the K3sServiceLBActive Warning",
  });
  assert.equal(warning.type, "Warning");
  assert.match(warning.message, /k3s server k3s-server runs without --disable=servicelb/);
  assert.match(warning.message, /restart every k3s server with --disable=servicelb/);
});

Deno.test("a failure after the create (a backend refused) makes no second load balancer: the next pass finishes it", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  sim.faults.add({ operation: "create_load_balancer_backend", status: 503, times: 1 });
  env.addService("half");
  await env.served("half");
  assert.equal(sim.count("create_load_balancer"), 1, "created once");
  assert.equal(sim.loadBalancers.items.size, 1);
  const [lb] = [...sim.loadBalancers.items.values()];
  assert.deepEqual(lb.frontends.map((f) => f.name), ["tcp-80"], "the listener was finished by the next pass");
  const failed = env.eventsOf("half").find((e) => e.reason === "SyncLoadBalancerFailed");
  assert.match(
    failed!.message,
    /^Error syncing load balancer: failed to ensure load balancer: create_load_balancer_backend/,
  );
});

Deno.test("a node labelled node.ankra.cloud/managed=false is never a load balancer member; the label can come and go", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addNode("b", "10.0.0.6");
  env.addNode("outside", "10.0.3.10");
  const setLabel = (value: string | null) =>
    env.nodes.update("outside", (n) => {
      if (value === null) delete n.labels["node.ankra.cloud/managed"];
      else n.labels["node.ankra.cloud/managed"] = value;
    });
  setLabel("false");
  env.addService("hybrid");
  await env.served("hybrid");
  const [lb] = [...sim.loadBalancers.items.values()];
  const addresses = () => lb.backends[0].members.map((m) => m.address).sort();
  assert.deepEqual(addresses(), ["10.0.0.5", "10.0.0.6"], "not the unmanaged node");
  setLabel(null);
  await eventually(() => addresses().includes("10.0.3.10"), { what: "a member once the label is gone" });
  setLabel("False");
  await eventually(() => !addresses().includes("10.0.3.10") && addresses().length === 2, { what: "gone again" });
  assert.deepEqual(
    env.eventsOf("hybrid").filter((e) => e.type === "Warning").map((e) => e.reason),
    [],
    "no Warning about the node",
  );
});
