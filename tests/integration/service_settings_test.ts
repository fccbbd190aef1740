/**
 * A Service's settings end to end (annotations, zone, network, IP families, loadBalancerClass, source ranges): the
 * real kube-apiserver, the Ankra Cloud simulator, the service controller in-process.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane.ts";
import { kubeOk } from "../support/kube_http.ts";
import { eventually } from "../support/eventually.ts";
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
} from "../support/service_fixtures.ts";
import { startServiceController } from "../support/service_controller.ts";
import { moreReads } from "../support/cloud_passes.ts";
import { testSeed } from "../support/simulator.ts";

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
    assert.deepEqual(ips, [lb.public_ipv4, lb.public_ipv6_addresses[0]], "an IPv4 Service: its IPv4 add-on first");
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
