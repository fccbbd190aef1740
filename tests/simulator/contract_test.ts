// deno-lint-ignore-file no-explicit-any -- answers are JSON documents checked field by field
/**
 * The simulator against the Ankra Cloud API contract (docs/simulator.md): request validation with the documented statuses,
 * answers that validate against the client's schemas, life cycles and timings on a fake clock, capabilities,
 * quota, scopes, rate limits, idempotency and the control API.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { RESPONSE_SCHEMAS } from "../../lib/cloud/schemas.ts";
import { simulatorApp } from "../../simulator/app.ts";
import { Simulator } from "../../simulator/simulator.ts";
import { READ_ONLY_TOKEN, TEST_TOKEN, testSeed } from "../support/simulator.ts";

interface Reply {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

function harness(extra: Record<string, unknown> = {}) {
  let now = Date.parse("2026-11-30T10:00:00Z");
  const sim = new Simulator(testSeed(extra), { clock: () => now });
  const app = simulatorApp(sim);
  async function call(
    method: string,
    path: string,
    options: { body?: unknown; token?: string | null; headers?: Record<string, string> } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== null) headers.authorization = `Bearer ${options.token ?? TEST_TOKEN}`;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const response = await app.fetch(
      new Request(`http://simulator.test${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      }),
    );
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers };
  }
  /** Calls and checks the answer against the client's schema of `operation`. */
  async function valid(operation: keyof typeof RESPONSE_SCHEMAS, method: string, path: string, body?: unknown) {
    const reply = await call(method, path, { body });
    assert.ok(reply.status >= 200 && reply.status < 300, `${operation}: ${reply.status} ${JSON.stringify(reply.body)}`);
    const parsed = v.safeParse(RESPONSE_SCHEMAS[operation], reply.body);
    assert.ok(parsed.success, `${operation} answer does not validate: ${JSON.stringify(parsed.issues?.[0]?.path)}`);
    return reply.body as Record<string, any>;
  }
  return {
    sim,
    call,
    valid,
    advance(ms: number) {
      now += ms;
    },
  };
}

const LB = { zone: "de-fsn1", name: "k8s-prod-shop-web", network_id: "net-1", public_ipv4: false };

async function newLoadBalancer(h: ReturnType<typeof harness>, body: Record<string, unknown> = LB) {
  return (await h.valid("create_load_balancer", "POST", "/v1/load-balancers", body)).load_balancer as Record<
    string,
    any
  >;
}

Deno.test("request bodies the API refuses are refused with 400 naming the field", async () => {
  const h = harness();
  const lb = await newLoadBalancer(h);
  const backend = (await h.valid("create_load_balancer_backend", "POST", `/v1/load-balancers/${lb.id}/backends`, {
    name: "tcp-80",
    mode: "tcp",
  })).backend;
  const cases: [string, string, unknown, RegExp][] = [
    ["POST", "/v1/load-balancers", { ...LB, colour: "red" }, /field colour: is not a known field/],
    ["POST", "/v1/load-balancers", { zone: "de-fsn1", network_id: "net-1" }, /field name: is required/],
    ["POST", "/v1/load-balancers", { ...LB, name: "x".repeat(65) }, /field name/],
    ["POST", "/v1/load-balancers", { ...LB, public_ipv4: "yes" }, /field public_ipv4/],
    [
      "POST",
      "/v1/load-balancers",
      { ...LB, labels: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, "v"])) },
      /at most 32 labels/,
    ],
    ["POST", "/v1/load-balancers", { ...LB, labels: { "-bad": "v" } }, /field labels/],
    ["POST", "/v1/load-balancers", { ...LB, network_id: "" }, /field network_id/],
    ["PATCH", `/v1/load-balancers/${lb.id}`, { name: "" }, /field name/],
    ["PATCH", `/v1/load-balancers/${lb.id}`, { high_availability: true }, /is not a known field/],
    ["POST", `/v1/load-balancers/${lb.id}/backends`, { name: "TCP_80", mode: "tcp" }, /field name/],
    ["POST", `/v1/load-balancers/${lb.id}/backends`, { name: "x".repeat(33), mode: "tcp" }, /field name/],
    ["POST", `/v1/load-balancers/${lb.id}/backends`, { name: "udp-53", mode: "udp" }, /field mode/],
    [
      "POST",
      `/v1/load-balancers/${lb.id}/backends`,
      { name: "b", mode: "tcp", health_check: { interval_seconds: 0 } },
      /field health_check\.interval_seconds/,
    ],
    [
      "POST",
      `/v1/load-balancers/${lb.id}/backends`,
      { name: "b", mode: "tcp", health_check: { rise: 11 } },
      /field health_check\.rise/,
    ],
    [
      "PATCH",
      `/v1/load-balancers/${lb.id}/backends/${backend.id}`,
      { health_check: { path: "healthz" } },
      /field health_check\.path/,
    ],
    ["PATCH", `/v1/load-balancers/${lb.id}/backends/${backend.id}`, { mode: "http" }, /is not a known field/],
    ["POST", `/v1/load-balancers/${lb.id}/frontends`, { name: "f", port: 0, backend_id: backend.id }, /field port/],
    [
      "POST",
      `/v1/load-balancers/${lb.id}/frontends`,
      { name: "f", port: 65536, backend_id: backend.id },
      /field port/,
    ],
    [
      "POST",
      `/v1/load-balancers/${lb.id}/frontends`,
      { name: "f", port: 443, backend_id: backend.id, tls: true },
      /certificate_ids/,
    ],
    [
      "POST",
      `/v1/load-balancers/${lb.id}/frontends`,
      { name: "f", port: 443, backend_id: backend.id, certificate_ids: Array(17).fill("c") },
      /field certificate_ids/,
    ],
    [
      "POST",
      `/v1/load-balancers/${lb.id}/frontends`,
      { name: "f", port: 80, backend_id: backend.id, redirect_to_https: true },
      /redirect_to_https/,
    ],
    [
      "PUT",
      `/v1/load-balancers/${lb.id}/backends/${backend.id}/members`,
      { members: Array.from({ length: 257 }, (_, i) => ({ name: `m${i}`, address: "10.0.0.5", port: 80 })) },
      /at most 256 members/,
    ],
    [
      "PUT",
      `/v1/load-balancers/${lb.id}/backends/${backend.id}/members`,
      { members: [{ name: "a", address: "10.0.0.5", port: 80 }, { name: "a", address: "10.0.0.6", port: 80 }] },
      /members\.1\.name: a appears twice/,
    ],
    [
      "PUT",
      `/v1/load-balancers/${lb.id}/backends/${backend.id}/members`,
      { members: [{ name: "a", address: "10.0.0.5", port: 80, weight: 257 }] },
      /members\.0\.weight/,
    ],
    [
      "PUT",
      `/v1/load-balancers/${lb.id}/backends/${backend.id}/members`,
      { members: [{ name: "a", address: "10.0.0.5", port: 80, extra: 1 }] },
      /members\.0\.extra: is not a known field/,
    ],
    ["PUT", `/v1/load-balancers/${lb.id}/backends/${backend.id}/members`, {}, /field members: is required/],
    ["POST", "/v1/edges", { network_id: "net-1", roles: [] }, /field roles/],
    ["POST", "/v1/edges", { network_id: "net-1", roles: ["bastion", "bastion"] }, /roles must not repeat/],
  ];
  for (const [method, path, body, detail] of cases) {
    const reply = await h.call(method, path, { body });
    assert.equal(reply.status, 400, `${method} ${path} ${JSON.stringify(body).slice(0, 80)}: ${reply.status}`);
    assert.equal(reply.headers.get("content-type"), "application/problem+json");
    assert.equal(reply.body.title, "Bad Request");
    assert.match(String(reply.body.detail), detail);
  }
  const notJson = await h.call("POST", "/v1/load-balancers", { headers: { "content-type": "application/json" } });
  assert.equal(notJson.status, 400, "a create without a body is refused");
});

Deno.test("member addresses must be hosts of the network, inside its ULA /64, or global IPv6", async () => {
  const h = harness({
    servers: [{ hostname: "ula-public", zone: "de-fsn1", public_ipv6: "fd99::7", public_ipv6_is_private: true }],
  });
  const lb = await newLoadBalancer(h);
  const backend = (await h.valid("create_load_balancer_backend", "POST", `/v1/load-balancers/${lb.id}/backends`, {
    name: "tcp-80",
    mode: "tcp",
  })).backend;
  const verdicts: [string, number][] = [
    ["10.0.0.5", 200],
    ["10.0.255.254", 200],
    ["10.0.0.0", 400],
    ["10.0.255.255", 400],
    ["10.0.0.1", 400],
    ["10.1.0.5", 400],
    ["192.168.0.5", 400],
    ["fd64:1:0:1::a00:5", 200],
    ["fd64:1:0:2::5", 400],
    ["2001:db8:5::1", 200],
    ["fe80::1", 400],
    ["::1", 400],
    ["fd99::7", 200],
    ["not-an-ip", 400],
  ];
  for (const [address, status] of verdicts) {
    const reply = await h.call("PUT", `/v1/load-balancers/${lb.id}/backends/${backend.id}/members`, {
      body: { members: [{ name: "m", address, port: 30080 }] },
    });
    assert.equal(reply.status, status, `${address}: ${JSON.stringify(reply.body)}`);
  }
});

Deno.test("every answer of every operation validates against the client's schemas", async () => {
  const h = harness({
    servers: [{ hostname: "worker-1", zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }],
    edges: [{ id: "edge-1", network_id: "net-1", roles: ["load_balancer"], placement: "combined" }],
  });
  const server = (await h.valid("list_servers", "GET", "/v1/servers?hostname=worker-1")).items[0];
  await h.valid("get_server", "GET", `/v1/servers/${server.id}`);
  await h.valid("list_server_interfaces", "GET", `/v1/servers/${server.id}/networks`);
  await h.valid("list_zones", "GET", "/v1/zones");
  await h.valid("get_zone_capabilities", "GET", "/v1/zones/de-fsn1/capabilities");
  await h.valid("list_networks", "GET", "/v1/networks");
  const network = await h.valid("get_network", "GET", "/v1/networks/net-1");
  assert.equal(network.network.members.length, 1, "get_network always carries members");
  const lb = await newLoadBalancer(h, { ...LB, labels: { a: "b" } });
  await h.valid("list_load_balancers", "GET", "/v1/load-balancers?label=a=b");
  await h.valid("get_load_balancer", "GET", `/v1/load-balancers/${lb.id}`);
  await h.valid("update_load_balancer", "PATCH", `/v1/load-balancers/${lb.id}`, { labels: {} });
  const backend = (await h.valid("create_load_balancer_backend", "POST", `/v1/load-balancers/${lb.id}/backends`, {
    name: "tcp-80",
    mode: "http",
    health_check_path: "/healthz",
  })).backend;
  assert.equal(backend.health_check.type, "http", "the legacy health_check_path asks for an http check");
  await h.valid("update_load_balancer_backend", "PATCH", `/v1/load-balancers/${lb.id}/backends/${backend.id}`, {
    balance: "leastconn",
  });
  await h.valid("create_load_balancer_frontend", "POST", `/v1/load-balancers/${lb.id}/frontends`, {
    name: "tcp-80",
    port: 80,
    backend_id: backend.id,
  });
  await h.valid("replace_load_balancer_members", "PUT", `/v1/load-balancers/${lb.id}/backends/${backend.id}/members`, {
    members: [{ name: "m1", address: "10.0.0.10", port: 30080 }],
  });
  await h.valid("list_edges", "GET", "/v1/edges");
  await h.valid("get_edge", "GET", "/v1/edges/edge-1");
  const sync = await h.valid("update_edge", "PATCH", "/v1/edges/edge-1", { members: [] });
  await h.valid("get_operation", "GET", `/v1/operations/${sync.operation.id}`);
  await h.valid("get_quotas", "GET", "/v1/quotas");
  const created = await h.valid("create_edge", "POST", "/v1/edges", { network_id: "net-1", roles: ["bastion"] });
  await h.valid("delete_edge", "DELETE", `/v1/edges/${created.edge.id}`);
  await h.valid("delete_load_balancer", "DELETE", `/v1/load-balancers/${lb.id}`);
});

Deno.test("lists page with opaque cursors, limit 1-100 (default 50), newest first", async () => {
  const h = harness({ settings: { load_balancer_quota: 200 } });
  const ids: string[] = [];
  for (let i = 0; i < 120; i++) ids.push((await newLoadBalancer(h, { ...LB, name: `lb-${i}` })).id);
  const first = await h.valid("list_load_balancers", "GET", "/v1/load-balancers");
  assert.equal(first.items.length, 50);
  assert.equal(first.items[0].id, ids[119], "newest first");
  assert.ok(!("backends" in first.items[0]), "list items come without backends");
  const seen = new Set<string>();
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = cursor ? `?limit=100&cursor=${encodeURIComponent(cursor)}` : "?limit=100";
    const page = await h.valid("list_load_balancers", "GET", `/v1/load-balancers${query}`);
    for (const item of page.items) seen.add(item.id);
    cursor = page.next_cursor;
    pages++;
  } while (cursor);
  assert.deepEqual([seen.size, pages], [120, 2]);
  for (const bad of ["?limit=0", "?limit=101", "?limit=ten", "?cursor=%%%", "?cursor=eyJsIjoieCIsImsiOiIxIn0"]) {
    const reply = await h.call("GET", `/v1/load-balancers${bad}`);
    assert.equal(reply.status, 400, bad);
    assert.match(String(reply.body.detail), /query (limit|cursor)/);
  }
  const serverCursor = (await h.call("GET", "/v1/networks?limit=1")).body.next_cursor;
  assert.equal(serverCursor, null, "one network: one page");
});

Deno.test("a load balancer is creating until the delay passes, then running; deletion passes through deleting", async () => {
  const h = harness({ settings: { load_balancer_create_delay_ms: 5000, load_balancer_delete_delay_ms: 2000 } });
  const lb = await newLoadBalancer(h, { ...LB, public_ipv4: true });
  assert.equal(lb.state, "creating");
  assert.equal(lb.active_operation.kind, "load_balancer.create");
  assert.deepEqual([lb.public_ipv6, lb.public_ipv4, lb.public_ipv6_addresses], [null, null, []]);
  h.advance(4999);
  const loadBalancer = async () =>
    (await h.valid("get_load_balancer", "GET", `/v1/load-balancers/${lb.id}`)).load_balancer;
  assert.equal((await loadBalancer()).state, "creating");
  h.advance(1);
  const running = await loadBalancer();
  assert.equal(running.state, "running");
  assert.equal(running.active_operation, null);
  assert.equal(running.public_ipv6_addresses.length, 2);
  assert.match(running.public_ipv4, /^203\.0\.113\./);
  assert.equal(running.address, running.public_ipv4, "the legacy address mirrors public_ipv4");
  const deletion = await h.call("DELETE", `/v1/load-balancers/${lb.id}`);
  assert.equal(deletion.status, 202);
  const again = await h.call("DELETE", `/v1/load-balancers/${lb.id}`);
  assert.equal(again.status, 202, "deleting again answers with the running operation");
  assert.equal((again.body.operation as any).id, (deletion.body.operation as any).id);
  assert.equal((await loadBalancer()).state, "deleting");
  const late = await h.call("POST", `/v1/load-balancers/${lb.id}/backends`, { body: { name: "b", mode: "tcp" } });
  assert.equal(late.status, 409, "no changes while deleting");
  h.advance(2000);
  assert.equal((await h.call("GET", `/v1/load-balancers/${lb.id}`)).status, 404);
  const operation = await h.valid("get_operation", "GET", `/v1/operations/${(deletion.body.operation as any).id}`);
  assert.equal(operation.operation.status, "succeeded");
});

Deno.test("edge changes are asynchronous edge.sync operations; a new edge has no address until its first sync", async () => {
  const h = harness({ settings: { edge_sync_delay_ms: 3000 } });
  const created = await h.valid("create_edge", "POST", "/v1/edges", {
    network_id: "net-1",
    roles: ["load_balancer", "nat_gateway"],
  });
  assert.equal(created.edge.placement, "separate", "a three-server zone places edges separately by default");
  const combined = await h.valid("create_edge", "POST", "/v1/edges", {
    network_id: "net-1",
    roles: ["load_balancer", "nat_gateway"],
    placement: "combined",
  });
  assert.equal(combined.edge.state, "creating");
  assert.equal(combined.edge.public_ipv4, null);
  h.advance(3000);
  const ready = (await h.valid("get_edge", "GET", `/v1/edges/${combined.edge.id}`)).edge;
  assert.equal(ready.state, "running");
  assert.match(ready.public_ipv4, /^203\.0\.113\./);
  assert.equal(ready.machines[0].name, `edge-${combined.edge.id}`);
  const sync = await h.valid("update_edge", "PATCH", `/v1/edges/${combined.edge.id}`, {
    members: [{ name: "k1", frontend_port: 80, address: "10.0.0.5", port: 30080 }],
  });
  assert.equal(sync.operation.status, "running");
  assert.equal(sync.edge.members.length, 1);
  h.advance(3000);
  assert.equal(
    (await h.valid("get_operation", "GET", `/v1/operations/${sync.operation.id}`)).operation.status,
    "succeeded",
  );
  const separateMembers = await h.call("PATCH", `/v1/edges/${created.edge.id}`, { body: { members: [] } });
  assert.equal(separateMembers.status, 409, "a separate edge's load balancer role has no member list here");
});

Deno.test("zone capabilities follow the zone's compute nodes, and a pair where one cannot be placed is a 409", async () => {
  const h = harness();
  const one = await h.valid("get_zone_capabilities", "GET", "/v1/zones/de-fsn2/capabilities");
  assert.deepEqual([one.stage, one.compute_nodes, one.features.load_balancer_ha], [1, 1, false]);
  const pair = await h.call("POST", "/v1/load-balancers", {
    body: { ...LB, zone: "de-fsn2", high_availability: true },
  });
  assert.equal(pair.status, 409);
  assert.match(String(pair.body.detail), /load_balancer_ha/);
  const single = await newLoadBalancer(h, { ...LB, zone: "de-fsn2" });
  assert.equal(single.high_availability, false, "absent high_availability follows the zone");
  await h.call("PATCH", "/_simulator/zones/de-fsn2", { body: { compute_nodes: 2 } });
  const two = await h.valid("get_zone_capabilities", "GET", "/v1/zones/de-fsn2/capabilities");
  assert.equal(two.features.load_balancer_ha, true);
  assert.equal((await h.call("GET", "/v1/zones/nowhere/capabilities")).status, 404);
  const elsewhere = await h.call("POST", "/v1/load-balancers", { body: { ...LB, network_id: "net-missing" } });
  assert.equal(elsewhere.status, 404);
});

Deno.test("the account holds at most 5 load balancers (422 quota_exceeded) until the quota is raised", async () => {
  const h = harness({ settings: { load_balancer_quota: 5 } });
  for (let i = 0; i < 5; i++) await newLoadBalancer(h, { ...LB, name: `lb-${i}` });
  const sixth = await h.call("POST", "/v1/load-balancers", { body: { ...LB, name: "lb-5" } });
  assert.equal(sixth.status, 422);
  assert.equal(sixth.body.reason, "quota_exceeded");
  await h.call("PATCH", "/_simulator/settings", { body: { load_balancer_quota: 6 } });
  assert.equal((await h.call("POST", "/v1/load-balancers", { body: { ...LB, name: "lb-5" } })).status, 202);
});

Deno.test("tokens: unknown or missing is 401, read-only is 403 on unsafe methods", async () => {
  const h = harness();
  assert.equal((await h.call("GET", "/v1/zones", { token: null })).status, 401);
  assert.equal((await h.call("GET", "/v1/zones", { token: "act_nobody-knows-this" })).status, 401);
  assert.equal((await h.call("GET", "/v1/zones", { token: READ_ONLY_TOKEN })).status, 200);
  const write = await h.call("POST", "/v1/load-balancers", { token: READ_ONLY_TOKEN, body: LB });
  assert.equal(write.status, 403);
  assert.equal(h.sim.loadBalancers.items.size, 0);
});

Deno.test("rate-limit headers come with every answer, and 429 with Retry-After past the limit", async () => {
  const h = harness({ settings: { rate_limit_per_minute: 3 } });
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
  const h = harness();
  const key = { "idempotency-key": "create-web-1" };
  const first = await h.call("POST", "/v1/load-balancers", { body: LB, headers: key });
  const replay = await h.call("POST", "/v1/load-balancers", { body: LB, headers: key });
  assert.equal(replay.status, 202);
  assert.equal(replay.headers.get("idempotent-replayed"), "true");
  assert.deepEqual(replay.body, first.body);
  assert.equal(h.sim.loadBalancers.items.size, 1);
  const reused = await h.call("POST", "/v1/load-balancers", { body: { ...LB, name: "other" }, headers: key });
  assert.equal(reused.status, 422);
  assert.equal(reused.body.reason, "idempotency_key_reused");
  const malformed = await h.call("POST", "/v1/load-balancers", { body: LB, headers: { "idempotency-key": "a b" } });
  assert.equal(malformed.status, 400);
  const badZone = await h.call("POST", "/v1/load-balancers", {
    body: { ...LB, zone: "nowhere" },
    headers: { "idempotency-key": "k2" },
  });
  assert.equal(badZone.status, 404);
  const retried = await h.call("POST", "/v1/load-balancers", { body: LB, headers: { "idempotency-key": "k2" } });
  assert.equal(retried.status, 202, "a 4xx answer freed the key");
  h.sim.faults.add({ operation: "create_load_balancer", forget_answer: true, times: 1 });
  await h.call("POST", "/v1/load-balancers", {
    body: { ...LB, name: "forgotten" },
    headers: { "idempotency-key": "k3" },
  });
  const notStored = await h.call("POST", "/v1/load-balancers", {
    body: { ...LB, name: "forgotten" },
    headers: { "idempotency-key": "k3" },
  });
  assert.equal(notStored.status, 409);
  assert.equal(notStored.body.reason, "idempotency_key_answer_not_stored");
});

Deno.test("a second request with a key whose first request still runs gets 409 idempotency_key_in_progress", async () => {
  const h = harness();
  h.sim.faults.add({ operation: "create_load_balancer", latency_ms: 300, times: 1 });
  const headers = { "idempotency-key": "slow-create" };
  const slow = h.call("POST", "/v1/load-balancers", { body: LB, headers });
  await new Promise((resolve) => setTimeout(resolve, 50));
  const second = await h.call("POST", "/v1/load-balancers", { body: LB, headers });
  assert.equal(second.status, 409);
  assert.equal(second.body.reason, "idempotency_key_in_progress");
  assert.equal(second.headers.get("retry-after"), "1");
  assert.equal((await slow).status, 202);
  const third = await h.call("POST", "/v1/load-balancers", { body: LB, headers });
  assert.equal(third.headers.get("idempotent-replayed"), "true");
  assert.equal(h.sim.loadBalancers.items.size, 1);
});

Deno.test("the control API adds, changes and removes servers, and logs and counts requests", async () => {
  const h = harness();
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

Deno.test("a scripted fault hits the named operation the given number of times", async () => {
  const h = harness();
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
