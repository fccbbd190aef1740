/**
 * A Service's load balancer end to end, from its creation to its deletion: the real kube-apiserver, the Ankra Cloud
 * simulator, the service controller in-process. Members follow the nodes, a Service deleted while its load balancer
 * is creating leaves nothing, and an existing or half-made load balancer is adopted instead of doubled. A port change
 * and the quota holding Services back run over fakes in tests/unit/controllers/service/service_controller_test.ts.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { kubeOk } from "../support/http/kube_http.ts";
import { eventually } from "../support/wait/eventually.ts";
import {
  createNodes,
  createService,
  deleteNodes,
  deleteService,
  eventsFor,
  FINALIZER,
  getService,
  ingressIps,
  NS,
  serviceExists,
} from "../support/controller/service_fixtures.ts";
import { startServiceController } from "../support/controller/service_controller.ts";
import { moreReads, WRITES } from "../support/cloud/cloud_passes.ts";
import { testSeed } from "../support/cloud/simulator.ts";
import { loadBalancerName } from "../../lib/provider/service/load_balancer_names.ts";

Deno.test("a LoadBalancer Service gets a labelled load balancer, tcp listeners, members and its addresses", async () => {
  await using env = await startServiceController({ driftCheckMs: 500 }); // steady-state passes come quickly
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(2);
  const name = uniqueName("web");
  const started = performance.now();
  await createService(name, { ports: [{ port: 80 }, { port: 443 }, { port: 53, protocol: "UDP" }] });
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000, "an address");
    const seconds = (performance.now() - started) / 1000;
    const service = await getService(name);
    assert.ok(service.metadata!.finalizers!.includes(FINALIZER));
    const lbs = [...sim.loadBalancers.items.values()];
    assert.equal(lbs.length, 1);
    const lb = lbs[0];
    assert.equal(lb.name, loadBalancerName("test", NS, name));
    assert.deepEqual(lb.labels, {
      "ccm.ankra.cloud/service": `${NS}/${name}`,
      "ccm.ankra.cloud/cluster": "test",
      "ccm.ankra.cloud/cluster-uid": env.clusterUid,
    });
    assert.equal(lb.network_id, "net-1");
    assert.equal(lb.wants_ipv4, false, "public_ipv4 is sent as false without the annotation");
    assert.deepEqual(ingressIps(service), lb.public_ipv6_addresses, "both IPv6 addresses of the pair, no IPv4");
    assert.deepEqual(lb.frontends.map((f) => [f.name, f.port]).sort(), [["tcp-443", 443], ["tcp-80", 80]]);
    const ports = service.spec!.ports!;
    for (const backend of lb.backends) {
      const nodePort = ports.find((p) => `tcp-${p.port}` === backend.name)!.nodePort;
      assert.equal(backend.members.length, 2, "one member per node (the cluster is IPv4-only)");
      assert.ok(backend.members.every((m) => m.port === nodePort && m.address.startsWith("10.0.0.")));
    }
    const events = await eventsFor(name);
    const unsupported = events.filter((e) => e.reason === "UnsupportedPort");
    assert.equal(unsupported.length, 1);
    assert.match(unsupported[0].message, /TCP only; not forwarding 53\/UDP/);
    assert.equal(unsupported[0].source.component, "ankra-cloud-ccm");
    assert.ok(events.some((e) => e.reason === "EnsuredLoadBalancer" && e.source.component === "service-controller"));
    assert.ok(seconds < 8, `address after ${seconds.toFixed(1)} s (load balancer creation takes 0.3 s here)`);
    // Steady state: no writes, only the periodic drift check (two of its reads: one whole pass after the address).
    const before = WRITES.map((op) => sim.count(op));
    await moreReads(sim, { operation: "get_load_balancer", pathIncludes: lb.id }, { count: 2 });
    assert.deepEqual(WRITES.map((op) => sim.count(op)), before, "steady state makes no cloud writes");
    assert.equal(
      sim.count("list_load_balancers"),
      1,
      "one list of the account when the term began; no lookup per Service before its create",
    );
    assert.equal((await eventsFor(name)).filter((e) => e.reason === "UnsupportedPort")[0].count, 1, "not repeated");
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000, "service gone");
    assert.equal(sim.loadBalancers.items.size, 0, "the load balancer went with the Service");
    await deleteNodes(nodes);
  }
});

Deno.test("node changes update members within 2 s, and a burst of nodes is one replace per backend", async () => {
  await using env = await startServiceController();
  const sim = env.cloud.simulator.sim;
  const first = await createNodes(1);
  const name = uniqueName("members");
  await createService(name);
  const added: string[] = [];
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000);
    const lb = [...sim.loadBalancers.items.values()][0];
    const replacesBefore = sim.count("replace_load_balancer_members");
    const burstStart = performance.now();
    added.push(...await createNodes(10));
    await eventually(() => lb.backends[0].members.length === 11, 5_000, "11 members");
    const seconds = (performance.now() - burstStart) / 1000;
    assert.ok(seconds < 4, `members updated ${seconds.toFixed(1)} s after the burst began`);
    assert.equal(sim.count("replace_load_balancer_members") - replacesBefore, 1, "one replace for the burst");
    await eventually(async () => (await eventsFor(name)).some((e) => e.reason === "UpdatedLoadBalancer"));
    const removedAt = performance.now();
    await deleteNodes(added.splice(0, 5));
    await eventually(() => lb.backends[0].members.length === 6, 5_000, "6 members");
    assert.ok((performance.now() - removedAt) / 1000 < 2.5);
    await kubeOk(testControlPlane(), "PATCH", `/api/v1/nodes/${first[0]}`, {
      body: { metadata: { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "true" } } },
    });
    await eventually(() => lb.backends[0].members.length === 5, 5_000, "the excluded node's member goes");
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    await deleteNodes([...first, ...added]);
  }
});

Deno.test("a Service deleted while its load balancer is creating leaves nothing behind", async () => {
  await using env = await startServiceController({
    seed: testSeed({ settings: { load_balancer_create_delay_ms: 3000 } }),
  });
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const name = uniqueName("early");
  await createService(name);
  try {
    await eventually(() => sim.loadBalancers.items.size === 1, 10_000, "load balancer creating");
    assert.equal([...sim.loadBalancers.items.values()][0].state, "creating");
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000, "service gone after its finalizer");
    assert.equal(sim.loadBalancers.items.size, 0);
    assert.ok((await eventsFor(name)).some((e) => e.reason === "DeletedLoadBalancer"));
  } finally {
    await deleteNodes(nodes);
  }
});

Deno.test("an unlabelled load balancer with the Service's name is adopted; a restart mid-way makes no second one", async () => {
  await using env = await startServiceController({
    seed: testSeed({ settings: { load_balancer_create_delay_ms: 2000 } }),
  });
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const adopted = uniqueName("adopt");
  const restarted = uniqueName("restart");
  // Left unlabelled by an old controller's crash between create and label, before this controller started.
  await env.stopController();
  const { lb: orphan } = sim.loadBalancers.create({
    zone: "de-fsn1",
    name: loadBalancerName("test", NS, adopted),
    network_id: "net-1",
    public_ipv4: false,
  });
  env.startController();
  await createService(adopted);
  try {
    await eventually(async () => ingressIps(await getService(adopted)).length > 0, 15_000);
    assert.equal(sim.loadBalancers.items.size, 1);
    assert.equal(orphan.labels["ccm.ankra.cloud/service"], `${NS}/${adopted}`);
    // The controller stops right after creating (before the address and status): a restart finds it by label.
    await createService(restarted);
    await eventually(() => sim.loadBalancers.items.size === 2, 10_000);
    await env.stopController();
    env.startController();
    await eventually(async () => ingressIps(await getService(restarted)).length > 0, 15_000);
    assert.equal(sim.loadBalancers.items.size, 2, "exactly one load balancer per Service after the restart");
  } finally {
    await deleteService(adopted);
    await deleteService(restarted);
    await eventually(async () => !(await serviceExists(adopted)) && !(await serviceExists(restarted)), 20_000);
    await deleteNodes(nodes);
  }
});
