/**
 * A server's announced stop or live migration on its Node, end to end: the controller as a separate process
 * (`main.ts`, `--server-list-period=2s`) against the real kube-apiserver and the simulator, the operation announced
 * through the simulator's control API as Ankra Cloud shows it (the server's `active_operation`, its state unchanged
 * for the operation's duration). A stop announced 20 s ahead is a Normal `ServerStopPlanned` on the Node within a
 * list period, read from the server list (no `get_server`), told once; once the server is stopped and the node
 * NotReady, the shutdown taint follows as it always did. A live migration is a `ServerMigrating` and nothing else: the
 * Node's labels, taints and addresses stay as they were.
 *
 * The same over fakes (the delete, the pending operation, unmanaged nodes): tests/unit/controllers/node/
 * planned_changes_test.ts; the rule in tests/unit/provider/node/planned_change_test.ts.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { type Replica, startReplica, stop } from "../support/controller/controller_process.ts";
import { eventually } from "../support/wait/eventually.ts";
import { kubeOk } from "../support/http/kube_http.ts";
import {
  deleteNode,
  eventsFor,
  getNode,
  passesAfterNextList,
  setReady,
  SHUTDOWN,
  tainted,
  UNINITIALIZED,
} from "../support/controller/node_fixtures.ts";
import { kubeletNode } from "../support/http/kube_http.ts";
import { serverSeed, startTestCloud, TEST_TOKEN, type TestCloud } from "../support/cloud/simulator.ts";

const LIST_PERIOD_MS = 2_000;

/** The controller process with both node controllers, a 2 s server list and a 1 s lifecycle pass. */
function startController(url: string): Promise<Replica> {
  return startReplica([
    "--leader-elect=false",
    "--secure-port=0",
    "--controllers=cloud-node,cloud-node-lifecycle",
    `--server-list-period=${LIST_PERIOD_MS / 1000}s`,
    "--node-monitor-period=1s",
  ], { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_API_URL: url });
}

/** A server `name` on net-1 and its Node as its kubelet registers it, once the controller has initialised it. */
async function initialisedNode(cloud: TestCloud, name: string) {
  const server = cloud.simulator.sim.world.addServer(
    serverSeed({ hostname: name, zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }),
  );
  await kubeOk(testControlPlane(), "POST", "/api/v1/nodes", { body: kubeletNode(name) });
  await eventually(async () => !tainted(await getNode(name), UNINITIALIZED), 20_000, `${name} initialised`);
  return server;
}

/** Announces `body`'s operation on server `id` through the simulator's control API; the operation's id. */
async function announce(url: string, id: string, body: Record<string, unknown>): Promise<string> {
  const answer = await fetch(`${url}/_simulator/servers/${id}/operations`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const document = await answer.json();
  assert.equal(answer.status, 201, JSON.stringify(document));
  return document.operation.id;
}

/** The events about Node `name` with `reason`. */
async function eventsWith(name: string, reason: string) {
  return (await eventsFor(name)).filter((e) => e.reason === reason);
}

Deno.test("a stop announced 20 s ahead is ServerStopPlanned on the Node within a list period; the shutdown taint follows the stopped server", async () => {
  await using cloud = await startTestCloud();
  const { sim, url } = cloud.simulator;
  const name = uniqueName("stopping");
  const replica = await startController(url);
  try {
    await replica.waitFor(/starting controllers/);
    const server = await initialisedNode(cloud, name);
    const gets = sim.count("get_server");
    const announcedAt = performance.now();
    const operation = await announce(url, server.id, { kind: "server.stop", duration_ms: 20_000 });
    const [told] = await eventually(
      async () => {
        const found = await eventsWith(name, "ServerStopPlanned");
        return found.length > 0 && found;
      },
      15_000,
      "ServerStopPlanned",
    );
    const seconds = (performance.now() - announcedAt) / 1000;
    console.log(`ServerStopPlanned ${seconds.toFixed(2)} s after the announcement (server list period 2 s)`);
    // The next server list shows it (one period at most), then the event is written.
    assert.ok(seconds < (2 * LIST_PERIOD_MS) / 1000 + 1, "told within a list period, while the server still runs");
    assert.equal(sim.world.servers.get(server.id)?.state, "started", "before the state changed");
    assert.equal(told.type, "Normal");
    assert.equal(told.source.component, "cloud-node-lifecycle-controller");
    assert.match(
      told.message,
      new RegExp(`^Ankra Cloud is about to stop server ${server.id} \\(operation ${operation}, server.stop, running `),
    );
    const node = await getNode(name);
    assert.ok(!tainted(node, SHUTDOWN), "nothing else yet: the taint follows the state, not the announcement");
    assert.equal(sim.count("get_server"), gets, "read from the server list alone");

    // The server stops 20 s after the announcement; its kubelet stops reporting.
    await eventually(() => sim.world.servers.get(server.id)?.state === "stopped", 30_000, "the server stopped");
    await setReady(name, false);
    await eventually(async () => tainted(await getNode(name), SHUTDOWN), 10_000, "shutdown taint");
    await passesAfterNextList(sim);
    const stopPlanned = await eventsWith(name, "ServerStopPlanned");
    assert.deepEqual(stopPlanned.map((e) => e.count ?? 1), [1], "told once, not every period");
  } finally {
    await stop(replica);
    await deleteNode(name);
  }
});

Deno.test("a live migration is ServerMigrating on the Node and nothing else changes", async () => {
  await using cloud = await startTestCloud();
  const { sim, url } = cloud.simulator;
  const zone = await fetch(`${url}/_simulator/zones/de-fsn1`, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ storage_backends: ["ceph"] }),
  });
  assert.equal(zone.status, 200, "the zone can live-migrate (Ankra Storage)");
  await zone.body?.cancel();
  const name = uniqueName("migrating");
  const replica = await startController(url);
  try {
    await replica.waitFor(/starting controllers/);
    const server = await initialisedNode(cloud, name);
    await passesAfterNextList(sim);
    const before = await getNode(name);
    const reasons = async () => (await eventsFor(name)).map((e) => `${e.reason} ${e.count ?? 1}`).sort();
    const eventsBefore = await reasons();
    const operation = await announce(url, server.id, { kind: "server.migrate", duration_ms: 6_000 });
    const [told] = await eventually(
      async () => {
        const found = await eventsWith(name, "ServerMigrating");
        return found.length > 0 && found;
      },
      15_000,
      "ServerMigrating",
    );
    assert.equal(told.type, "Normal");
    assert.match(
      told.message,
      new RegExp(`operation ${operation}, server.migrate, running since .*: the node stays up$`),
    );
    await eventually(() => sim.world.operations.get(operation)?.status === "succeeded", 20_000, "migrated");
    await passesAfterNextList(sim);
    const after = await getNode(name);
    assert.deepEqual(after.metadata?.labels, before.metadata?.labels, "labels as they were");
    assert.deepEqual(after.spec?.taints ?? [], before.spec?.taints ?? [], "taints as they were");
    assert.deepEqual(after.status?.addresses, before.status?.addresses, "addresses as they were");
    assert.equal(sim.world.servers.get(server.id)?.state, "started");
    assert.deepEqual(
      await reasons(),
      [...eventsBefore, "ServerMigrating 1"].sort(),
      "one event for the migration, nothing else",
    );
  } finally {
    await stop(replica);
    await deleteNode(name);
  }
});
