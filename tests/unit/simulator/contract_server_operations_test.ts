// deno-lint-ignore-file no-explicit-any -- answers are JSON documents checked field by field
/**
 * The simulator's operations on servers against the API contract (docs/simulator.md), on a fake clock: a stop, a
 * delete and a live migration announced through the control API are the server's `active_operation` (in
 * `get_server`, `list_servers` and `list_operations?active=true`) for their duration before the server's state
 * changes; waiting `pending`, failing, one at a time; `list_operations`' query rules.
 */
import assert from "node:assert/strict";
import { contractHarness } from "../../support/cloud/simulator_contract.ts";

/** The `Operation` fields the API document requires. */
const REQUIRED_OPERATION_FIELDS = [
  "id",
  "kind",
  "server_id",
  "storage_id",
  "backup_id",
  "template_id",
  "router_id",
  "floating_ip_id",
  "status",
  "step",
  "step_index",
  "step_count",
  "error",
  "created_at",
  "started_at",
  "finished_at",
  "deadline_at",
];

/** A harness with server `srv-a` (started, in de-fsn1) and helpers over it. */
async function withServer(settings: Record<string, unknown> = {}) {
  const h = contractHarness({
    settings,
    servers: [{ id: "srv-a", hostname: "worker-a", zone: "de-fsn1" }, {
      id: "srv-b",
      hostname: "worker-b",
      zone: "de-fsn1",
    }],
  });
  const announce = (body: Record<string, unknown>, id = "srv-a") =>
    h.call("POST", `/_simulator/servers/${id}/operations`, { body });
  const server = async (id = "srv-a") => (await h.valid("get_server", "GET", `/v1/servers/${id}`)).server;
  const listed = async (id = "srv-a") =>
    (await h.valid("list_servers", "GET", "/v1/servers")).items.find((s: any) => s.id === id);
  const active = async (query = "") =>
    (await h.valid("list_operations", "GET", `/v1/operations?active=true${query}`)).items as any[];
  await Promise.resolve();
  return { h, announce, server, listed, active };
}

/** Asserts `doc` is a complete `Operation` document (every required field present). */
function assertOperationDocument(doc: any): void {
  assert.ok(doc, "an operation document");
  for (const field of REQUIRED_OPERATION_FIELDS) assert.ok(field in doc, `operation field ${field}`);
}

Deno.test("a stop is announced for its duration, then the server is stopping, then stopped; the operation succeeds", async () => {
  const { h, announce, server, listed, active } = await withServer({ server_transition_delay_ms: 2000 });
  const reply = await announce({ kind: "server.stop", duration_ms: 20_000 });
  assert.equal(reply.status, 201, JSON.stringify(reply.body));
  const op = reply.body.operation as any;
  assert.deepEqual([op.kind, op.status, op.server_id], ["server.stop", "running", "srv-a"]);

  const announced = await server();
  assert.equal(announced.state, "started", "the state does not change yet");
  assertOperationDocument(announced.active_operation);
  assert.equal(announced.active_operation.id, op.id);
  assert.equal(announced.active_operation.step, "scheduled");
  assert.equal(announced.desired_power, "stopped", "the stop asked for is the desired power at once");
  assert.equal((await listed()).active_operation.id, op.id, "the server list carries it too");
  assert.equal((await listed("srv-b")).active_operation, null, "another server has none");
  assert.deepEqual((await active("&kind=server.stop")).map((o) => o.id), [op.id]);
  assert.deepEqual(await active("&kind=server.delete"), []);

  h.advance(19_999);
  assert.equal((await server()).state, "started");
  h.advance(1);
  const stopping = await server();
  assert.equal(stopping.state, "stopping");
  assert.equal(stopping.active_operation.step, "power_off");
  assert.equal(stopping.active_operation.step_index, 2);
  assert.equal(stopping.active_operation.step_count, 3);
  h.advance(2000);
  const stopped = await server();
  assert.deepEqual([stopped.state, stopped.active_operation], ["stopped", null]);
  assert.deepEqual(await active(), [], "no longer active");
  const finished = (await h.valid("get_operation", "GET", `/v1/operations/${op.id}`)).operation;
  assertOperationDocument(finished);
  assert.equal(finished.status, "succeeded");
  assert.equal(finished.finished_at, "2026-11-30T10:00:22.000Z");
  assert.deepEqual(finished.events.map((e: any) => e.kind), ["started", "step", "finished"]);
});

Deno.test("a delete is announced, then the server is deleting, then gone (404)", async () => {
  const { h, announce, server, active } = await withServer();
  const op = (await announce({ kind: "server.delete", duration_ms: 5000, transition_ms: 1000 })).body.operation as any;
  assert.equal((await server()).active_operation.kind, "server.delete");
  assert.deepEqual((await active("&kind=server.delete")).map((o) => o.id), [op.id]);
  h.advance(5000);
  assert.equal((await server()).state, "deleting");
  h.advance(1000);
  assert.equal((await h.call("GET", "/v1/servers/srv-a")).status, 404);
  const ids = (await h.valid("list_servers", "GET", "/v1/servers")).items.map((s: any) => s.id);
  assert.deepEqual(ids, ["srv-b"]);
  assert.equal((await h.valid("get_operation", "GET", `/v1/operations/${op.id}`)).operation.status, "succeeded");
});

Deno.test("a live migration needs the zone's live_migration; the server stays started and the operation succeeds", async () => {
  const { h, announce, server } = await withServer({ server_operation_delay_ms: 3000 });
  const refused = await announce({ kind: "server.migrate" });
  assert.equal(refused.status, 409);
  assert.match(String(refused.body.detail), /zone de-fsn1 cannot live-migrate servers: live_migration is missing/);
  const zone = await h.call("PATCH", "/_simulator/zones/de-fsn1", { body: { storage_backends: ["ceph"] } });
  assert.equal((zone.body.capabilities as any).features.live_migration, true);
  const op = (await announce({ kind: "server.migrate" })).body.operation as any;
  assert.equal((await server()).active_operation.kind, "server.migrate");
  h.advance(2999);
  assert.deepEqual([(await server()).state, (await server()).active_operation.id], ["started", op.id]);
  h.advance(1);
  const after = await server();
  assert.deepEqual([after.state, after.active_operation], ["started", null], "settings' delay: 3 s");
  assert.equal((await h.valid("get_operation", "GET", `/v1/operations/${op.id}`)).operation.status, "succeeded");
});

Deno.test("an operation asked to wait is pending (not started) and active; one made to fail leaves the server as it was", async () => {
  const { h, announce, server, active } = await withServer();
  const op = (await announce({ kind: "server.stop", pending_ms: 1000, duration_ms: 4000 })).body.operation as any;
  const pending = (await server()).active_operation;
  assert.deepEqual([pending.status, pending.started_at, pending.step], ["pending", null, "pending"]);
  assert.deepEqual((await active()).map((o) => o.status), ["pending"]);
  h.advance(1000);
  const running = (await server()).active_operation;
  assert.deepEqual([running.status, running.started_at], ["running", "2026-11-30T10:00:01.000Z"]);
  h.advance(4000);
  assert.equal((await server()).state, "stopping", "4 s after it started running");
  assert.equal((await h.valid("get_operation", "GET", `/v1/operations/${op.id}`)).operation.status, "running");

  const failing = (await announce({ kind: "server.stop", duration_ms: 2000, outcome: "failed" }, "srv-b")).body
    .operation as any;
  h.advance(2000);
  const b = await server("srv-b");
  assert.deepEqual([b.state, b.active_operation], ["started", null]);
  const failed = (await h.valid("get_operation", "GET", `/v1/operations/${failing.id}`)).operation;
  assert.equal(failed.status, "failed");
  assert.match(failed.error, /did not shut down/);
  const listedFailed = await h.valid("list_operations", "GET", "/v1/operations?status=failed");
  assert.deepEqual(listedFailed.items.map((o: any) => o.id), [failing.id]);
});

Deno.test("a server has one operation at a time; impossible operations and bad requests are refused naming why", async () => {
  const { h, announce } = await withServer();
  const first = (await announce({ kind: "server.stop", duration_ms: 10_000 })).body.operation as any;
  const second = await announce({ kind: "server.delete" });
  assert.equal(second.status, 409);
  assert.match(String(second.body.detail), new RegExp(`already has operation ${first.id} \\(server.stop, running\\)`));
  h.advance(11_000);
  const again = await announce({ kind: "server.stop" });
  assert.equal(again.status, 409);
  assert.match(String(again.body.detail), /server srv-a is stopped: only a running server can be stopped/);
  assert.equal((await announce({ kind: "server.delete", duration_ms: 0 })).status, 201, "a stopped server is deleted");
  for (
    const body of [{ kind: "server.reboot" }, { kind: "server.stop", duration_ms: -1 }, { kind: "server.stop", x: 1 }]
  ) {
    assert.equal((await announce(body, "srv-b")).status, 400, JSON.stringify(body));
  }
  assert.equal((await announce({ kind: "server.stop" }, "srv-nope")).status, 404);
});

Deno.test("list_operations: newest first, 1-200 per page with cursors, status not combinable with active=true", async () => {
  const { h, announce } = await withServer();
  await announce({ kind: "server.stop", duration_ms: 1000 });
  await announce({ kind: "server.stop", duration_ms: 1000 }, "srv-b");
  h.advance(2000);
  const all = await h.valid("list_operations", "GET", "/v1/operations?limit=1");
  assert.equal(all.items.length, 1);
  assert.equal(all.items[0].server_id, "srv-b", "newest first");
  const next = await h.valid("list_operations", "GET", `/v1/operations?limit=1&cursor=${all.next_cursor}`);
  assert.deepEqual([next.items[0].server_id, next.next_cursor], ["srv-a", null]);
  const finished = await h.valid("list_operations", "GET", "/v1/operations?active=false&kind=server.stop");
  assert.equal(finished.items.length, 2, "active=false: those that have finished");
  assert.equal((await h.call("GET", "/v1/operations?limit=200")).status, 200);
  for (const bad of ["?limit=201", "?status=done", "?status=running&active=true", "?active=yes", "?kind=Stop"]) {
    const reply = await h.call("GET", `/v1/operations${bad}`);
    assert.equal(reply.status, 400, bad);
    assert.match(String(reply.body.detail), /^query (limit|status|active|kind)/, bad);
  }
});
