// deno-lint-ignore-file no-explicit-any -- answers are JSON documents checked field by field
/**
 * The simulator against the Ankra Cloud API contract (docs/simulator.md), state over time: pagination, load balancer
 * and edge life cycles on a fake clock, zone capabilities and the load balancer quota.
 */
import assert from "node:assert/strict";
import { contractHarness, LOAD_BALANCER_BODY, newLoadBalancer } from "../../support/cloud/simulator_contract.ts";

Deno.test("lists page with opaque cursors, limit 1-100 (default 50), newest first", async () => {
  const h = contractHarness({ settings: { load_balancer_quota: 200 } });
  const ids: string[] = [];
  for (let i = 0; i < 120; i++) ids.push((await newLoadBalancer(h, { ...LOAD_BALANCER_BODY, name: `lb-${i}` })).id);
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
  const h = contractHarness({ settings: { load_balancer_create_delay_ms: 5000, load_balancer_delete_delay_ms: 2000 } });
  const lb = await newLoadBalancer(h, { ...LOAD_BALANCER_BODY, public_ipv4: true });
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
  const h = contractHarness({ settings: { edge_sync_delay_ms: 3000 } });
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
  const h = contractHarness();
  const one = await h.valid("get_zone_capabilities", "GET", "/v1/zones/de-fsn2/capabilities");
  assert.deepEqual([one.stage, one.compute_nodes, one.features.load_balancer_ha], [1, 1, false]);
  const pair = await h.call("POST", "/v1/load-balancers", {
    body: { ...LOAD_BALANCER_BODY, zone: "de-fsn2", high_availability: true },
  });
  assert.equal(pair.status, 409);
  assert.match(String(pair.body.detail), /load_balancer_ha/);
  const single = await newLoadBalancer(h, { ...LOAD_BALANCER_BODY, zone: "de-fsn2" });
  assert.equal(single.high_availability, false, "absent high_availability follows the zone");
  await h.call("PATCH", "/_simulator/zones/de-fsn2", { body: { compute_nodes: 2 } });
  const two = await h.valid("get_zone_capabilities", "GET", "/v1/zones/de-fsn2/capabilities");
  assert.equal(two.features.load_balancer_ha, true);
  assert.equal((await h.call("GET", "/v1/zones/nowhere/capabilities")).status, 404);
  const elsewhere = await h.call("POST", "/v1/load-balancers", {
    body: { ...LOAD_BALANCER_BODY, network_id: "net-missing" },
  });
  assert.equal(elsewhere.status, 404);
});

Deno.test("the account holds at most 5 load balancers (422 quota_exceeded) until the quota is raised", async () => {
  const h = contractHarness({ settings: { load_balancer_quota: 5 } });
  for (let i = 0; i < 5; i++) await newLoadBalancer(h, { ...LOAD_BALANCER_BODY, name: `lb-${i}` });
  const sixth = await h.call("POST", "/v1/load-balancers", { body: { ...LOAD_BALANCER_BODY, name: "lb-5" } });
  assert.equal(sixth.status, 422);
  assert.equal(sixth.body.reason, "quota_exceeded");
  await h.call("PATCH", "/_simulator/settings", { body: { load_balancer_quota: 6 } });
  assert.equal(
    (await h.call("POST", "/v1/load-balancers", { body: { ...LOAD_BALANCER_BODY, name: "lb-5" } })).status,
    202,
  );
});
