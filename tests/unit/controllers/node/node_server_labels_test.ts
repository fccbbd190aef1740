/**
 * `--node-labels-from-server` over fakes (fast tier): a joining node gets its server's selected labels with its
 * initialisation; a change of the server's labels (through the simulator's control API, as the console makes it)
 * reaches the node with the next server list, without any request beyond the lists and the interface read the
 * server's new version causes anyway; an invalid label is skipped with one Warning naming it; labels outside
 * `server.ankra.cloud` are never touched. Against a real API server and the controller process:
 * tests/integration/node_server_labels_test.ts.
 */
import assert from "node:assert/strict";
import { parseServerLabelSelector } from "../../../../lib/provider/node/server_labels.ts";
import { UNINITIALIZED_TAINT } from "../../../../lib/provider/node/node_plan.ts";
import { moreReads } from "../../../support/cloud/cloud_passes.ts";
import { eventually } from "../../../support/wait/eventually.ts";
import { fakeNode } from "../../../support/fakes/fake_cluster.ts";
import { startFakeNodeControllers } from "../../../support/fakes/fake_node_controllers.ts";
import { serverSeed } from "../../../support/cloud/simulator.ts";

Deno.test("server labels follow the server: copied at initialisation, changed and removed with the next list", async () => {
  await using env = await startFakeNodeControllers({
    serverLabels: parseServerLabelSelector("pool,team.example/*,note"),
  });
  const { sim, url } = env.cloud.simulator;
  const server = sim.world.addServer(
    serverSeed({ hostname: "w1", zone: "de-fsn1", labels: { pool: "gpu", "team.example/tier": "gold", rack: "r1" } }),
  );
  env.nodes.put(fakeNode("w1", {
    taints: [{ key: UNINITIALIZED_TAINT, effect: "NoSchedule" }],
    providerID: undefined,
    labels: { "pool": "mine", "example.com/owner": "ops" },
  }));
  const labels = () => env.nodes.store.get("w1")?.labels ?? {};
  await eventually(() => labels()["server.ankra.cloud/pool"] === "gpu", { what: "copied at initialisation" });
  assert.equal(labels()["team.example.server.ankra.cloud/tier"], "gold");
  assert.equal(labels()["server.ankra.cloud/rack"], undefined, "not selected");
  assert.equal(env.writes.of("initialise").length, 1, "in the initialisation's one write");
  assert.equal(env.writes.of("patchLabels").length, 0);

  const change = async (next: Record<string, string>) => {
    const answer = await fetch(`${url}/_simulator/servers/${server.id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ labels: next }),
    });
    assert.equal(answer.status, 200, await answer.text());
  };
  const before = { lists: sim.count("list_servers"), gets: sim.count("get_server") };
  await change({ pool: "cpu", note: "two words" });
  await eventually(() => labels()["server.ankra.cloud/pool"] === "cpu", { what: "the change on the node" });
  assert.equal(labels()["team.example.server.ankra.cloud/tier"], undefined, "gone from the server: removed");
  assert.equal(labels()["pool"], "mine", "a label outside the domain is never touched");
  assert.equal(labels()["example.com/owner"], "ops");
  const warning = await eventually(
    () => env.eventsOf("w1").find((e) => e.reason === "InvalidServerLabel"),
    { what: "the Warning naming the invalid label" },
  );
  assert.equal(warning.type, "Warning");
  assert.match(warning.message, new RegExp(`server label note="two words" of server de-fsn1/${server.id}`));
  assert.equal(labels()["server.ankra.cloud/note"], undefined);
  assert.equal(sim.count("get_server"), before.gets, "read from the server list: no get_server");
  assert.ok(sim.count("list_servers") - before.lists <= 3, "within a list or two of the change");

  // Two more lists: the Warning is not repeated for the same label, and nothing is written again.
  const writes = env.writes.of("patchLabels").length;
  await moreReads(sim, { operation: "list_servers" }, { count: 2 });
  assert.equal(env.eventsOf("w1").filter((e) => e.reason === "InvalidServerLabel").length, 1);
  assert.equal(env.writes.of("patchLabels").length, writes, "in step: no write");

  await change({});
  await eventually(() => labels()["server.ankra.cloud/pool"] === undefined, { what: "the last copy removed" });
  assert.deepEqual(
    Object.keys(labels()).filter((key) => key.includes("server.ankra.cloud")),
    [],
    "no label of the controller's left",
  );
});
