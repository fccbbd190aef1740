/**
 * Service load balancers end to end: the real kube-apiserver, the Ankra Cloud simulator, the service controller
 * in-process.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane.ts";
import { kubeOk } from "../support/kube_http.ts";
import { eventually } from "../support/node_controllers.ts";
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
  WRITES,
} from "../support/service_fixtures.ts";
import { startServiceController } from "../support/service_controller.ts";
import { moreReads } from "../support/cloud_passes.ts";
import { testSeed } from "../support/simulator.ts";
import { loadBalancerName } from "../../lib/provider/load_balancer_names.ts";

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

Deno.test("a port change 80→8080 leaves exactly one frontend and backend on the new port", async () => {
  await using env = await startServiceController();
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const name = uniqueName("port");
  await createService(name);
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000);
    await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${name}`, {
      body: { spec: { ports: [{ name: "p0", port: 8080, protocol: "TCP" }] } },
    });
    await eventually(
      () => {
        const lb = [...sim.loadBalancers.items.values()][0];
        return lb.frontends.length === 1 && lb.frontends[0].port === 8080 && lb.backends.length === 1 &&
          lb.backends[0].name === "tcp-8080";
      },
      10_000,
      "listeners on 8080",
    );
    const nodePort = (await getService(name)).spec!.ports![0].nodePort;
    const lb = [...sim.loadBalancers.items.values()][0];
    await eventually(() => lb.backends[0].members.length === 1 && lb.backends[0].members[0].port === nodePort);
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
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

Deno.test("an invalid annotation gets a Warning naming it, and nothing is created until it is fixed", async () => {
  await using env = await startServiceController();
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const name = uniqueName("badann");
  await createService(name, { annotations: { "load-balancer.ankra.cloud/health-check-interval": "0" } });
  try {
    await eventually(async () => (await eventsFor(name)).some((e) => e.reason === "InvalidAnnotation"));
    const event = (await eventsFor(name)).find((e) => e.reason === "InvalidAnnotation")!;
    assert.equal(event.type, "Warning");
    assert.match(
      event.message,
      /load-balancer\.ankra\.cloud\/health-check-interval must be an integer from 1 to 300, not "0"/,
    );
    assert.equal(sim.count("create_load_balancer"), 0);
    const fixedAt = sim.log.length;
    await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${name}`, {
      body: { metadata: { annotations: { "load-balancer.ankra.cloud/health-check-interval": "15" } } },
    });
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000);
    const creates = sim.log.map((e, i) => [e.operation, i] as const).filter(([op]) => op === "create_load_balancer");
    assert.deepEqual(creates.map(([, i]) => i >= fixedAt), [true], "one create, and only after the fix");
    const lb = [...sim.loadBalancers.items.values()][0];
    assert.equal(lb.backends[0].health_check.interval_seconds, 15);
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    await deleteNodes(nodes);
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

Deno.test("Services beyond the quota get a clear event, nothing leaks, and all are served once it is raised", async () => {
  await using env = await startServiceController({ seed: testSeed({ settings: { load_balancer_quota: 5 } }) });
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const names = Array.from({ length: 20 }, () => uniqueName("quota"));
  for (const name of names) await createService(name);
  try {
    await eventually(
      async () => {
        const served = await Promise.all(names.map(async (n) => ingressIps(await getService(n)).length > 0));
        return served.filter(Boolean).length === 5;
      },
      20_000,
      "five served",
    );
    assert.equal(sim.loadBalancers.items.size, 5);
    const waiting = [];
    for (const name of names) if (ingressIps(await getService(name)).length === 0) waiting.push(name);
    assert.equal(waiting.length, 15);
    for (const name of waiting) {
      await eventually(async () => (await eventsFor(name)).some((e) => /at most 5 load balancers/.test(e.message)));
    }
    sim.world.settings.load_balancer_quota = 25;
    await eventually(
      async () => {
        const served = await Promise.all(names.map(async (n) => ingressIps(await getService(n)).length > 0));
        return served.every(Boolean);
      },
      40_000,
      "all served",
    );
    assert.equal(sim.loadBalancers.items.size, 20, "exactly one load balancer per Service");
  } finally {
    for (const name of names) await deleteService(name);
    for (const name of names) await eventually(async () => !(await serviceExists(name)), 20_000);
    assert.equal(sim.loadBalancers.items.size, 0);
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

Deno.test("in a zone with one compute node the load balancer is a single VM, reported once", async () => {
  await using env = await startServiceController();
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const name = uniqueName("single");
  await createService(name, {
    annotations: { "load-balancer.ankra.cloud/zone": "de-fsn2", "load-balancer.ankra.cloud/ipv4": "true" },
  });
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000);
    const lb = [...sim.loadBalancers.items.values()][0];
    assert.equal(lb.high_availability, false);
    const ips = ingressIps(await getService(name));
    assert.deepEqual(ips, [lb.public_ipv6_addresses[0], lb.public_ipv4], "IPv6 first, then the IPv4 add-on");
    const events = (await eventsFor(name)).filter((e) => e.reason === "SingleNodeLoadBalancer");
    assert.equal(events.length, 1);
    assert.match(events[0].message, /high_availability: false.*1 compute node/);
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    await deleteNodes(nodes);
  }
});

Deno.test("without a configured network the nodes' shared network is used", async () => {
  await using env = await startServiceController({ networkId: null });
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(2);
  const name = uniqueName("net");
  await createService(name);
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000);
    assert.equal([...sim.loadBalancers.items.values()][0].network_id, "net-1");
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    await deleteNodes(nodes);
  }
});

const EDGE_SEED = () =>
  testSeed({
    edges: [{
      id: "edge-1",
      network_id: "net-1",
      roles: ["load_balancer", "nat_gateway"],
      placement: "combined",
      members: [{ name: "hand-made", frontend_port: 8443, address: "10.0.0.99", port: 443 }],
    }],
  });

async function setAnnotation(name: string, key: string, value: string | null): Promise<void> {
  await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${name}`, {
    body: { metadata: { annotations: { [key]: value } } },
  });
}

Deno.test("edge mode: members on the combined edge beside others, status from the edge, and a clean exit", async () => {
  await using env = await startServiceController({ seed: EDGE_SEED(), driftCheckMs: 500 });
  const sim = env.cloud.simulator.sim;
  const edge = sim.edges.get("edge-1");
  const nodes = await createNodes(2);
  const name = uniqueName("edge");
  await createService(name, { annotations: { "load-balancer.ankra.cloud/edge": "edge-1" } });
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000, "edge address");
    assert.deepEqual(ingressIps(await getService(name)), [edge.machines[0].public_ipv6, edge.machines[0].public_ipv4]);
    assert.equal(sim.loadBalancers.items.size, 0, "no dedicated load balancer in edge mode");
    const mine = edge.members.filter((m) => m.name !== "hand-made");
    assert.equal(mine.length, 2);
    assert.ok(mine.every((m) => /^k[0-9a-f]{8}-[0-9a-f]{8}$/.test(m.name) && m.frontend_port === 80));
    assert.ok(edge.members.some((m) => m.name === "hand-made" && m.frontend_port === 8443), "other members kept");
    const updates = sim.count("update_edge");
    const unfilteredLists = () =>
      sim.log.filter((e) => e.operation === "list_load_balancers" && !e.path.includes("label=")).length;
    const scans = unfilteredLists();
    await moreReads(sim, { operation: "get_edge", pathIncludes: "edge-1" }, { count: 2 });
    assert.equal(sim.count("update_edge"), updates, "steady state: no edge writes");
    assert.equal(unfilteredLists(), scans, "steady state never lists the whole account");
    // Leaving edge mode: the members go from the edge and a dedicated load balancer serves the Service.
    await setAnnotation(name, "load-balancer.ankra.cloud/edge", null);
    await eventually(
      () => edge.members.length === 1 && sim.loadBalancers.items.size === 1,
      15_000,
      "moved off the edge",
    );
    const lb = [...sim.loadBalancers.items.values()][0];
    await eventually(async () => ingressIps(await getService(name))[0] === lb.public_ipv6_addresses[0], 15_000);
    // And back: the dedicated load balancer is retired.
    await setAnnotation(name, "load-balancer.ankra.cloud/edge", "edge-1");
    await eventually(() => edge.members.length === 3 && sim.loadBalancers.items.size === 0, 15_000, "back on the edge");
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    assert.deepEqual(edge.members.map((m) => m.name), ["hand-made"], "deleting the Service removes its members");
    await deleteNodes(nodes);
  }
});

Deno.test("edge mode refuses a port another member already serves, with a clear event and no change", async () => {
  await using env = await startServiceController({ seed: EDGE_SEED() });
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const name = uniqueName("clash");
  await createService(name, {
    ports: [{ port: 8443 }],
    annotations: { "load-balancer.ankra.cloud/edge": "edge-1" },
  });
  try {
    await eventually(async () =>
      (await eventsFor(name)).some((e) => /already served by member hand-made/.test(e.message))
    );
    assert.equal(sim.count("update_edge"), 0);
    assert.deepEqual(ingressIps(await getService(name)), []);
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    await deleteNodes(nodes);
  }
});

Deno.test("an edge without an address yet is not reported as ready", async () => {
  await using env = await startServiceController({
    seed: testSeed({ settings: { edge_sync_delay_ms: 2500 } }),
  });
  const sim = env.cloud.simulator.sim;
  const { edge } = sim.edges.create({ network_id: "net-1", roles: ["load_balancer"], placement: "combined" });
  const nodes = await createNodes(1);
  const name = uniqueName("edge-new");
  await createService(name, { annotations: { "load-balancer.ankra.cloud/edge": edge.id } });
  try {
    await eventually(() => edge.members.length === 1, 10_000, "member written");
    assert.equal(edge.state, "creating");
    assert.deepEqual(ingressIps(await getService(name)), []);
    await eventually(async () => ingressIps(await getService(name)).length === 2, 15_000, "address once running");
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    await deleteNodes(nodes);
  }
});

Deno.test("members follow the Service's IP families: IPv4-only, IPv6-only, and dual-stack IPv6 first", async () => {
  await using env = await startServiceController({ seed: testSeed({ settings: { load_balancer_quota: 10 } }) });
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(2);
  const cases: [string, { ipFamilyPolicy: string; ipFamilies: string[] }, RegExp[]][] = [
    [uniqueName("fam-v4"), { ipFamilyPolicy: "SingleStack", ipFamilies: ["IPv4"] }, [/^10\./, /^10\./]],
    [uniqueName("fam-v6"), { ipFamilyPolicy: "SingleStack", ipFamilies: ["IPv6"] }, [/^fd64:/, /^fd64:/]],
    [
      uniqueName("fam-ds"),
      { ipFamilyPolicy: "RequireDualStack", ipFamilies: ["IPv4", "IPv6"] },
      [/^fd64:/, /^fd64:/, /^10\./, /^10\./],
    ],
  ];
  try {
    for (const [name, families] of cases) await createService(name, families);
    for (const [name, , expected] of cases) {
      await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000, `${name} served`);
      const lb = [...sim.loadBalancers.items.values()].find((l) =>
        l.labels["ccm.ankra.cloud/service"] === `${NS}/${name}`
      )!;
      const addresses = lb.backends[0].members.map((m) => m.address);
      assert.equal(addresses.length, expected.length, `${name}: ${addresses.join(", ")}`);
      addresses.forEach((address, i) => assert.match(address, expected[i], `${name}: ${addresses.join(", ")}`));
    }
  } finally {
    for (const [name] of cases) await deleteService(name);
    for (const [name] of cases) await eventually(async () => !(await serviceExists(name)), 15_000);
    await deleteNodes(nodes);
  }
});

Deno.test("http backends, TLS frontends with certificates and the HTTPS redirect follow the annotations", async () => {
  await using env = await startServiceController();
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const name = uniqueName("https");
  await createService(name, {
    ports: [{ port: 80 }, { port: 443 }],
    annotations: {
      "load-balancer.ankra.cloud/protocol": "http",
      "load-balancer.ankra.cloud/tls-ports": "443",
      "load-balancer.ankra.cloud/certificate-ids": "cert-a,cert-b",
      "load-balancer.ankra.cloud/redirect-http-to-https": "true",
    },
  });
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000);
    const lb = [...sim.loadBalancers.items.values()][0];
    assert.ok(lb.backends.every((b) => b.mode === "http"));
    const https = lb.frontends.find((f) => f.port === 443)!;
    const plain = lb.frontends.find((f) => f.port === 80)!;
    assert.deepEqual([https.tls, https.certificate_ids, https.redirect_to_https], [true, ["cert-a", "cert-b"], false]);
    assert.deepEqual([plain.tls, plain.redirect_to_https], [false, true]);
    await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${name}`, {
      body: { metadata: { annotations: { "load-balancer.ankra.cloud/redirect-http-to-https": null } } },
    });
    await eventually(() => lb.frontends.find((f) => f.port === 80)?.redirect_to_https === false, 10_000);
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    await deleteNodes(nodes);
  }
});

Deno.test("Services of another loadBalancerClass are left alone; the configured class is served", async () => {
  await using env = await startServiceController({ loadBalancerClass: "ankra.cloud/load-balancer" });
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const ours = uniqueName("class-ours");
  const theirs = uniqueName("class-theirs");
  // Theirs first: the controller sees Services in order, so by the time ours is served, theirs was seen before it.
  await createService(theirs, { loadBalancerClass: "example.com/other" });
  await createService(ours, { loadBalancerClass: "ankra.cloud/load-balancer" });
  try {
    await eventually(async () => ingressIps(await getService(ours)).length > 0, 15_000);
    const other = await getService(theirs);
    assert.deepEqual(other.metadata!.finalizers ?? [], [], "no finalizer on another class's Service");
    assert.deepEqual(ingressIps(other), []);
    assert.equal(sim.loadBalancers.items.size, 1);
  } finally {
    await deleteService(ours);
    await deleteService(theirs);
    await eventually(async () => !(await serviceExists(ours)), 15_000);
    await deleteNodes(nodes);
  }
});

Deno.test("asking for IPv4 or another network after creation is reported once as ImmutableSetting, nothing recreated", async () => {
  await using env = await startServiceController({ driftCheckMs: 500 });
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const name = uniqueName("immutable");
  await createService(name);
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000);
    const lb = [...sim.loadBalancers.items.values()][0];
    await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${name}`, {
      body: { metadata: { annotations: { "load-balancer.ankra.cloud/ipv4": "true" } } },
    });
    await eventually(async () => (await eventsFor(name)).some((e) => e.reason === "ImmutableSetting"), 10_000);
    // Two more drift reads: the pass that follows the event's has run to its end.
    await moreReads(sim, { operation: "get_load_balancer", pathIncludes: lb.id }, { count: 2 });
    const events = (await eventsFor(name)).filter((e) => e.reason === "ImmutableSetting");
    assert.equal(events.length, 1);
    assert.equal(events[0].count, 1, "recorded when the situation appears, not on every pass");
    assert.match(events[0].message, /no public IPv4.*recreate the Service/);
    assert.deepEqual([...sim.loadBalancers.items.keys()], [lb.id], "nothing recreated");
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    await deleteNodes(nodes);
  }
});

Deno.test("source ranges get one Warning saying they are not enforced; Local traffic is not refused", async () => {
  await using env = await startServiceController();
  const nodes = await createNodes(1);
  const name = uniqueName("ranges");
  await kubeOk(testControlPlane(), "POST", `/api/v1/namespaces/${NS}/services`, {
    body: {
      metadata: { name },
      spec: {
        type: "LoadBalancer",
        ports: [{ port: 80 }],
        loadBalancerSourceRanges: ["203.0.113.0/24"],
        externalTrafficPolicy: "Local",
      },
    },
  });
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000, "still served");
    const events = (await eventsFor(name)).filter((e) => e.reason === "UnsupportedSetting");
    assert.equal(events.length, 1);
    assert.match(events[0].message, /loadBalancerSourceRanges \(203\.0\.113\.0\/24\) is not enforced/);
    assert.doesNotMatch(events[0].message, /externalTrafficPolicy/);
    assert.equal(env.cloud.simulator.sim.loadBalancers.items.size, 1);
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    await deleteNodes(nodes);
  }
});
