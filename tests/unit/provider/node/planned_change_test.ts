/**
 * Which servers are about to go down, from their active operation (pure): an active stop or delete is a node leaving,
 * a live migration only worth an event, anything else nothing; how the client reads `active_operation` from a server
 * list (every kind kept, an unreadable operation costing the operation, not the server).
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { RESPONSE_SCHEMAS } from "../../../../lib/cloud/schemas.ts";
import {
  describePlannedChange,
  type PlannedChange,
  plannedChange,
  plannedChangeEvent,
  plannedChangeOfNode,
  serverLeaving,
} from "../../../../lib/provider/node/planned_change.ts";

const CREATED = "2026-11-30T10:00:00Z";
const STARTED = "2026-11-30T10:00:02Z";

/** Server `srv-1` as a list item, with `operation` (merged over a running server.stop op-1) as its active one. */
function serverItem(operation: Record<string, unknown> | null | undefined): Record<string, unknown> {
  const item: Record<string, unknown> = {
    id: "srv-1",
    zone: "de-fsn1",
    hostname: "worker-1",
    plan: "p",
    state: "started",
  };
  if (operation === null) item.active_operation = null;
  else if (operation !== undefined) {
    item.active_operation = {
      id: "op-1",
      kind: "server.stop",
      status: "running",
      server_id: "srv-1",
      error: "",
      created_at: CREATED,
      started_at: STARTED,
      finished_at: null,
      ...operation,
    };
  }
  return item;
}

/** Reads `items` as the client reads a `list_servers` page. */
function listed(...items: Record<string, unknown>[]) {
  return v.parse(RESPONSE_SCHEMAS.list_servers, { items, next_cursor: null }).items;
}

Deno.test("an active stop or delete is a node leaving, a live migration is not; since the operation started", () => {
  const cases: [Record<string, unknown>, Partial<PlannedChange> | undefined][] = [
    [{}, { kind: "leaving", operationKind: "server.stop", status: "running", since: STARTED }],
    [{ status: "pending", started_at: null }, { kind: "leaving", status: "pending", since: CREATED }],
    [{ kind: "server.delete" }, { kind: "leaving", operationKind: "server.delete" }],
    [{ kind: "server.delete", status: "pending" }, { kind: "leaving", status: "pending" }],
    [{ kind: "server.migrate" }, { kind: "migrating", operationKind: "server.migrate" }],
  ];
  for (const [operation, expected] of cases) {
    const [server] = listed(serverItem(operation));
    const change = plannedChange(server);
    assert.ok(change, JSON.stringify(operation));
    assert.deepEqual({ ...change, ...expected }, change, JSON.stringify(operation));
    assert.deepEqual([change.serverId, change.operationId], ["srv-1", "op-1"]);
  }
});

Deno.test("a node leaves while its stop or delete is announced and while its server is down, announced or not", () => {
  const cases: [string, Record<string, unknown> | null, boolean][] = [
    ["started", {}, true],
    ["started", { kind: "server.delete", status: "pending" }, true],
    ["started", { kind: "server.migrate" }, false],
    ["started", { status: "succeeded", finished_at: STARTED }, false],
    ["started", null, false],
    ["stopping", null, true],
    ["stopped", null, true],
    ["stopped", { status: "succeeded", finished_at: STARTED }, true],
    ["deleting", null, true],
    ["starting", null, false],
    ["error", null, false],
  ];
  for (const [state, operation, leaves] of cases) {
    const [server] = listed({ ...serverItem(operation), state });
    assert.equal(serverLeaving(server), leaves, `${state} with ${JSON.stringify(operation)}`);
  }
});

Deno.test("finished operations, other kinds, another server's operation and none announce nothing", () => {
  const quiet: (Record<string, unknown> | null | undefined)[] = [
    undefined,
    null,
    { status: "succeeded", finished_at: STARTED },
    { status: "failed", error: "the guest did not shut down" },
    { status: "cancelled" },
    { kind: "server.migrate", status: "succeeded" },
    { kind: "server.start" },
    { kind: "server.create" },
    { kind: "server.resize" },
    { kind: "load_balancer.create", server_id: null },
    { kind: "backup.create" },
    { kind: "server.stop_soon" },
    { kind: "SERVER.STOP" },
    { server_id: "srv-2" },
  ];
  for (const operation of quiet) {
    const [server] = listed(serverItem(operation));
    assert.equal(plannedChange(server), undefined, JSON.stringify(operation));
  }
});

Deno.test("the server list keeps every operation kind; an unreadable operation counts as none and the server stays", () => {
  const items = listed(
    serverItem({ kind: "kubernetes_cluster.upgrade" }),
    { ...serverItem({ status: "paused" }), id: "srv-2" },
    { ...serverItem({ id: 42 }), id: "srv-3" },
    { ...serverItem({}), id: "srv-4", active_operation: ["op-1"] },
    { ...serverItem({}), id: "srv-5", active_operation: "later" },
  );
  assert.deepEqual(items.map((s) => s.id), ["srv-1", "srv-2", "srv-3", "srv-4", "srv-5"], "no server is lost");
  assert.equal(items[0].active_operation?.kind, "kubernetes_cluster.upgrade", "an unknown kind is kept");
  for (const server of items.slice(1)) assert.equal(server.active_operation, null, server.id);
});

Deno.test("a node's planned change is its providerID's server's", () => {
  const [server] = listed(serverItem({}));
  const servers = { server: (id: string) => (id === "srv-1" ? server : undefined) };
  assert.equal(plannedChangeOfNode({ providerID: "ankracloud://de-fsn1/srv-1" }, servers)?.operationId, "op-1");
  assert.equal(plannedChangeOfNode({ providerID: "ankracloud://de-fsn1/srv-9" }, servers), undefined, "not listed");
  assert.equal(plannedChangeOfNode({}, servers), undefined, "no providerID");
  assert.equal(plannedChangeOfNode({ providerID: "hcloud://srv-1" }, servers), undefined, "another provider's");
});

Deno.test("the words and the Node event of each change", () => {
  const change = (operation: Record<string, unknown>) => plannedChange(listed(serverItem(operation))[0])!;
  assert.equal(describePlannedChange(change({})), "leaving: planned stop (operation op-1)");
  assert.equal(describePlannedChange(change({ kind: "server.delete" })), "leaving: planned delete (operation op-1)");
  assert.equal(describePlannedChange(change({ kind: "server.migrate" })), "live migration (operation op-1)");
  assert.deepEqual(plannedChangeEvent(change({})), {
    reason: "ServerStopPlanned",
    message: "Ankra Cloud is about to stop server srv-1 (operation op-1, server.stop, running since " +
      `${STARTED}): the node will shut down`,
  });
  assert.deepEqual(plannedChangeEvent(change({ kind: "server.delete", status: "pending", started_at: null })), {
    reason: "ServerDeletePlanned",
    message: "Ankra Cloud is about to delete server srv-1 (operation op-1, server.delete, pending since " +
      `${CREATED}): the node will go away`,
  });
  const migrating = plannedChangeEvent(change({ kind: "server.migrate" }));
  assert.equal(migrating.reason, "ServerMigrating");
  assert.match(migrating.message, /^Ankra Cloud is live-migrating server srv-1 \(.*\): the node stays up$/);
});
