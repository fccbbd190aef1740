/**
 * A server's announced stop, delete or live migration on its Node, over fakes (fast tier): the lifecycle controller
 * tells each once per operation with a Normal event (`ServerStopPlanned`, `ServerDeletePlanned`, `ServerMigrating`),
 * read from the shared server list alone, and does nothing else to the Node for it; the shared view answers "is this
 * node's server about to go down, since when, which operation" for the other controllers.
 *
 * The same against a real API server and the controller process: tests/integration/planned_server_changes_test.ts.
 */
import assert from "node:assert/strict";
import { SHUTDOWN_TAINT } from "../../../../lib/provider/node/node_plan.ts";
import { moreReads } from "../../../support/cloud/cloud_passes.ts";
import { eventually } from "../../../support/wait/eventually.ts";
import { fakeNode } from "../../../support/fakes/fake_cluster.ts";
import { startFakeNodeControllers } from "../../../support/fakes/fake_node_controllers.ts";
import { serverSeed } from "../../../support/cloud/simulator.ts";

type Env = Awaited<ReturnType<typeof startFakeNodeControllers>>;

/** A started server `name` and its initialised, Ready Node. */
function serverAndNode(env: Env, name: string, extra: Parameters<typeof fakeNode>[1] = {}) {
  const server = env.cloud.simulator.sim.world.addServer(serverSeed({ hostname: name, zone: "de-fsn1" }));
  env.nodes.put(fakeNode(name, { providerID: `ankracloud://de-fsn1/${server.id}`, ...extra }));
  return server;
}

/** Resolves once the node controller has brought each of `names` up to date (addresses, labels): its writes so far. */
async function settled(env: Env, ...names: string[]): Promise<number> {
  const done = (name: string) => env.writes.writes.some((w) => w.object === name && w.kind === "patchLabels");
  await eventually(() => names.every(done), { what: "the nodes brought up to date" });
  return env.writes.writes.length;
}

/** Announces an operation on `serverId` through the simulator's control API; the operation's id. */
async function announce(env: Env, serverId: string, body: Record<string, unknown>): Promise<string> {
  const answer = await fetch(`${env.cloud.simulator.url}/_simulator/servers/${serverId}/operations`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const document = await answer.json();
  assert.equal(answer.status, 201, JSON.stringify(document));
  return document.operation.id;
}

/** The lifecycle events about Node `name`. */
function lifecycleEventsOf(env: Env, name: string) {
  return env.lifecycleEvents.events.filter((e) => e.object === `Node ${name}`);
}

Deno.test("a planned stop is told once on the Node, from the list alone; the taint still waits for the stopped server", async () => {
  await using env = await startFakeNodeControllers({ serverListPeriodMs: 200 });
  const { sim } = env.cloud.simulator;
  const server = serverAndNode(env, "worker-stop");
  const quiet = serverAndNode(env, "worker-quiet");
  const writes = await settled(env, "worker-stop", "worker-quiet");
  const gets = sim.count("get_server");
  const operation = await announce(env, server.id, { kind: "server.stop", duration_ms: 1500, transition_ms: 300 });
  await eventually(() => lifecycleEventsOf(env, "worker-stop").length > 0, { what: "ServerStopPlanned" });
  const [told] = lifecycleEventsOf(env, "worker-stop");
  assert.equal(told.type, "Normal");
  assert.equal(told.reason, "ServerStopPlanned");
  assert.match(
    told.message,
    new RegExp(`^Ankra Cloud is about to stop server ${server.id} \\(operation ${operation}, `),
  );

  const change = env.view.plannedChange({ providerID: `ankracloud://de-fsn1/${server.id}` });
  assert.deepEqual([change?.kind, change?.operationKind, change?.operationId], ["leaving", "server.stop", operation]);
  assert.ok(change && change.seenAtMs <= Date.now(), "seen by this process");
  await moreReads(sim, { operation: "list_servers" }, { count: 2 });
  const later = env.view.plannedChange({ providerID: `ankracloud://de-fsn1/${server.id}` });
  assert.equal(later?.seenAtMs, change!.seenAtMs, "first seen once, not at every list");
  assert.equal(env.view.plannedChange({ providerID: `ankracloud://de-fsn1/${quiet.id}` }), undefined);
  assert.deepEqual(env.writes.writes.slice(writes), [], "an announcement writes nothing to the Node");

  // The stop happens: the kubelet stops reporting, and the shutdown taint follows the stopped server as before.
  // Each of the view's lists moves the simulator's clock on.
  await eventually(() => sim.world.servers.get(server.id)?.state === "stopped", { what: "the server stopped" });
  env.nodes.update("worker-stop", (node) => (node.ready = "False"));
  await eventually(() => env.nodes.store.get("worker-stop")?.taints.some((t) => t.key === SHUTDOWN_TAINT), {
    what: "the shutdown taint",
  });
  await moreReads(sim, { operation: "list_servers" }, { count: 1 });
  assert.equal(env.view.plannedChange({ providerID: `ankracloud://de-fsn1/${server.id}` }), undefined, "finished");
  assert.deepEqual(lifecycleEventsOf(env, "worker-stop").map((e) => e.reason), ["ServerStopPlanned"], "told once");
  assert.deepEqual(lifecycleEventsOf(env, "worker-quiet"), []);
  assert.ok(sim.count("get_server") - gets <= 1, "read from the list (one get_server at most: the node went NotReady)");
});

Deno.test("a live migration is told once and changes nothing; a delete after it is told as ServerDeletePlanned", async () => {
  await using env = await startFakeNodeControllers({ serverListPeriodMs: 200 });
  const { sim } = env.cloud.simulator;
  sim.world.zone("de-fsn1").storage_backends = ["ceph"];
  const server = serverAndNode(env, "worker-moving");
  const writes = await settled(env, "worker-moving");
  const migration = await announce(env, server.id, { kind: "server.migrate", duration_ms: 800 });
  await eventually(() => lifecycleEventsOf(env, "worker-moving").length > 0, { what: "ServerMigrating" });
  assert.equal(lifecycleEventsOf(env, "worker-moving")[0].reason, "ServerMigrating");
  assert.match(lifecycleEventsOf(env, "worker-moving")[0].message, new RegExp(`operation ${migration}, .*stays up$`));
  assert.equal(env.view.plannedChange({ providerID: `ankracloud://de-fsn1/${server.id}` })?.kind, "migrating");
  await eventually(async () => {
    await moreReads(sim, { operation: "list_servers" }, { count: 1 });
    return env.view.plannedChange({ providerID: `ankracloud://de-fsn1/${server.id}` }) === undefined;
  }, { what: "the migration over" });
  assert.equal(sim.world.servers.get(server.id)?.state, "started");
  assert.deepEqual(env.writes.writes.slice(writes), [], "nothing written for a migration");

  const deletion = await announce(env, server.id, { kind: "server.delete", duration_ms: 60_000, pending_ms: 500 });
  await eventually(() => lifecycleEventsOf(env, "worker-moving").length > 1, { what: "ServerDeletePlanned" });
  const deleting = lifecycleEventsOf(env, "worker-moving")[1];
  assert.equal(deleting.reason, "ServerDeletePlanned");
  assert.match(deleting.message, new RegExp(`operation ${deletion}, server.delete, (pending|running) since `));
  await moreReads(sim, { operation: "list_servers" }, { count: 3 });
  assert.deepEqual(
    lifecycleEventsOf(env, "worker-moving").map((e) => e.reason),
    ["ServerMigrating", "ServerDeletePlanned"],
    "each operation told once, whatever the passes and lists (pending, then running, is one operation)",
  );
});

Deno.test("an unmanaged node is not told; a node whose server has no operation is not either", async () => {
  await using env = await startFakeNodeControllers({ serverListPeriodMs: 200 });
  const { sim } = env.cloud.simulator;
  const unmanaged = serverAndNode(env, "machine", { labels: { "node.ankra.cloud/managed": "false" } });
  serverAndNode(env, "plain");
  await announce(env, unmanaged.id, { kind: "server.stop", duration_ms: 60_000 });
  await moreReads(sim, { operation: "list_servers" }, { count: 3 });
  assert.deepEqual(env.lifecycleEvents.events, []);
});
