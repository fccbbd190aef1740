/**
 * The node controllers' passes over fakes (fast tier): plain-object stores and writers on the Kubernetes side, the
 * shared cloud view over the in-process simulator on the Ankra side. A node joining is initialised in one write
 * (providerID, topology labels, the uninitialized taint gone) after its addresses, with `Synced`; a node of an unknown
 * hostname keeps its taint with one `InstanceNotFound` Warning; a NotReady node whose server is stopped is tainted,
 * and one whose server is gone is deleted, with `DeletingNode`.
 *
 * The same behaviours against a real API server are in tests/integration/node_initialisation_test.ts and
 * tests/integration/node_lifecycle_test.ts.
 */
import assert from "node:assert/strict";
import { CloudView } from "../../../lib/controllers/cloud_view.ts";
import { NodeController } from "../../../lib/controllers/node_controller.ts";
import { NodeLifecycleController } from "../../../lib/controllers/node_lifecycle_controller.ts";
import type { SlimNode } from "../../../lib/kube/slim.ts";
import { SHUTDOWN_TAINT, UNINITIALIZED_TAINT } from "../../../lib/provider/node_plan.ts";
import { eventually } from "../../support/eventually.ts";
import { fakeNode, FakeNodeWriter, FakeStore, RecordingEvents } from "../../support/fake_cluster.ts";
import { serverSeed, startTestCloud, testSeed } from "../../support/simulator.ts";

async function startNodeControllers() {
  const cloud = await startTestCloud(testSeed());
  const nodes = new FakeStore<SlimNode>((node) => node.name);
  const writes = new FakeNodeWriter(nodes);
  const nodeEvents = new RecordingEvents();
  const lifecycleEvents = new RecordingEvents();
  const view = new CloudView(cloud.client, { refreshPeriodMs: 500, minRefreshIntervalMs: 100, confirmAfterMs: 300 });
  const stop = new AbortController();
  const runs = [
    view.run(stop.signal),
    new NodeController({
      writes,
      nodes,
      view,
      events: nodeEvents,
      refreshPeriodMs: 60_000,
      workers: 2,
      retryBaseMs: 100,
    }).run(stop.signal),
    new NodeLifecycleController({ writes, nodes, view, events: lifecycleEvents, periodMs: 100 }).run(stop.signal),
  ];
  return {
    cloud,
    nodes,
    writes,
    nodeEvents,
    lifecycleEvents,
    async [Symbol.asyncDispose]() {
      stop.abort();
      await Promise.all(runs);
      await cloud[Symbol.asyncDispose]();
    },
  };
}

const TAINTED = { taints: [{ key: UNINITIALIZED_TAINT, effect: "NoSchedule" }], providerID: undefined };

Deno.test("a joining node is initialised in one write after its addresses: providerID, labels, taint gone, Synced", async () => {
  await using env = await startNodeControllers();
  const server = env.cloud.simulator.sim.world.addServer(serverSeed({
    hostname: "worker-1",
    zone: "de-fsn1",
    plan: "cx-4",
    interfaces: [{ network_id: "net-1", address: "10.0.0.9" }],
  }));
  env.nodes.put(fakeNode("worker-1", { ...TAINTED, labels: {}, ready: "False" }));
  await eventually(() => env.writes.of("initialise").length === 1, { what: "the initialisation" });
  const node = env.nodes.store.get("worker-1")!;
  assert.equal(node.providerID, `ankracloud://de-fsn1/${server.id}`);
  assert.deepEqual(node.taints, [], "the uninitialized taint is gone");
  assert.equal(node.labels["node.kubernetes.io/instance-type"], "cx-4");
  assert.equal(node.labels["topology.kubernetes.io/zone"], "de-fsn1");
  assert.equal(node.labels["topology.kubernetes.io/region"], "eu-central");
  assert.deepEqual(
    node.addresses.map((a) => `${a.type} ${a.address}`),
    [`ExternalIP ${server.public_ipv6}`, "InternalIP fd64:1:0:1::a00:9", "InternalIP 10.0.0.9", "Hostname worker-1"],
    "IPv6 first, the leg's addresses, the hostname",
  );
  assert.deepEqual(env.writes.writes.map((w) => w.kind), ["replaceAddresses", "initialise"]);
  assert.deepEqual(env.nodeEvents.reasons(), ["Synced"]);
});

Deno.test("a node no server has the hostname of keeps its taint with one InstanceNotFound Warning", async () => {
  await using env = await startNodeControllers();
  env.nodes.put(fakeNode("nowhere", { ...TAINTED, ready: "False" }));
  await eventually(() => env.nodeEvents.events.length > 0, { what: "the Warning" });
  // Retries (every fresh server list) do not repeat what the first one said to anyone but the event recorder.
  const [warning] = env.nodeEvents.events;
  assert.equal(warning.type, "Warning");
  assert.equal(warning.reason, "InstanceNotFound");
  assert.match(warning.message, /^no Ankra Cloud server has hostname nowhere; name the node after its server/);
  assert.deepEqual(env.writes.of("initialise"), [], "nothing written");
  assert.equal(env.nodes.store.get("nowhere")!.taints[0].key, UNINITIALIZED_TAINT);
});

Deno.test("a NotReady node is tainted while its server is stopped and deleted once its server is gone", async () => {
  await using env = await startNodeControllers();
  const { sim } = env.cloud.simulator;
  const server = sim.world.addServer(serverSeed({ hostname: "worker-2", zone: "de-fsn1" }));
  const providerID = `ankracloud://de-fsn1/${server.id}`;
  env.nodes.put(fakeNode("worker-2", { providerID, ready: "True" }));
  sim.world.servers.get(server.id)!.state = "stopped";
  env.nodes.update("worker-2", (node) => (node.ready = "False"));
  await eventually(() => env.nodes.store.get("worker-2")?.taints.some((t) => t.key === SHUTDOWN_TAINT), {
    what: "the shutdown taint",
  });
  assert.ok(env.nodes.store.get("worker-2"), "a stopped server's node stays");
  sim.world.servers.delete(server.id);
  await eventually(() => env.nodes.store.get("worker-2") === undefined, { what: "the node deleted" });
  assert.deepEqual(env.lifecycleEvents.reasons(), ["DeletingNode"]);
  assert.match(env.lifecycleEvents.events[0].message, /^Deleting node worker-2 because it does not exist/);
});
