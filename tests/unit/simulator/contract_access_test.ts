// deno-lint-ignore-file no-explicit-any -- answers are JSON documents checked field by field
/**
 * The simulator against the Ankra Cloud API contract (docs/simulator.md), access and its control: token scopes, rate
 * limits, Idempotency-Key, the control API and scripted faults.
 */
import assert from "node:assert/strict";
import { eventually } from "../../support/wait/eventually.ts";
import { READ_ONLY_TOKEN, TEST_TOKEN } from "../../support/cloud/simulator.ts";
import { contractHarness, LOAD_BALANCER_BODY } from "../../support/cloud/simulator_contract.ts";

Deno.test("tokens: unknown or missing is 401, read-only is 403 on unsafe methods", async () => {
  const h = contractHarness();
  assert.equal((await h.call("GET", "/v1/zones", { token: null })).status, 401);
  assert.equal((await h.call("GET", "/v1/zones", { token: "act_nobody-knows-this" })).status, 401);
  assert.equal((await h.call("GET", "/v1/zones", { token: READ_ONLY_TOKEN })).status, 200);
  const write = await h.call("POST", "/v1/load-balancers", { token: READ_ONLY_TOKEN, body: LOAD_BALANCER_BODY });
  assert.equal(write.status, 403);
  assert.equal(h.sim.loadBalancers.items.size, 0);
});

Deno.test("rate-limit headers come with every answer, and 429 with Retry-After past the limit", async () => {
  const h = contractHarness({ settings: { rate_limit_per_minute: 3 } });
  for (let i = 0; i < 3; i++) {
    const reply = await h.call("GET", "/v1/zones");
    assert.equal(reply.status, 200);
    assert.equal(reply.headers.get("x-ratelimit-limit"), "3");
    assert.equal(reply.headers.get("x-ratelimit-remaining"), String(2 - i));
    assert.match(reply.headers.get("x-ratelimit-reset") ?? "", /^\d+$/);
  }
  const limited = await h.call("GET", "/v1/zones");
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get("retry-after"), "60");
  h.advance(60_000);
  assert.equal((await h.call("GET", "/v1/zones")).status, 200, "a new window");
});

Deno.test("Idempotency-Key: replay, reuse with another body, malformed keys, freed by a 4xx", async () => {
  const h = contractHarness();
  const key = { "idempotency-key": "create-web-1" };
  const first = await h.call("POST", "/v1/load-balancers", { body: LOAD_BALANCER_BODY, headers: key });
  const replay = await h.call("POST", "/v1/load-balancers", { body: LOAD_BALANCER_BODY, headers: key });
  assert.equal(replay.status, 202);
  assert.equal(replay.headers.get("idempotent-replayed"), "true");
  assert.deepEqual(replay.body, first.body);
  assert.equal(h.sim.loadBalancers.items.size, 1);
  const reused = await h.call("POST", "/v1/load-balancers", {
    body: { ...LOAD_BALANCER_BODY, name: "other" },
    headers: key,
  });
  assert.equal(reused.status, 422);
  assert.equal(reused.body.reason, "idempotency_key_reused");
  const malformed = await h.call("POST", "/v1/load-balancers", {
    body: LOAD_BALANCER_BODY,
    headers: { "idempotency-key": "a b" },
  });
  assert.equal(malformed.status, 400);
  const badZone = await h.call("POST", "/v1/load-balancers", {
    body: { ...LOAD_BALANCER_BODY, zone: "nowhere" },
    headers: { "idempotency-key": "k2" },
  });
  assert.equal(badZone.status, 404);
  const retried = await h.call("POST", "/v1/load-balancers", {
    body: LOAD_BALANCER_BODY,
    headers: { "idempotency-key": "k2" },
  });
  assert.equal(retried.status, 202, "a 4xx answer freed the key");
  h.sim.faults.add({ operation: "create_load_balancer", forget_answer: true, times: 1 });
  await h.call("POST", "/v1/load-balancers", {
    body: { ...LOAD_BALANCER_BODY, name: "forgotten" },
    headers: { "idempotency-key": "k3" },
  });
  const notStored = await h.call("POST", "/v1/load-balancers", {
    body: { ...LOAD_BALANCER_BODY, name: "forgotten" },
    headers: { "idempotency-key": "k3" },
  });
  assert.equal(notStored.status, 409);
  assert.equal(notStored.body.reason, "idempotency_key_answer_not_stored");
});

Deno.test("a second request with a key whose first request still runs gets 409 idempotency_key_in_progress", async () => {
  const h = contractHarness();
  h.sim.faults.add({ operation: "create_load_balancer", latency_ms: 300, times: 1 });
  // The signal that the first request holds its key: the simulator's idempotency store began it (its 300 ms of
  // latency are spent after that). The store offers no read of its records, so the test watches `begin` being called.
  const store = h.sim.idempotency;
  const begin = store.begin.bind(store);
  let begun = 0;
  store.begin = (...args) => {
    begun++;
    return begin(...args);
  };
  const headers = { "idempotency-key": "slow-create" };
  const slow = h.call("POST", "/v1/load-balancers", { body: LOAD_BALANCER_BODY, headers });
  await eventually(() => begun === 1, { intervalMs: 1, what: "the first create holding its key" });
  const second = await h.call("POST", "/v1/load-balancers", { body: LOAD_BALANCER_BODY, headers });
  assert.equal(second.status, 409);
  assert.equal(second.body.reason, "idempotency_key_in_progress");
  assert.equal(second.headers.get("retry-after"), "1");
  assert.equal((await slow).status, 202);
  const third = await h.call("POST", "/v1/load-balancers", { body: LOAD_BALANCER_BODY, headers });
  assert.equal(third.headers.get("idempotent-replayed"), "true");
  assert.equal(h.sim.loadBalancers.items.size, 1);
});

Deno.test("the control API adds, changes and removes servers, and logs and counts requests", async () => {
  const h = contractHarness();
  const added = await h.call("POST", "/_simulator/servers", {
    token: null,
    body: { hostname: "worker-9", zone: "de-fsn1", interfaces: [{ network_id: "net-1", address: "10.0.3.9" }] },
  });
  assert.equal(added.status, 201);
  const id = (added.body.server as any).id;
  const legs = (await h.valid("list_server_interfaces", "GET", `/v1/servers/${id}/networks`)).items;
  assert.deepEqual([legs[0].address, legs[0].address6], ["10.0.3.9", "fd64:1:0:1::a00:309"]);
  await h.call("PATCH", `/_simulator/servers/${id}`, { token: null, body: { state: "stopped" } });
  assert.equal((await h.valid("get_server", "GET", `/v1/servers/${id}`)).server.state, "stopped");
  await h.call("DELETE", `/_simulator/servers/${id}`, { token: null });
  assert.equal((await h.call("GET", `/v1/servers/${id}`)).status, 404);
  const counters = (await h.call("GET", "/_simulator/counters", { token: null })).body;
  assert.deepEqual([counters.get_server, counters.list_server_interfaces], [2, 1]);
  const log = (await h.call("GET", "/_simulator/requests?operation=get_server", { token: null })).body.items as any[];
  assert.deepEqual(log.map((e) => e.status), [200, 404]);
  assert.equal(log[0].tokenPrefix, TEST_TOKEN.slice(0, 8));
  const bad = await h.call("POST", "/_simulator/servers", {
    token: null,
    body: { hostname: "Bad_Name", zone: "de-fsn1" },
  });
  assert.equal(bad.status, 400);
  await h.call("POST", "/_simulator/reset", { token: null, body: {} });
  assert.equal(h.sim.count(), 0);
  assert.equal(h.sim.world.servers.size, 0);
});

Deno.test("the control API changes a server's public addresses: IPv4 add-on bought and released, /64 renumbered", async () => {
  const h = contractHarness();
  const added = await h.call("POST", "/_simulator/servers", {
    token: null,
    body: { hostname: "worker-8", zone: "de-fsn1", public_ipv6: "2001:db8:aa:1::1", ipv6_renumber_available: true },
  });
  const id = (added.body.server as any).id;
  const server = async () => (await h.valid("get_server", "GET", `/v1/servers/${id}`)).server;
  const first = await server();
  assert.deepEqual(
    [first.public_ipv4, first.public_ipv6, first.public_ipv6_prefix, first.ipv6_renumber_available],
    [null, "2001:db8:aa:1::1", "2001:db8:aa:1::/64", true],
    "a /64 from a pool being drained",
  );
  const bought = await h.call("PATCH", `/_simulator/servers/${id}`, {
    token: null,
    body: { public_ipv4: "198.51.100.7" },
  });
  assert.equal(bought.status, 200);
  assert.equal((await server()).public_ipv4, "198.51.100.7");
  await h.call("PATCH", `/_simulator/servers/${id}`, { token: null, body: { public_ipv6: "2001:DB8:BB:2::1" } });
  const renumbered = await server();
  assert.deepEqual(
    [renumbered.public_ipv6, renumbered.public_ipv6_prefix, renumbered.ipv6_renumber_available],
    ["2001:db8:bb:2::1", "2001:db8:bb:2::/64", false],
    "renumbered: the new /64, no longer from a drained pool",
  );
  assert.notEqual(renumbered.updated_at, undefined);
  const wrong = await h.call("PATCH", `/_simulator/servers/${id}`, {
    token: null,
    body: { public_ipv4: "2001:db8::9", state: "stopped" },
  });
  assert.equal(wrong.status, 400);
  assert.match(String(wrong.body.detail ?? wrong.body.title), /public_ipv4 must be an IPv4 address, not "2001:db8::9"/);
  assert.equal((await server()).state, "started", "a refused change changes nothing");
  await h.call("PATCH", `/_simulator/servers/${id}`, { token: null, body: { public_ipv4: null } });
  assert.equal((await server()).public_ipv4, null, "the add-on released");
});

Deno.test("a scripted fault hits the named operation the given number of times", async () => {
  const h = contractHarness();
  await h.call("POST", "/_simulator/faults", {
    token: null,
    body: { operation: "list_zones", status: 503, reason: "maintenance", retry_after: 3, times: 2 },
  });
  const one = await h.call("GET", "/v1/zones");
  assert.deepEqual([one.status, one.body.reason, one.headers.get("retry-after")], [503, "maintenance", "3"]);
  assert.equal((await h.call("GET", "/v1/zones")).status, 503);
  assert.equal((await h.call("GET", "/v1/zones")).status, 200);
  assert.equal((await h.call("GET", "/v1/networks")).status, 200, "other operations are untouched");
});
