/**
 * A create whose outcome is unknown — its answer unreadable (not JSON, the wrong shape, too large), dropped, late, or a
 * 5xx after the request ran — against the in-process simulator's `phase: "after"` faults (the request runs, then the
 * answer is replaced) and, for the too-large answer, a small server on 127.0.0.1: a keyed create is sent again with its
 * `Idempotency-Key` and the API's replay answers it, so exactly one resource exists; when the retries run out the error
 * says `outcomeUnknown`. The same for `create_edge`, the API's other keyed create. The rule itself
 * (`lib/cloud/create_outcome.ts`) is tested as a table first.
 */
import assert from "node:assert/strict";
import { createOutcomeUnknown, resentAsSameRequest } from "../../../lib/cloud/create_outcome.ts";
import { AnkraCloudClient } from "../../../lib/cloud/client.ts";
import type { CloudErrorKind } from "../../../lib/cloud/errors.ts";
import { CloudRequestBudget } from "../../../lib/cloud/request_budget.ts";
import { RESPONSE_SCHEMAS } from "../../../lib/cloud/schemas.ts";
import { CloudTransport } from "../../../lib/cloud/transport.ts";
import { MIB } from "../../../lib/runtime/bounded_body.ts";
import type { Fault } from "../../../simulator/faults.ts";
import { failure, LB_LABELS } from "../../support/cloud/cloud_client_fixtures.ts";
import { startTestCloud, TEST_TOKEN, testSeed } from "../../support/cloud/simulator.ts";

const CREATE = { method: "POST", idempotent: true };
const UNKEYED = { method: "POST" };
const READ = { method: "GET" };

const BODY = { zone: "de-fsn1", name: "k8s-prod-shop-web", network_id: "net-1", labels: LB_LABELS, public_ipv4: false };

Deno.test("the rule: which failures leave a create's outcome unknown, and which are sent again with the key", () => {
  const cases: [CloudErrorKind, number | undefined, string | undefined, boolean, boolean][] = [
    // kind, status, reason, outcome unknown (POST), sent again (keyed)
    ["invalid_answer", 202, undefined, true, true], // a 2xx whose body is not JSON or has the wrong shape
    ["invalid_answer", 200, undefined, true, true],
    ["invalid_answer", undefined, undefined, true, true],
    ["invalid_answer", 405, undefined, false, false], // a status the client has no kind for: nothing was created
    ["network", undefined, undefined, true, true], // dropped, reset, refused: assumed sent
    ["timeout", undefined, undefined, true, true],
    ["server_error", 500, undefined, true, true],
    ["unavailable", 503, undefined, true, true],
    ["not_implemented", 501, undefined, false, false],
    ["rate_limited", 429, undefined, false, false], // retried for its own reason, never ran
    ["bad_request", 400, undefined, false, false],
    ["quota_exceeded", 422, "quota_exceeded", false, false],
    ["conflict", 409, undefined, false, false],
    ["conflict", 409, "idempotency_key_in_progress", true, true],
    ["conflict", 409, "idempotency_key_outcome_unknown", true, false], // the API's last word: look it up
    ["conflict", 409, "idempotency_key_answer_not_stored", true, false],
    ["idempotency_key_reused", 422, "idempotency_key_reused", true, false],
  ];
  for (const [kind, status, reason, unknown, resent] of cases) {
    const failure = { kind, status, reason };
    const what = `${kind} ${status ?? "-"} ${reason ?? ""}`;
    assert.equal(createOutcomeUnknown(CREATE, failure), unknown, `keyed create, ${what}`);
    assert.equal(createOutcomeUnknown(UNKEYED, failure), unknown, `unkeyed create, ${what}`);
    assert.equal(resentAsSameRequest(CREATE, failure), resent, `keyed create sent again, ${what}`);
    assert.equal(resentAsSameRequest(UNKEYED, failure), false, `an unkeyed create is never sent again, ${what}`);
    assert.equal(createOutcomeUnknown(READ, failure), reason?.startsWith("idempotency_key_") ?? false, `GET, ${what}`);
  }
});

/** Every kind of answer the client cannot read, as a simulator fault striking after the create ran. */
const UNREADABLE_AFTER_RUNNING: [string, Fault][] = [
  ["a 202 whose body has the wrong shape", { operation: "create_load_balancer", malformed: "shape", phase: "after" }],
  ["a 202 whose body is not JSON", { operation: "create_load_balancer", malformed: "json", phase: "after" }],
  ["a connection broken while the answer is sent", { operation: "create_load_balancer", drop: true, phase: "after" }],
].map(([what, fault]) => [what as string, { ...(fault as Fault), times: 1 }]);

for (const [what, fault] of UNREADABLE_AFTER_RUNNING) {
  Deno.test(`create_load_balancer answered by ${what}: sent again with its key, replayed, one load balancer`, async () => {
    await using cloud = await startTestCloud();
    const sim = cloud.simulator.sim;
    sim.faults.add(fault);
    const { loadBalancer } = await cloud.client.createLoadBalancer(BODY);
    assert.equal(sim.loadBalancers.items.size, 1, "exactly one load balancer");
    assert.ok(sim.loadBalancers.items.has(loadBalancer.id), "the answer names it");
    const creates = sim.log.filter((e) => e.operation === "create_load_balancer");
    assert.equal(creates.length, 2, "the first request, then the same one again");
    assert.ok(creates[0].idempotencyKey, "sent with a key");
    assert.equal(creates[1].idempotencyKey, creates[0].idempotencyKey, "the same key");
    assert.equal(creates[1].replayed, true, "the API replayed the first answer");
  });
}

Deno.test("a create answered too late (timeout after sending) is sent again with its key and replayed", async () => {
  await using cloud = await startTestCloud();
  const sim = cloud.simulator.sim;
  // The create is registered under its key, then answers after 600 ms; the client gives up after 300 ms.
  sim.faults.add({ operation: "create_load_balancer", latency_ms: 600, times: 1 });
  const client = cloud.clientWith({ timeoutMs: 300 });
  const { loadBalancer } = await client.createLoadBalancer(BODY);
  assert.equal(sim.loadBalancers.items.size, 1);
  assert.ok(sim.loadBalancers.items.has(loadBalancer.id));
  const creates = sim.log.filter((e) => e.operation === "create_load_balancer");
  assert.ok(creates.every((e) => e.idempotencyKey === creates[0].idempotencyKey), "one key for every attempt");
  assert.ok(creates.some((e) => e.replayed), "answered by the replay");
});

Deno.test("a 5xx after the create ran: the same request gets outcome_unknown, the error says so, nothing doubles", async () => {
  for (const status of [500, 503]) {
    await using cloud = await startTestCloud();
    const sim = cloud.simulator.sim;
    sim.faults.add({ operation: "create_load_balancer", status, phase: "after", times: 1 });
    const error = await failure(cloud.client.createLoadBalancer(BODY));
    assert.equal(error.reason, "idempotency_key_outcome_unknown", `${status}: ${error.message}`);
    assert.equal(error.outcomeUnknown, true);
    assert.equal(sim.loadBalancers.items.size, 1);
    const creates = sim.log.filter((e) => e.operation === "create_load_balancer");
    assert.deepEqual(creates.map((e) => e.status), [status, 409]);
    assert.equal(creates[1].idempotencyKey, creates[0].idempotencyKey);
  }
});

Deno.test("a create whose answer is not kept says outcomeUnknown (idempotency_key_answer_not_stored)", async () => {
  await using cloud = await startTestCloud();
  const sim = cloud.simulator.sim;
  sim.faults.add({ operation: "create_load_balancer", forget_answer: true, drop: true, times: 1 });
  const error = await failure(cloud.client.createLoadBalancer(BODY));
  assert.equal(error.reason, "idempotency_key_answer_not_stored");
  assert.equal(error.outcomeUnknown, true);
  assert.equal(sim.loadBalancers.items.size, 1);
});

Deno.test("every answer unreadable until the retries run out: one load balancer, and the error says outcomeUnknown", async () => {
  for (const malformed of ["shape", "json"] as const) {
    await using cloud = await startTestCloud();
    const sim = cloud.simulator.sim;
    sim.faults.add({ operation: "create_load_balancer", malformed, phase: "after", times: 0 });
    const error = await failure(cloud.client.createLoadBalancer(BODY));
    assert.equal(error.kind, "invalid_answer");
    assert.equal(error.outcomeUnknown, true, error.message);
    assert.match(error.message, /create_load_balancer: .*\(HTTP 202\).* - the request may have taken effect$/);
    assert.equal(sim.loadBalancers.items.size, 1, `${malformed}: one load balancer after five attempts`);
    const keys = new Set(sim.log.filter((e) => e.operation === "create_load_balancer").map((e) => e.idempotencyKey));
    assert.equal(sim.count("create_load_balancer"), 5);
    assert.equal(keys.size, 1, "five attempts, one key");
  }
  // No answer at all, every time (the connection breaks before the request runs): assumed sent, so unknown too.
  await using cloud = await startTestCloud();
  cloud.simulator.sim.faults.add({ operation: "create_load_balancer", drop: true, phase: "before", times: 0 });
  const error = await failure(cloud.client.createLoadBalancer(BODY));
  assert.equal(error.kind, "network");
  assert.equal(error.outcomeUnknown, true);
  assert.equal(cloud.simulator.sim.count("create_load_balancer"), 5);
});

Deno.test("a lost answer followed by a 429 burst: the retries run out on 429s, and the error still says outcomeUnknown", async () => {
  await using cloud = await startTestCloud();
  const sim = cloud.simulator.sim;
  sim.faults.add({ operation: "create_load_balancer", drop: true, phase: "after", times: 1 });
  sim.faults.add({ operation: "create_load_balancer", status: 429, retry_after: 0, times: 4 });
  const error = await failure(cloud.client.createLoadBalancer(BODY));
  assert.equal(error.kind, "rate_limited");
  assert.equal(error.outcomeUnknown, true, "the first attempt ran: a 429 later proves nothing");
  assert.equal(sim.loadBalancers.items.size, 1);
  assert.deepEqual(sim.log.filter((e) => e.operation === "create_load_balancer").map((e) => e.status), [
    0,
    429,
    429,
    429,
    429,
  ]);
});

Deno.test("refusals leave no doubt: a 4xx create is not outcomeUnknown, a read never is", async () => {
  await using cloud = await startTestCloud(testSeed({ settings: { load_balancer_quota: 0 } }));
  const quota = await failure(cloud.client.createLoadBalancer(BODY));
  assert.equal(quota.kind, "quota_exceeded");
  assert.equal(quota.outcomeUnknown, false);
  const sim = cloud.simulator.sim;
  sim.faults.add({ operation: "list_zones", malformed: "shape", times: 0 });
  const read = await failure(cloud.clientWith({ retry: { maxAttempts: 2 } }).listZones());
  assert.equal(read.kind, "invalid_answer");
  assert.equal(read.outcomeUnknown, false);
  assert.equal(sim.count("list_zones"), 1, "an unreadable read is not sent again");
});

Deno.test("an unkeyed create whose answer is unreadable is not sent again, and says it may have happened", async () => {
  await using cloud = await startTestCloud();
  const sim = cloud.simulator.sim;
  const { loadBalancer } = await cloud.client.createLoadBalancer(BODY);
  sim.faults.add({ operation: "create_load_balancer_backend", malformed: "shape", phase: "after", times: 1 });
  const error = await failure(cloud.client.createBackend(loadBalancer.id, { name: "tcp-80", mode: "tcp" }));
  assert.equal(error.outcomeUnknown, true);
  assert.equal(sim.count("create_load_balancer_backend"), 1, "no key, so never sent again");
  assert.equal(sim.loadBalancers.items.get(loadBalancer.id)!.backends.length, 1, "it did happen");
});

Deno.test("create_edge, the other keyed create, is replayed the same way after an unreadable answer", async () => {
  for (const fault of [{ malformed: "shape" as const }, { malformed: "json" as const }, { drop: true }]) {
    await using cloud = await startTestCloud();
    const sim = cloud.simulator.sim;
    sim.faults.add({ operation: "create_edge", phase: "after", times: 1, ...fault });
    const transport = new CloudTransport({
      apiUrl: cloud.simulator.url,
      token: TEST_TOKEN,
      budget: new CloudRequestBudget({}),
      retry: { baseDelayMs: 20, maxDelayMs: 200 },
    });
    try {
      const answer = await transport.call({
        operation: "create_edge",
        method: "POST",
        path: "/v1/edges",
        body: { network_id: "net-1", roles: ["load_balancer"], placement: "combined" },
        idempotent: true,
        schema: RESPONSE_SCHEMAS.create_edge,
      });
      assert.equal(sim.edges.items.size, 1, JSON.stringify(fault));
      assert.ok(sim.edges.items.has(answer.edge.id));
      const creates = sim.log.filter((e) => e.operation === "create_edge");
      assert.equal(creates.length, 2);
      assert.equal(creates[1].idempotencyKey, creates[0].idempotencyKey);
      assert.equal(creates[1].replayed, true);
    } finally {
      transport.close();
    }
  }
});

Deno.test("a create answered with a body too large to read is sent again with its key; the replay answers it", async () => {
  // A real 202 answer of create_load_balancer, from the simulator, is what the replay sends.
  await using cloud = await startTestCloud();
  const real = await fetch(`${cloud.simulator.url}/v1/load-balancers`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(BODY),
  });
  const replay = await real.text();
  assert.equal(real.status, 202, replay);
  const created = new Set<string>();
  const keys: string[] = [];
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const key = request.headers.get("idempotency-key") ?? "";
    keys.push(key);
    const headers = { "content-type": "application/json" };
    if (created.has(key)) {
      return new Response(replay, { status: 202, headers: { ...headers, "idempotent-replayed": "true" } });
    }
    created.add(key);
    // The create ran; its answer is 9 MiB, above the 8 MiB the client reads.
    return new Response("{" + " ".repeat(9 * MIB) + "}", { status: 202, headers });
  });
  const client = new AnkraCloudClient(
    { apiUrl: `http://127.0.0.1:${server.addr.port}`, token: TEST_TOKEN },
    { retry: { baseDelayMs: 10, maxDelayMs: 20 } },
  );
  try {
    const { loadBalancer } = await client.createLoadBalancer(BODY);
    assert.equal(loadBalancer.name, BODY.name);
    assert.equal(created.size, 1, "one create: the second request carried the first one's key");
    assert.equal(keys.length, 2);
    assert.equal(keys[1], keys[0]);
  } finally {
    client.close();
  }
});
