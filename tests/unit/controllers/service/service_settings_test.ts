/**
 * A Service's settings over fakes (fast tier): annotations, zone, network, IP families, loadBalancerClass and source
 * ranges decide what load balancer the service controller asks the simulator for, and what the Service's events say.
 *
 * End to end, against a real API server: an invalid annotation's Ready=False (tests/integration/ready_condition_test.ts),
 * the class rules (load_balancer_class_test.ts), the IP families' members (member_address_worlds_test.ts,
 * network_rules_test.ts) and the annotations carried by traffic (annotation_traffic_test.ts).
 */
import assert from "node:assert/strict";
import { moreReads } from "../../../support/cloud/cloud_passes.ts";
import { eventually } from "../../../support/wait/eventually.ts";
import { startFakeServiceController } from "../../../support/fakes/fake_service_controller.ts";
import { testSeed } from "../../../support/cloud/simulator.ts";

Deno.test("an invalid annotation gets a Warning naming it, and nothing is created until it is fixed", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addService("badann", { annotations: { "load-balancer.ankra.cloud/health-check-interval": "0" } });
  const event = await eventually(
    () => env.eventsOf("badann").find((e) => e.reason === "InvalidAnnotation"),
    { what: "the InvalidAnnotation event" },
  );
  assert.equal(event.type, "Warning");
  assert.match(
    event.message,
    /load-balancer\.ankra\.cloud\/health-check-interval must be an integer from 1 to 300, not "0"/,
  );
  assert.equal(sim.count("create_load_balancer"), 0);
  const fixedAt = sim.log.length;
  env.annotate("badann", { "load-balancer.ankra.cloud/health-check-interval": "15" });
  await env.served("badann");
  const creates = sim.log.map((e, i) => [e.operation, i] as const).filter(([op]) => op === "create_load_balancer");
  assert.deepEqual(creates.map(([, i]) => i >= fixedAt), [true], "one create, and only after the fix");
  const [lb] = [...sim.loadBalancers.items.values()];
  assert.equal(lb.backends[0].health_check.interval_seconds, 15);
});

Deno.test("in a zone with one compute node the load balancer is a single VM, reported once", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addService("single", {
    annotations: { "load-balancer.ankra.cloud/zone": "de-fsn2", "load-balancer.ankra.cloud/ipv4": "true" },
  });
  const served = await env.served("single");
  const [lb] = [...sim.loadBalancers.items.values()];
  assert.equal(lb.high_availability, false);
  assert.deepEqual(
    served.ingress.map((i) => i.ip),
    [lb.public_ipv4, lb.public_ipv6_addresses[0]],
    "an IPv4 Service: its IPv4 add-on first",
  );
  const events = env.eventsOf("single").filter((e) => e.reason === "SingleNodeLoadBalancer");
  assert.equal(events.length, 1);
  assert.match(events[0].message, /high_availability: false.*1 compute node/);
});

Deno.test("without a configured network the nodes' shared network is used", async () => {
  await using env = await startFakeServiceController({ networkId: null });
  env.addNode("a", "10.0.0.5");
  env.addNode("b", "10.0.0.6");
  env.addService("net");
  await env.served("net");
  assert.equal([...env.cloud.simulator.sim.loadBalancers.items.values()][0].network_id, "net-1");
});

Deno.test("members follow the Service's IP families: IPv4-only, IPv6-only, and dual-stack IPv6 first", async () => {
  await using env = await startFakeServiceController({
    seed: testSeed({ settings: { load_balancer_quota: 10, load_balancer_create_delay_ms: 100 } }),
  });
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addNode("b", "10.0.0.6");
  const cases: [string, string[], RegExp[]][] = [
    ["fam-v4", ["IPv4"], [/^10\./, /^10\./]],
    ["fam-v6", ["IPv6"], [/^fd64:/, /^fd64:/]],
    ["fam-ds", ["IPv4", "IPv6"], [/^fd64:/, /^fd64:/, /^10\./, /^10\./]],
  ];
  for (const [name, ipFamilies] of cases) env.addService(name, { ipFamilies });
  for (const [name, , expected] of cases) {
    await env.served(name);
    const lb = [...sim.loadBalancers.items.values()].find((l) =>
      l.labels["ccm.ankra.cloud/service"] === `default/${name}`
    )!;
    const addresses = lb.backends[0].members.map((m) => m.address);
    assert.equal(addresses.length, expected.length, `${name}: ${addresses.join(", ")}`);
    addresses.forEach((address, i) => assert.match(address, expected[i], `${name}: ${addresses.join(", ")}`));
  }
});

Deno.test("http backends, TLS frontends with certificates and the HTTPS redirect follow the annotations", async () => {
  await using env = await startFakeServiceController();
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addService("https", {
    ports: [{ protocol: "TCP", port: 80, nodePort: 30080 }, { protocol: "TCP", port: 443, nodePort: 30443 }],
    annotations: {
      "load-balancer.ankra.cloud/protocol": "http",
      "load-balancer.ankra.cloud/tls-ports": "443",
      "load-balancer.ankra.cloud/certificate-ids": "cert-a,cert-b",
      "load-balancer.ankra.cloud/redirect-http-to-https": "true",
    },
  });
  await env.served("https");
  const [lb] = [...sim.loadBalancers.items.values()];
  assert.ok(lb.backends.every((b) => b.mode === "http"));
  const https = lb.frontends.find((f) => f.port === 443)!;
  const plain = lb.frontends.find((f) => f.port === 80)!;
  assert.deepEqual([https.tls, https.certificate_ids, https.redirect_to_https], [true, ["cert-a", "cert-b"], false]);
  assert.deepEqual([plain.tls, plain.redirect_to_https], [false, true]);
  env.annotate("https", { "load-balancer.ankra.cloud/redirect-http-to-https": null });
  await eventually(() => lb.frontends.find((f) => f.port === 80)?.redirect_to_https === false, {
    what: "the redirect switched off",
  });
});

Deno.test("Services of another loadBalancerClass are left alone; the configured class is served", async () => {
  await using env = await startFakeServiceController({ loadBalancerClass: "ankra.cloud/load-balancer" });
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  // Theirs first: the controller takes Services in order, so by the time ours is served, theirs was seen before it.
  env.addService("class-theirs", { loadBalancerClass: "example.com/other" });
  env.addService("class-ours", { loadBalancerClass: "ankra.cloud/load-balancer" });
  await env.served("class-ours");
  const other = env.services.store.get("default/class-theirs")!;
  assert.deepEqual(other.finalizers, [], "no finalizer on another class's Service");
  assert.deepEqual(other.ingress, []);
  assert.deepEqual(env.eventsOf("class-theirs"), [], "no event about another class's Service");
  assert.equal(sim.loadBalancers.items.size, 1);
});

Deno.test("asking for IPv4 or another network after creation is reported once as ImmutableSetting, nothing recreated", async () => {
  await using env = await startFakeServiceController({ driftCheckMs: 300 });
  const { sim } = env.cloud.simulator;
  env.addNode("a", "10.0.0.5");
  env.addService("immutable");
  await env.served("immutable");
  const [lb] = [...sim.loadBalancers.items.values()];
  env.annotate("immutable", { "load-balancer.ankra.cloud/ipv4": "true" });
  await eventually(() => env.eventsOf("immutable").some((e) => e.reason === "ImmutableSetting"), {
    what: "the ImmutableSetting event",
  });
  // Two more drift reads: the passes after the event's have run to their end.
  await moreReads(sim, { operation: "get_load_balancer", pathIncludes: lb.id }, { count: 2 });
  const events = env.eventsOf("immutable").filter((e) => e.reason === "ImmutableSetting");
  assert.equal(events.length, 1, "recorded when the situation appears, not on every pass");
  assert.match(events[0].message, /no public IPv4.*recreate the Service/);
  assert.deepEqual([...sim.loadBalancers.items.keys()], [lb.id], "nothing recreated");
});

Deno.test("source ranges get one Warning saying they are not enforced; Local traffic is not refused", async () => {
  await using env = await startFakeServiceController();
  env.addNode("a", "10.0.0.5");
  env.addService("ranges", { loadBalancerSourceRanges: ["203.0.113.0/24"], externalTrafficPolicy: "Local" });
  await env.served("ranges");
  const events = env.eventsOf("ranges").filter((e) => e.reason === "UnsupportedSetting");
  assert.equal(events.length, 1);
  assert.match(events[0].message, /loadBalancerSourceRanges \(203\.0\.113\.0\/24\) is not enforced/);
  assert.doesNotMatch(events[0].message, /externalTrafficPolicy/);
  assert.equal(env.cloud.simulator.sim.loadBalancers.items.size, 1);
});

Deno.test("without --require-load-balancer-class a class-less Service is served beside the classed one, as before", async () => {
  await using env = await startFakeServiceController({ loadBalancerClass: "ankra.cloud/load-balancer" });
  env.addNode("a", "10.0.0.5");
  env.addService("plain");
  env.addService("classed", { loadBalancerClass: "ankra.cloud/load-balancer" });
  await env.served("plain");
  await env.served("classed");
  assert.equal(env.cloud.simulator.sim.loadBalancers.items.size, 2);
});
