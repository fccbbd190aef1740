/**
 * The simulator against the Ankra Cloud API contract (docs/simulator.md), requests and answers: bodies the API refuses
 * get the documented 400 naming the field, member addresses are checked against the network, and every answer of
 * every operation validates against the client's schemas.
 */
import assert from "node:assert/strict";
import { contractHarness, LOAD_BALANCER_BODY, newLoadBalancer } from "../../support/cloud/simulator_contract.ts";

Deno.test("request bodies the API refuses are refused with 400 naming the field", async () => {
  const h = contractHarness();
  const lb = await newLoadBalancer(h);
  const backend = (await h.valid("create_load_balancer_backend", "POST", `/v1/load-balancers/${lb.id}/backends`, {
    name: "tcp-80",
    mode: "tcp",
  })).backend;
  const cases: [string, string, unknown, RegExp][] = [
    ["POST", "/v1/load-balancers", { ...LOAD_BALANCER_BODY, colour: "red" }, /field colour: is not a known field/],
    ["POST", "/v1/load-balancers", { zone: "de-fsn1", network_id: "net-1" }, /field name: is required/],
    ["POST", "/v1/load-balancers", { ...LOAD_BALANCER_BODY, name: "x".repeat(65) }, /field name/],
    ["POST", "/v1/load-balancers", { ...LOAD_BALANCER_BODY, public_ipv4: "yes" }, /field public_ipv4/],
    [
      "POST",
      "/v1/load-balancers",
      { ...LOAD_BALANCER_BODY, labels: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, "v"])) },
      /at most 32 labels/,
    ],
    ["POST", "/v1/load-balancers", { ...LOAD_BALANCER_BODY, labels: { "-bad": "v" } }, /field labels/],
    ["POST", "/v1/load-balancers", { ...LOAD_BALANCER_BODY, network_id: "" }, /field network_id/],
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
  const h = contractHarness({
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
  const h = contractHarness({
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
  const lb = await newLoadBalancer(h, { ...LOAD_BALANCER_BODY, labels: { a: "b" } });
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
