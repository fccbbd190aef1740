/**
 * Node lifecycle end to end: NotReady nodes of shut-down servers are tainted, nodes of deleted servers are deleted
 * with proof only (never during an API outage, never another provider's), and a node going NotReady has its server
 * read at once. The real kube-apiserver, the Ankra Cloud simulator, the node controllers in-process.
 *
 * A NotReady node deleted once its server is gone (with `DeletingNode`) and another provider's NotReady node left
 * alone are tested over fakes (fast tier, tests/unit/controllers/node/node_controllers_test.ts); the decision for a `deleting` server in
 * tests/unit/provider/node/lifecycle_action_test.ts.
 */
import assert from "node:assert/strict";
import { uniqueName } from "../support/control_plane/control_plane.ts";
import { startNodeControllers } from "../support/controller/node_controllers.ts";
import { eventually } from "../support/wait/eventually.ts";
import { serverSeed } from "../support/cloud/simulator.ts";
import {
  createNode,
  deleteNode,
  failedListsSpanning,
  getNode,
  nodeExists,
  setReady,
  SHUTDOWN,
  tainted,
  UNINITIALIZED,
} from "../support/controller/node_fixtures.ts";

Deno.test("shut-down servers taint their NotReady nodes; the taint goes when the node is Ready again", async () => {
  await using env = await startNodeControllers();
  const name = uniqueName("stopped");
  const server = env.cloud.simulator.sim.world.addServer(serverSeed({ hostname: name, zone: "de-fsn1" }));
  await createNode(name);
  try {
    await eventually(async () => !tainted(await getNode(name), UNINITIALIZED));
    server.state = "stopped";
    await setReady(name, false);
    await eventually(async () => tainted(await getNode(name), SHUTDOWN), 10_000, "shutdown taint");
    const taint = (await getNode(name)).spec!.taints!.find((t) => t.key === SHUTDOWN)!;
    assert.equal(taint.effect, "NoSchedule");
    server.state = "started";
    await setReady(name, true);
    await eventually(async () => !tainted(await getNode(name), SHUTDOWN), 10_000, "shutdown taint removed");
    assert.ok(await nodeExists(name), "a stopped server's node is never deleted");
  } finally {
    await deleteNode(name);
  }
});

Deno.test("an API outage (errors, then hangs) while nodes are NotReady deletes nothing, and the view converges after", async () => {
  await using env = await startNodeControllers({ cloudTimeoutMs: 1_000 });
  const sim = env.cloud.simulator.sim;
  const name = uniqueName("outage");
  const server = sim.world.addServer(serverSeed({ hostname: name, zone: "de-fsn1" }));
  await createNode(name);
  try {
    await eventually(async () => !tainted(await getNode(name), UNINITIALIZED));
    await setReady(name, false);
    const phases: [fault: { status: number } | { hang: true }, answered: number, what: string][] = [
      [{ status: 500 }, 500, "500s prove nothing"],
      [{ status: 403 }, 403, "403s prove nothing"],
      [{ hang: true }, 0, "hangs prove nothing"],
    ];
    sim.world.servers.delete(server.id);
    for (const [fault, answered, what] of phases) {
      const from = sim.log.at(-1)?.seq ?? 0;
      sim.faults.clear();
      sim.faults.add({ operation: "*", ...fault, times: 0 });
      await failedListsSpanning(sim, answered, from);
      assert.ok(await nodeExists(name), what);
    }
    sim.faults.clear();
    await eventually(async () => !(await nodeExists(name)), 40_000, "node deleted after the outage");
  } finally {
    await deleteNode(name);
  }
});

Deno.test("a node that goes NotReady gets its server read at once: shut down → tainted in seconds, not a list period", async () => {
  // The shared server list runs once a minute here, as in production.
  await using env = await startNodeControllers({ serverListPeriodMs: 60_000, monitorPeriodMs: 1_000 });
  const sim = env.cloud.simulator.sim;
  const name = uniqueName("prompt");
  const server = sim.world.addServer(serverSeed({ hostname: name, zone: "de-fsn1" }));
  await createNode(name);
  try {
    await eventually(async () => !tainted(await getNode(name), UNINITIALIZED), 15_000);
    const reads = sim.count("get_server") + sim.count("list_servers");
    server.state = "stopped";
    const started = performance.now();
    await setReady(name, false);
    await eventually(async () => tainted(await getNode(name), SHUTDOWN), 10_000, "shutdown taint");
    const seconds = (performance.now() - started) / 1000;
    assert.ok(seconds < 5, `tainted ${seconds.toFixed(1)} s after going NotReady (the list period is 60 s)`);
    assert.ok(sim.count("get_server") + sim.count("list_servers") - reads <= 2, "one read for the transition");
    // Staying NotReady costs nothing more: three more lifecycle passes (a second apart) each see the node NotReady.
    const after = sim.count("get_server") + sim.count("list_servers");
    const passes = env.lifecyclePasses();
    await eventually(() => env.lifecyclePasses() >= passes + 3, 10_000, "three more lifecycle passes");
    assert.equal(
      sim.count("get_server") + sim.count("list_servers"),
      after,
      "no further reads while it stays NotReady",
    );
  } finally {
    await deleteNode(name);
  }
});
