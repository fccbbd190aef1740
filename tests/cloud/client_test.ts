/**
 * The Ankra Cloud client against the simulator: every operation, every error class, pagination, retries,
 * idempotent creates and the shared request budget.
 */
import assert from "node:assert/strict";
import { CloudApiError, type CloudErrorKind, isNotFound } from "../../lib/cloud/errors.ts";
import { READ_ONLY_TOKEN, startTestCloud, TEST_TOKEN, testSeed } from "../support/simulator.ts";
import { USER_AGENT } from "../../lib/version.ts";

async function failure(promise: Promise<unknown>): Promise<CloudApiError> {
  try {
    await promise;
  } catch (cause) {
    assert.ok(cause instanceof CloudApiError, `expected a CloudApiError, got ${cause}`);
    return cause;
  }
  assert.fail("the call succeeded");
}

/** The simulator's clock, which the tests move on to finish life cycles (creates take 300 ms, deletes 200 ms). */
function fakeClock() {
  let now = Date.now();
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const LB_LABELS = { "ccm.ankra.cloud/service": "shop/web", "ccm.ankra.cloud/cluster": "prod" };

Deno.test("servers are listed across several pages and filtered by exact hostname and label", async () => {
  const servers = Array.from({ length: 230 }, (_, i) => ({
    hostname: `worker-${i}`,
    zone: "de-fsn1",
    labels: i % 2 ? { pool: "odd" } : { pool: "even" },
    interfaces: [{ network_id: "net-1" }],
  }));
  await using cloud = await startTestCloud(testSeed({ servers }));
  const all = (await cloud.client.listServers()).items;
  assert.equal(all.length, 230);
  assert.equal(new Set(all.map((s) => s.id)).size, 230);
  assert.equal(cloud.simulator.sim.count("list_servers"), 3, "100 + 100 + 30");
  const one = (await cloud.client.listServers({ hostname: "worker-1" })).items;
  assert.deepEqual(one.map((s) => s.hostname), ["worker-1"], "worker-10.. are not matches for worker-1");
  const odd = (await cloud.client.listServers({ labels: { pool: "odd" } })).items;
  assert.equal(odd.length, 115);
  const server = await cloud.client.getServer(all[0].id);
  assert.equal(server.hostname, "worker-0");
  assert.equal(server.state, "started");
  assert.match(server.public_ipv6 ?? "", /^2001:db8:/);
  assert.equal(server.public_ipv4, null);
  const legs = await cloud.client.listServerInterfaces(server.id);
  assert.equal(legs.length, 1);
  assert.equal(legs[0].network_id, "net-1");
  assert.match(legs[0].address, /^10\.0\.0\.\d+$/);
  assert.match(legs[0].address6, /^fd64:1:0:1::a00:/);
});

Deno.test("zones, their capabilities and networks are read and validated", async () => {
  await using cloud = await startTestCloud();
  const zones = await cloud.client.listZones();
  assert.deepEqual(zones.map((z) => [z.name, z.region]), [["de-fsn1", "eu-central"], ["de-fsn2", "eu-central"]]);
  const two = await cloud.client.getZoneCapabilities("de-fsn1");
  assert.equal(two.features.load_balancer_ha, true);
  const one = await cloud.client.getZoneCapabilities("de-fsn2");
  assert.equal(one.features.load_balancer_ha, false);
  assert.equal(one.compute_nodes, 1);
  assert.match(one.reasons.load_balancer_ha, /1 compute node\(s\); it needs 2/);
  assert.ok(
    !("datacenters" in one),
    "unknown fields are accepted and dropped: a cached document holds only what is read",
  );
  assert.ok(isNotFound(await failure(cloud.client.getZoneCapabilities("us-nowhere"))));
  const networks = (await cloud.client.listNetworks()).items;
  assert.deepEqual(networks.map((n) => n.id), ["net-1"]);
  const network = await cloud.client.getNetwork("net-1");
  assert.equal(network.cidr, "10.0.0.0/16");
  assert.deepEqual(network.members, []);
});

Deno.test("a load balancer is created, becomes running with its addresses, and is deleted through deleting", async () => {
  const clock = fakeClock();
  await using cloud = await startTestCloud(testSeed(), { simulatorClock: clock.now });
  const { loadBalancer, operation } = await cloud.client.createLoadBalancer({
    zone: "de-fsn1",
    name: "k8s-prod-shop-web",
    network_id: "net-1",
    labels: LB_LABELS,
    public_ipv4: false,
  });
  assert.equal(operation.kind, "load_balancer.create");
  assert.equal(loadBalancer.state, "creating");
  assert.equal(loadBalancer.public_ipv6, null);
  assert.equal(loadBalancer.high_availability, true, "a two-node zone gets a pair when not asked");
  assert.deepEqual(loadBalancer.labels, LB_LABELS);
  clock.advance(299);
  assert.equal((await cloud.client.getLoadBalancer(loadBalancer.id)).state, "creating");
  clock.advance(1);
  const running = await cloud.client.getLoadBalancer(loadBalancer.id);
  assert.equal(running.state, "running");
  assert.equal(running.public_ipv6_addresses.length, 2, "an HA pair has two IPv6 frontend addresses");
  assert.equal(running.public_ipv6, running.public_ipv6_addresses[0]);
  assert.equal(running.public_ipv4, null, "no IPv4 unless asked");
  const found = (await cloud.client.listLoadBalancers({ labels: LB_LABELS })).items;
  assert.deepEqual(found.map((lb) => lb.id), [loadBalancer.id]);
  assert.deepEqual(found[0].backends, [], "list items come without backends");
  const renamed = await cloud.client.updateLoadBalancer(loadBalancer.id, { labels: { ...LB_LABELS, extra: "x" } });
  assert.equal(renamed.labels.extra, "x");
  const deletion = await cloud.client.deleteLoadBalancer(loadBalancer.id);
  assert.equal(deletion.kind, "load_balancer.delete");
  assert.equal((await cloud.client.getLoadBalancer(loadBalancer.id)).state, "deleting");
  const again = await failure(cloud.client.updateLoadBalancer(loadBalancer.id, { name: "x" }));
  assert.equal(again.kind, "conflict");
  clock.advance(200);
  assert.ok(isNotFound(await failure(cloud.client.getLoadBalancer(loadBalancer.id))));
});

Deno.test("a single-VM load balancer with the IPv4 add-on gets one IPv6 and one IPv4", async () => {
  const clock = fakeClock();
  await using cloud = await startTestCloud(testSeed(), { simulatorClock: clock.now });
  const { loadBalancer } = await cloud.client.createLoadBalancer({
    zone: "de-fsn2",
    name: "single",
    network_id: "net-1",
    high_availability: false,
    public_ipv4: true,
  });
  clock.advance(300);
  const running = await cloud.client.getLoadBalancer(loadBalancer.id);
  assert.equal(running.high_availability, false);
  assert.equal(running.public_ipv6_addresses.length, 1);
  assert.match(running.public_ipv4 ?? "", /^203\.0\.113\.\d+$/);
});

Deno.test("backends, frontends and members are created, changed and removed", async () => {
  await using cloud = await startTestCloud();
  const c = cloud.client;
  const { loadBalancer: lb } = await c.createLoadBalancer({
    zone: "de-fsn1",
    name: "listeners",
    network_id: "net-1",
    public_ipv4: false,
  });
  const backend = await c.createBackend(lb.id, { name: "tcp-80", mode: "tcp" });
  assert.deepEqual(backend.health_check, {
    type: "tcp",
    path: "/",
    expected_status: "200-399",
    interval_seconds: 2,
    rise: 2,
    fall: 3,
  });
  const updated = await c.updateBackend(lb.id, backend.id, {
    health_check: { type: "http", path: "/healthz", interval_seconds: 5 },
    balance: "source",
  });
  assert.equal(updated.health_check.type, "http");
  assert.equal(updated.health_check.rise, 2, "omitted fields keep their value");
  assert.equal(updated.balance, "source");
  const frontend = await c.createFrontend(lb.id, { name: "tcp-80", port: 80, backend_id: backend.id });
  assert.equal(frontend.port, 80);
  const inUse = await failure(c.deleteBackend(lb.id, backend.id));
  assert.equal(inUse.kind, "conflict", "a backend a frontend forwards to cannot go");
  const members = await c.replaceMembers(lb.id, backend.id, [
    { name: "worker-1-aaaa", address: "fd64:1:0:1::a00:5", port: 30080 },
    { name: "worker-1-bbbb", address: "10.0.0.5", port: 30080 },
    { name: "worker-2-cccc", address: "2001:db8:99::1", port: 30080 },
  ]);
  assert.equal(members.length, 3);
  const kept = await c.replaceMembers(lb.id, backend.id, [
    { name: "worker-1-aaaa", address: "fd64:1:0:1::a00:6", port: 30081 },
  ]);
  assert.equal(kept[0].id, members[0].id, "a member whose name reappears keeps its id");
  assert.equal(kept[0].port, 30081);
  assert.deepEqual(await c.replaceMembers(lb.id, backend.id, []), []);
  await c.deleteFrontend(lb.id, frontend.id);
  await c.deleteBackend(lb.id, backend.id);
  const after = await c.getLoadBalancer(lb.id);
  assert.deepEqual([after.frontends.length, after.backends.length], [0, 0]);
  assert.ok(isNotFound(await failure(c.deleteFrontend(lb.id, frontend.id))));
});

Deno.test("edges are read and their members replaced with an edge.sync operation", async () => {
  const clock = fakeClock();
  await using cloud = await startTestCloud(
    testSeed({
      edges: [{
        id: "edge-1",
        network_id: "net-1",
        roles: ["load_balancer", "nat_gateway"],
        placement: "combined",
        members: [{ name: "hand-made", frontend_port: 8443, address: "10.0.0.99", port: 443 }],
      }],
    }),
    { simulatorClock: clock.now },
  );
  const edge = await cloud.client.getEdge("edge-1");
  assert.equal(edge.placement, "combined");
  assert.equal(edge.state, "running");
  assert.match(edge.public_ipv4 ?? "", /^203\.0\.113\./);
  assert.equal(edge.machines[0].roles.includes("load_balancer"), true);
  const { edge: changed, operation } = await cloud.client.updateEdge("edge-1", {
    members: [
      ...edge.members.map(({ name, frontend_port, address, port, weight, enabled }) => ({
        name,
        frontend_port,
        address,
        port,
        weight,
        enabled,
      })),
      { name: "kabc-1", frontend_port: 80, address: "10.0.0.5", port: 30080 },
    ],
  });
  assert.equal(operation.kind, "edge.sync");
  assert.equal(operation.status, "running");
  assert.deepEqual(changed.members.map((m) => m.name), ["hand-made", "kabc-1"]);
  clock.advance(200);
  assert.equal((await cloud.client.getOperation(operation.id)).status, "succeeded");
  assert.equal((await cloud.client.listEdges()).items.length, 1);
  const emptied = await cloud.client.updateEdge("edge-1", { members: [] });
  assert.deepEqual(emptied.edge.members, []);
});

Deno.test("every error class is decoded from the API's problem documents, and only 404 means gone", async () => {
  await using cloud = await startTestCloud(testSeed({ settings: { load_balancer_quota: 1 } }));
  const c = cloud.client;
  const sim = cloud.simulator.sim;
  const seen = new Map<CloudErrorKind, CloudApiError>();
  const expect = async (kind: CloudErrorKind, promise: Promise<unknown>) => {
    const error = await failure(promise);
    assert.equal(error.kind, kind, error.message);
    seen.set(kind, error);
    return error;
  };
  await expect("bad_request", c.createBackend("lb-x", { name: "Not_Valid", mode: "tcp" }));
  await expect("unauthorized", cloud.clientWith({ token: "act_unknown-token-value" }).listZones());
  const readOnly = await expect(
    "forbidden",
    cloud.clientWith({ token: READ_ONLY_TOKEN }).createLoadBalancer({
      zone: "de-fsn1",
      name: "x",
      network_id: "net-1",
      public_ipv4: false,
    }),
  );
  assert.match(readOnly.message, /read-only|permission/);
  await expect("not_found", c.getServer("srv-missing"));
  const pair = await expect(
    "conflict",
    c.createLoadBalancer({
      zone: "de-fsn2",
      name: "x",
      network_id: "net-1",
      high_availability: true,
      public_ipv4: false,
    }),
  );
  assert.match(pair.message, /load_balancer_ha/);
  await c.createLoadBalancer({ zone: "de-fsn1", name: "first", network_id: "net-1", public_ipv4: false });
  const quota = await expect(
    "quota_exceeded",
    c.createLoadBalancer({ zone: "de-fsn1", name: "second", network_id: "net-1", public_ipv4: false }),
  );
  assert.equal(quota.reason, "quota_exceeded");
  assert.match(quota.message, /at most 1 load balancers/);
  sim.world.settings.payment = "payment_method_required";
  const payment = await expect(
    "payment_required",
    c.createLoadBalancer({ zone: "de-fsn1", name: "x", network_id: "net-1", public_ipv4: false }),
  );
  assert.equal(payment.reason, "payment_method_required");
  sim.world.settings.payment = "ok";
  const noRetries = cloud.clientWith({ retry: { maxAttempts: 1 } });
  sim.faults.add({ operation: "list_zones", status: 429, retry_after: 2, times: 1 });
  const limited = await expect("rate_limited", noRetries.listZones());
  assert.equal(limited.retryAfterMs, 2000);
  sim.faults.add({ operation: "list_zones", status: 500, times: 1 });
  await expect("server_error", noRetries.listZones());
  sim.faults.add({ operation: "list_zones", status: 503, times: 1 });
  await expect("unavailable", noRetries.listZones());
  sim.faults.add({ operation: "list_zones", status: 501, times: 1 });
  await expect("not_implemented", noRetries.listZones());
  sim.faults.add({ operation: "list_zones", hang: true, times: 1 });
  await expect("timeout", cloud.clientWith({ timeoutMs: 300, retry: { maxAttempts: 1 } }).listZones());
  sim.faults.add({ operation: "list_zones", drop: true, times: 1 });
  await expect("network", noRetries.listZones());
  sim.faults.add({ operation: "get_zone_capabilities", malformed: "json", times: 1 });
  const notJson = await expect("invalid_answer", noRetries.getZoneCapabilities("de-fsn1"));
  assert.match(notJson.message, /get_zone_capabilities: .*not JSON/);
  sim.faults.add({ operation: "get_server", malformed: "shape", times: 1 });
  const server = sim.world.addServer({
    hostname: "shape-test",
    zone: "de-fsn1",
    plan: "standard-2c-4g",
    state: "started",
    labels: {},
    interfaces: [],
  });
  const wrongType = await expect("invalid_answer", noRetries.getServer(server.id));
  assert.match(wrongType.message, /get_server: .*field server\.id: /);
  for (const [kind, error] of seen) {
    assert.equal(
      isNotFound(error),
      kind === "not_found",
      `${kind} must ${kind === "not_found" ? "" : "not "}mean gone`,
    );
    assert.ok(!error.message.includes(TEST_TOKEN) && !error.message.includes(READ_ONLY_TOKEN), error.message);
  }
  assert.deepEqual([...seen.keys()].sort(), [
    "bad_request",
    "conflict",
    "forbidden",
    "invalid_answer",
    "network",
    "not_found",
    "not_implemented",
    "payment_required",
    "quota_exceeded",
    "rate_limited",
    "server_error",
    "timeout",
    "unauthorized",
    "unavailable",
  ]);
});

Deno.test("reads are retried on 5xx and 429, honouring Retry-After, and every request names its User-Agent", async () => {
  await using cloud = await startTestCloud();
  const sim = cloud.simulator.sim;
  sim.faults.add({ operation: "list_zones", status: 503, times: 2 });
  assert.equal((await cloud.client.listZones()).length, 2);
  assert.equal(sim.count("list_zones"), 3);
  sim.faults.add({ operation: "list_zones", status: 429, retry_after: 1, times: 1 });
  const started = performance.now();
  await cloud.client.listZones();
  const waited = performance.now() - started;
  assert.ok(waited >= 1000, `waited ${waited.toFixed(0)} ms, Retry-After said 1 s`);
  assert.ok(waited < 2500, `waited ${waited.toFixed(0)} ms`);
  assert.ok(sim.log.every((entry) => entry.userAgent === USER_AGENT), "User-Agent: ankra-cloud-ccm/<version>");
});

Deno.test("retries are bounded: a lasting outage ends in the outage's error", async () => {
  await using cloud = await startTestCloud();
  cloud.simulator.sim.faults.add({ operation: "get_edge", status: 502, times: 0 });
  const error = await failure(cloud.client.getEdge("edge-x"));
  assert.equal(error.kind, "unavailable");
  assert.equal(cloud.simulator.sim.count("get_edge"), 5, "five attempts in all");
  assert.ok(!isNotFound(error));
});

Deno.test("an unkeyed create is not retried on a server error", async () => {
  await using cloud = await startTestCloud();
  const { loadBalancer: lb } = await cloud.client.createLoadBalancer({
    zone: "de-fsn1",
    name: "no-retry",
    network_id: "net-1",
    public_ipv4: false,
  });
  cloud.simulator.sim.faults.add({ operation: "create_load_balancer_backend", status: 500, times: 1 });
  const error = await failure(cloud.client.createBackend(lb.id, { name: "tcp-80", mode: "tcp" }));
  assert.equal(error.kind, "server_error");
  assert.equal(cloud.simulator.sim.count("create_load_balancer_backend"), 1);
});

Deno.test("a create whose answer is lost is retried with the same key and makes exactly one load balancer", async () => {
  await using cloud = await startTestCloud();
  const sim = cloud.simulator.sim;
  sim.faults.add({ operation: "create_load_balancer", drop: true, times: 1 });
  const { loadBalancer } = await cloud.client.createLoadBalancer({
    zone: "de-fsn1",
    name: "k8s-prod-shop-web",
    network_id: "net-1",
    labels: LB_LABELS,
    public_ipv4: false,
  });
  assert.equal(sim.loadBalancers.items.size, 1);
  assert.ok(sim.loadBalancers.items.has(loadBalancer.id));
  const creates = sim.log.filter((e) => e.operation === "create_load_balancer");
  assert.equal(creates.length, 2);
  assert.ok(creates[0].idempotencyKey && creates[0].idempotencyKey === creates[1].idempotencyKey);
  assert.equal(creates[1].replayed, true);
});

Deno.test("a create that failed after running surfaces idempotency_key_outcome_unknown, and nothing is doubled", async () => {
  await using cloud = await startTestCloud();
  const sim = cloud.simulator.sim;
  sim.faults.add({ operation: "create_load_balancer", status: 500, phase: "after", times: 1 });
  const error = await failure(cloud.client.createLoadBalancer({
    zone: "de-fsn1",
    name: "unknown-outcome",
    network_id: "net-1",
    labels: LB_LABELS,
    public_ipv4: false,
  }));
  assert.equal(error.kind, "conflict");
  assert.equal(error.reason, "idempotency_key_outcome_unknown");
  assert.ok(!error.transient, "the caller must look the load balancer up before creating again");
  assert.equal(sim.loadBalancers.items.size, 1);
  assert.equal((await cloud.client.listLoadBalancers({ labels: LB_LABELS })).items.length, 1);
});

Deno.test("following the API's limit, a burst the window allows goes out at once and meets no 429", async () => {
  await using cloud = await startTestCloud(testSeed({ settings: { rate_limit_per_minute: 200 } }));
  await cloud.client.listZones(); // learns the limit
  const started = performance.now();
  await Promise.all(Array.from({ length: 170 }, () => cloud.client.listZones()));
  const elapsedSeconds = (performance.now() - started) / 1000;
  assert.ok(elapsedSeconds < 5, `170 calls of a 200/min window took ${elapsedSeconds.toFixed(2)} s: nothing paced`);
  assert.ok(cloud.simulator.sim.log.every((e) => e.status === 200), "no 429");
  assert.equal(cloud.client.budget.apiLimit, 200);
  assert.equal(cloud.client.budget.apiRemaining, 29);
});

Deno.test("the optional upper bound holds a burst of 500 calls to its rate, and the API never answers 429", async () => {
  const ratePerSecond = 200;
  await using cloud = await startTestCloud(testSeed({ settings: { rate_limit_per_minute: 100_000 } }), {
    maxRequestsPerMinute: ratePerSecond * 60,
    burst: 10,
  });
  const burst = 10;
  const started = performance.now();
  await Promise.all(Array.from({ length: 500 }, () => cloud.client.listZones()));
  const elapsedSeconds = (performance.now() - started) / 1000;
  const minimum = (500 - burst) / ratePerSecond;
  assert.ok(elapsedSeconds >= minimum * 0.97, `500 calls took ${elapsedSeconds.toFixed(2)} s, at least ${minimum} s`);
  const times = cloud.simulator.sim.log.filter((e) => e.operation === "list_zones").map((e) => e.atMs);
  assert.equal(times.length, 500);
  assert.ok(cloud.simulator.sim.log.every((e) => e.status === 200));
  let busiest = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i] - times[j] >= 1000) j++;
    busiest = Math.max(busiest, i - j + 1);
  }
  // Arrival times at the server bunch up a little behind the client's grants (connection scheduling): allow 10%.
  assert.ok(busiest <= ratePerSecond * 1.1 + burst, `busiest second held ${busiest} requests`);
});

Deno.test("clients share one budget: two clients together stay within the upper bound", async () => {
  await using cloud = await startTestCloud(testSeed(), { maxRequestsPerMinute: 100 * 60, burst: 5 });
  const second = cloud.clientWith({ budget: cloud.client.budget });
  const started = performance.now();
  await Promise.all([
    ...Array.from({ length: 50 }, () => cloud.client.listZones()),
    ...Array.from({ length: 50 }, () => second.listZones()),
  ]);
  const elapsed = (performance.now() - started) / 1000;
  assert.ok(elapsed >= (100 - 5) / 100 * 0.97, `100 shared calls took ${elapsed.toFixed(2)} s`);
});

Deno.test("the token is sent as a bearer token and never appears in an error, even one echoing it", async () => {
  await using cloud = await startTestCloud();
  cloud.simulator.sim.faults.add({
    operation: "list_zones",
    status: 400,
    detail: `rejected token ${TEST_TOKEN}`,
    times: 1,
  });
  const error = await failure(cloud.client.listZones());
  assert.ok(!error.message.includes(TEST_TOKEN), error.message);
});
