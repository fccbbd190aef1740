/**
 * The Service rules that went wrong before, end to end (real kube-apiserver, simulator, service controller
 * in-process): only nodes matched to Ankra servers count; a Service without a TCP port gets nothing; the framework's
 * events come as the framework words and pairs them; past 256 member addresses each Service keeps a stable,
 * dual-stack subset.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane.ts";
import { kubeletNode, kubeOk } from "../support/kube_http.ts";
import { eventually } from "../support/node_controllers.ts";
import { startServiceController } from "../support/service_controller.ts";
import { moreReads } from "../support/cloud_passes.ts";
import {
  createNodes,
  createService,
  deleteNodes,
  deleteService,
  eventsFor,
  getService,
  ingressIps,
  NS,
  serviceExists,
  WRITES,
} from "../support/service_fixtures.ts";
import { testSeed } from "../support/simulator.ts";

/** A node that is not an Ankra server's: no providerID (never initialised) or another provider's. */
async function createOtherNode(name: string, providerID: string | undefined, address: string): Promise<void> {
  const node = kubeletNode(name, {
    providerID,
    addresses: [{ type: "InternalIP", address }, { type: "Hostname", address: name }],
  }) as { spec: { taints: unknown[] } };
  node.spec.taints = [];
  await kubeOk(testControlPlane(), "POST", "/api/v1/nodes", { body: node });
}

Deno.test("a node with no server or another provider's neither blocks the network choice nor becomes a member", async () => {
  await using env = await startServiceController({ networkId: null });
  const sim = env.cloud.simulator.sim;
  const ankra = await createNodes(2);
  const plain = uniqueName("plain");
  const aws = uniqueName("aws");
  await createOtherNode(plain, undefined, "192.168.7.7");
  // Its InternalIP even lies in the Ankra network: it must still not be a member.
  await createOtherNode(aws, "aws:///eu-central-1a/i-0123456789", "10.0.0.250");
  const name = uniqueName("mixed");
  await createService(name);
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000, "an address");
    const lb = [...sim.loadBalancers.items.values()][0];
    assert.equal(lb.network_id, "net-1", "the network all Ankra nodes share");
    const addresses = lb.backends[0].members.map((m) => m.address).sort();
    assert.equal(addresses.length, 2, `members: ${addresses}`);
    assert.ok(!addresses.includes("10.0.0.250"), "the AWS node is not a member");
    assert.ok(!(await eventsFor(name)).some((e) => e.reason === "SyncLoadBalancerFailed"));
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    await deleteNodes([...ankra, plain, aws]);
  }
});

Deno.test("a UDP-only or SCTP-only Service gets no load balancer, no status, and its Warning, until it has a TCP port", async () => {
  await using env = await startServiceController();
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const udp = uniqueName("udp");
  const sctp = uniqueName("sctp");
  await createService(udp, { ports: [{ port: 53, protocol: "UDP" }] });
  await createService(sctp, { ports: [{ port: 9, protocol: "SCTP" }] });
  try {
    for (const [name, port] of [[udp, "53/UDP"], [sctp, "9/SCTP"]]) {
      await eventually(async () => (await eventsFor(name)).some((e) => e.reason === "UnsupportedPort"));
      const warning = (await eventsFor(name)).find((e) => e.reason === "UnsupportedPort")!;
      assert.equal(warning.type, "Warning");
      assert.match(warning.message, new RegExp(`not forwarding ${port}; the Service has no TCP port`));
    }
    assert.deepEqual(WRITES.map((op) => sim.count(op)), WRITES.map(() => 0), "nothing created, nothing billed");
    for (const name of [udp, sctp]) {
      const service = await getService(name);
      assert.deepEqual(ingressIps(service), [], "no status");
      const events = await eventsFor(name);
      assert.ok(!events.some((e) => e.reason === "EnsuredLoadBalancer"), "never reported as ensured");
    }
    // A TCP port makes each Service one more pass; that pass runs only after every earlier one has ended, so the
    // first cloud write of each comes after the change: the passes without a TCP port wrote nothing, late or not.
    const changedAt = sim.log.length;
    for (const name of [udp, sctp]) {
      await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${name}`, {
        body: { spec: { ports: [{ name: "web", port: 80, protocol: "TCP" }] } },
      });
    }
    await eventually(
      async () => ingressIps(await getService(udp)).length > 0 && ingressIps(await getService(sctp)).length > 0,
      15_000,
      "both served once they have a TCP port",
    );
    const firstWrite = sim.log.findIndex((e) => (WRITES as readonly string[]).includes(e.operation));
    assert.ok(firstWrite >= changedAt, `a cloud write (${sim.log[firstWrite]?.operation}) before the TCP port`);
    assert.equal(sim.count("create_load_balancer"), 2);
  } finally {
    await deleteService(udp);
    await deleteService(sctp);
    await eventually(async () => !(await serviceExists(udp)) && !(await serviceExists(sctp)), 15_000);
    await deleteNodes(nodes);
  }
});

Deno.test("every EnsuredLoadBalancer follows its EnsuringLoadBalancer, and failures carry the framework's wording", async () => {
  await using _env = await startServiceController({
    seed: testSeed({ settings: { load_balancer_create_delay_ms: 1500 } }),
  });
  const nodes = await createNodes(1);
  const good = uniqueName("paired");
  const bad = uniqueName("noport");
  await createService(good);
  try {
    await eventually(async () => ingressIps(await getService(good)).length > 0, 15_000);
    // A change after the address: one more Ensuring/Ensured pair.
    await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${good}`, {
      body: { metadata: { annotations: { "load-balancer.ankra.cloud/health-check-interval": "7" } } },
    });
    await eventually(async () =>
      ((await eventsFor(good)).find((e) => e.reason === "EnsuredLoadBalancer")?.count ?? 0) >= 2
    );
    const events = await eventsFor(good);
    const count = (reason: string) => events.filter((e) => e.reason === reason).reduce((n, e) => n + e.count, 0);
    assert.equal(count("EnsuringLoadBalancer"), count("EnsuredLoadBalancer"), "paired");
    assert.equal(count("EnsuredLoadBalancer"), 2);
    // Without NodePorts the framework's message: "Error syncing load balancer: failed to ensure load balancer: …".
    await kubeOk(testControlPlane(), "POST", `/api/v1/namespaces/${NS}/services`, {
      body: {
        metadata: { name: bad },
        spec: { type: "LoadBalancer", allocateLoadBalancerNodePorts: false, ports: [{ name: "p", port: 80 }] },
      },
    });
    await eventually(async () => (await eventsFor(bad)).some((e) => e.reason === "SyncLoadBalancerFailed"));
    const failed = (await eventsFor(bad)).find((e) => e.reason === "SyncLoadBalancerFailed")!;
    assert.match(
      failed.message,
      /^Error syncing load balancer: failed to ensure load balancer: port 80 has no NodePort/,
    );
    assert.equal(failed.source.component, "service-controller");
  } finally {
    await deleteService(good);
    await deleteService(bad);
    await eventually(async () => !(await serviceExists(good)) && !(await serviceExists(bad)), 15_000);
    await deleteNodes(nodes);
  }
});

Deno.test("past 256 addresses each dual-stack Service keeps both families on its own stable choice of nodes", async () => {
  await using env = await startServiceController();
  const sim = env.cloud.simulator.sim;
  // 150 dual-stack nodes: 300 candidate addresses per backend.
  const nodes = await createNodes(150);
  const first = uniqueName("many");
  const second = uniqueName("many");
  const dual = { ipFamilyPolicy: "RequireDualStack", ipFamilies: ["IPv4", "IPv6"] };
  await createService(first, dual);
  await createService(second, dual);
  try {
    await eventually(
      async () => ingressIps(await getService(first)).length > 0 && ingressIps(await getService(second)).length > 0,
      20_000,
    );
    const byService = (name: string) =>
      [...sim.loadBalancers.items.values()].find((lb) => lb.labels["ccm.ankra.cloud/service"] === `${NS}/${name}`)!;
    const members = (name: string) => byService(name).backends[0].members;
    for (const name of [first, second]) {
      const list = members(name);
      assert.equal(list.length, 256, "the API's limit, no more");
      assert.equal(list.filter((m) => m.address.includes(":")).length, 128, "IPv6 kept");
      assert.equal(list.filter((m) => !m.address.includes(":")).length, 128, "IPv4 kept");
    }
    const nodesOf = (name: string) => new Set(members(name).map((m) => m.name.replace(/-[0-9a-f]{8}$/, "")));
    const shared = [...nodesOf(first)].filter((n) => nodesOf(second).has(n)).length;
    assert.ok(shared < 128, `the two Services share ${shared} of 128 nodes: each has its own choice`);
    assert.ok(
      (await eventsFor(first)).some((e) =>
        e.reason === "TooManyMembers" && /256 of 300 node addresses/.test(e.message)
      ),
    );
    // One more node: at most a member or two change (per family), not the whole list.
    const before = new Set(members(first).map((m) => m.address));
    const replaces = sim.count("replace_load_balancer_members");
    const extra = await createNodes(1);
    nodes.push(...extra);
    // Two more drift reads of its load balancer: a whole pass with the new node has run.
    await moreReads(sim, { operation: "get_load_balancer", pathIncludes: byService(first).id }, { count: 2 });
    const after = members(first).map((m) => m.address);
    assert.ok(after.filter((a) => !before.has(a)).length <= 2, "minimal churn");
    assert.ok(sim.count("replace_load_balancer_members") - replaces <= 4, "at most one replace per backend");
  } finally {
    await deleteService(first);
    await deleteService(second);
    await eventually(async () => !(await serviceExists(first)) && !(await serviceExists(second)), 20_000);
    await deleteNodes(nodes);
  }
});

Deno.test("k3s ServiceLB still running on a k3s server gets a Warning on the Service naming the fix", async () => {
  await using _env = await startServiceController();
  const nodes = await createNodes(1);
  const server = uniqueName("k3s-server");
  const node = kubeletNode(server, {
    providerID: `ankracloud://de-fsn1/srv-${server}`,
    addresses: [{ type: "InternalIP", address: "10.0.3.3" }],
  }) as { metadata: { annotations: Record<string, string> }; spec: { taints: unknown[] } };
  node.metadata.annotations["k3s.io/node-args"] = JSON.stringify(["server", "--disable-cloud-controller"]);
  node.spec.taints = [];
  await kubeOk(testControlPlane(), "POST", "/api/v1/nodes", { body: node });
  const name = uniqueName("k3s-svc");
  await createService(name);
  try {
    await eventually(async () => (await eventsFor(name)).some((e) => e.reason === "K3sServiceLBActive"), 10_000);
    const warning = (await eventsFor(name)).find((e) => e.reason === "K3sServiceLBActive")!;
    assert.equal(warning.type, "Warning");
    assert.match(warning.message, new RegExp(`k3s server ${server} runs without --disable=servicelb`));
    assert.match(warning.message, /restart every k3s server with --disable=servicelb/);
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    await deleteNodes([...nodes, server]);
  }
});

Deno.test("a failure after the create (a backend refused) makes no second load balancer: the next pass finishes it", async () => {
  await using env = await startServiceController();
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  sim.faults.add({ operation: "create_load_balancer_backend", status: 503, times: 1 });
  const name = uniqueName("half");
  await createService(name);
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 20_000, "an address after a retry");
    assert.equal(sim.count("create_load_balancer"), 1, "created once");
    assert.equal(sim.loadBalancers.items.size, 1);
    const lb = [...sim.loadBalancers.items.values()][0];
    assert.deepEqual(lb.frontends.map((f) => f.name), ["tcp-80"], "the listener was finished by the next pass");
    const failed = (await eventsFor(name)).find((e) => e.reason === "SyncLoadBalancerFailed");
    assert.match(
      failed!.message,
      /^Error syncing load balancer: failed to ensure load balancer: create_load_balancer_backend/,
    );
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    await deleteNodes(nodes);
  }
});
