/**
 * The Ankra Cloud client against the simulator when calls fail: every error class, bounded retries, idempotent
 * creates whose answers are lost, and a token that never appears in an error.
 */
import assert from "node:assert/strict";
import { CloudApiError, type CloudErrorKind, isNotFound } from "../../../lib/cloud/errors.ts";
import { READ_ONLY_TOKEN, startTestCloud, TEST_TOKEN, testSeed } from "../../support/cloud/simulator.ts";
import { USER_AGENT } from "../../../lib/version.ts";
import { failure, LB_LABELS } from "../../support/cloud/cloud_client_fixtures.ts";

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
