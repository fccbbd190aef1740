/**
 * `--node-labels-from-server` end to end: the controller as a separate process (`main.ts`, the flag read from its
 * command line) against the real kube-apiserver and the simulator. A joining Node gets its server's selected labels
 * under `server.ankra.cloud` with its initialisation; labels changed and removed on the server (through the
 * simulator's control API, as the console changes them) are changed and removed on the Node within a few server lists,
 * read from the lists alone (no `get_server`); labels the controller did not write — under other prefixes, set before
 * and after — are never touched; a label that cannot be a Kubernetes label is skipped with a Warning
 * `InvalidServerLabel` naming it. The same rules over fakes: tests/unit/controllers/node/node_server_labels_test.ts.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { startReplica, stop } from "../support/controller/controller_process.ts";
import { eventually } from "../support/wait/eventually.ts";
import { kubeletNode, kubeOk } from "../support/http/kube_http.ts";
import { deleteNode, eventsFor, getNode, tainted, UNINITIALIZED } from "../support/controller/node_fixtures.ts";
import { serverSeed, startTestCloud, TEST_TOKEN, testSeed } from "../support/cloud/simulator.ts";

const LIST_PERIOD_MS = 2_000;

Deno.test("server labels on a Node: copied, changed and removed with the server's; others untouched; an invalid one skipped with a Warning", async () => {
  const plane = testControlPlane();
  const name = uniqueName("labelled");
  await using cloud = await startTestCloud(testSeed({
    servers: [serverSeed({
      hostname: name,
      zone: "de-fsn1",
      interfaces: [{ network_id: "net-1" }],
      labels: { pool: "gpu", "team.example/tier": "gold", rack: "r7" },
    })],
  }));
  const { sim, url } = cloud.simulator;
  const server = [...sim.world.servers.values()].find((s) => s.hostname === name)!;
  const replica = await startReplica([
    "--leader-elect=false",
    "--secure-port=0",
    "--controllers=cloud-node",
    `--server-list-period=${LIST_PERIOD_MS / 1000}s`,
    "--node-labels-from-server=pool,team.example/*,note",
  ], { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_API_URL: url });
  const labels = async () => (await getNode(name)).metadata?.labels ?? {};
  const setServerLabels = async (next: Record<string, string>) => {
    const answer = await fetch(`${url}/_simulator/servers/${server.id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ labels: next }),
    });
    assert.equal(answer.status, 200, await answer.text());
    return performance.now();
  };
  try {
    await replica.waitFor(/starting controllers/);
    await kubeOk(plane, "POST", "/api/v1/nodes", {
      body: kubeletNode(name, { labels: { pool: "mine", "example.com/owner": "ops" } }),
    });
    await eventually(async () => !tainted(await getNode(name), UNINITIALIZED), 20_000, "initialised");
    let now = await labels();
    assert.equal(now["server.ankra.cloud/pool"], "gpu", "copied with the initialisation");
    assert.equal(now["team.example.server.ankra.cloud/tier"], "gold");
    assert.equal(now["server.ankra.cloud/rack"], undefined, "not selected: not copied");
    assert.equal(now["pool"], "mine", "the user's label of the same key, another prefix: untouched");

    // A label the user adds later, and one under the controller's domain by hand.
    await kubeOk(plane, "PATCH", `/api/v1/nodes/${name}`, {
      patch: "merge",
      body: { metadata: { labels: { "team.example/extra": "x", "server.ankra.cloud/by-hand": "y" } } },
    });

    const gets = sim.count("get_server");
    const before = { lists: sim.count("list_servers"), legs: sim.count("list_server_interfaces") };
    const changedAt = await setServerLabels({ pool: "cpu", note: "two words", rack: "r8" });
    await eventually(async () => (await labels())["server.ankra.cloud/pool"] === "cpu", 20_000, "the change");
    const seconds = (performance.now() - changedAt) / 1000;
    console.log(
      `a server label change reached the Node in ${seconds.toFixed(2)} s (server list period 2 s), after ` +
        `${sim.count("list_servers") - before.lists} list_servers and ` +
        `${sim.count("list_server_interfaces") - before.legs} list_server_interfaces (the server's new version)`,
    );
    now = await labels();
    assert.equal(now["team.example.server.ankra.cloud/tier"], undefined, "removed from the server: removed");
    assert.equal(now["server.ankra.cloud/by-hand"], undefined, "the controller's domain: a hand-made label goes");
    assert.equal(now["server.ankra.cloud/note"], undefined, "invalid: not copied");
    assert.equal(now["team.example/extra"], "x", "labels the controller did not write stay");
    assert.equal(now["example.com/owner"], "ops");
    assert.equal(now["pool"], "mine");
    assert.equal(now["kubernetes.io/hostname"], name);
    const warning = await eventually(
      async () => (await eventsFor(name)).find((e) => e.reason === "InvalidServerLabel"),
      10_000,
      "the InvalidServerLabel Warning",
    );
    assert.equal(warning.type, "Warning");
    assert.equal(warning.source?.component, "cloud-node-controller");
    assert.match(
      warning.message!,
      new RegExp(`^server label note="two words" of server de-fsn1/${server.id} is not copied to the node: its value`),
    );
    assert.equal(sim.count("get_server"), gets, "read from the server list: no get_server");

    await setServerLabels({ rack: "r8" });
    await eventually(async () => (await labels())["server.ankra.cloud/pool"] === undefined, 20_000, "removed");
    now = await labels();
    assert.deepEqual(Object.keys(now).filter((key) => key.includes("server.ankra.cloud")), []);
    assert.equal(now["pool"], "mine");
    assert.equal(now["team.example/extra"], "x");
  } finally {
    await stop(replica);
    await deleteNode(name);
  }
});
