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
import { SHUTDOWN_TAINT, UNINITIALIZED_TAINT } from "../../../../lib/provider/node/node_plan.ts";
import { moreReads } from "../../../support/cloud/cloud_passes.ts";
import { eventually } from "../../../support/wait/eventually.ts";
import { fakeNode } from "../../../support/fakes/fake_cluster.ts";
import { startFakeNodeControllers } from "../../../support/fakes/fake_node_controllers.ts";
import { serverSeed } from "../../../support/cloud/simulator.ts";

const TAINTED = { taints: [{ key: UNINITIALIZED_TAINT, effect: "NoSchedule" }], providerID: undefined };

Deno.test("a joining node is initialised in one write after its addresses: providerID, labels, taint gone, Synced", async () => {
  await using env = await startFakeNodeControllers();
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
  await using env = await startFakeNodeControllers();
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
  await using env = await startFakeNodeControllers();
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
  const calls = env.metrics.counter("cloud_node_lifecycle_controller_cloud_provider_calls_total", "");
  assert.ok(calls.get({ operation: "instance_exists", result: "success" }) >= 1, "upstream's call metric: it exists");
  assert.ok(calls.get({ operation: "instance_shutdown", result: "success" }) >= 1, "and it is shut down");
  sim.world.servers.delete(server.id);
  await eventually(() => env.nodes.store.get("worker-2") === undefined, { what: "the node deleted" });
  assert.deepEqual(env.lifecycleEvents.reasons(), ["DeletingNode"]);
  assert.match(env.lifecycleEvents.events[0].message, /^Deleting node worker-2 because it does not exist/);
  assert.ok(calls.get({ operation: "instance_exists", result: "instance_not_found" }) >= 1, "then: not found");
  assert.match(
    env.metrics.render(),
    /^cloud_node_lifecycle_controller_monitor_nodes_duration_seconds_count [1-9]\d*$/m,
    "every pass is measured",
  );
});

Deno.test("a NotReady node of another provider is left alone: no lookup, no event, never deleted", async () => {
  await using env = await startFakeNodeControllers();
  const { sim } = env.cloud.simulator;
  env.nodes.put(fakeNode("foreign", { ...TAINTED, providerID: "hcloud://123456", ready: "False" }));
  // Two more server lists: the node and lifecycle passes after the first of them have run.
  await moreReads(sim, { operation: "list_servers" }, { count: 2 });
  assert.ok(env.nodes.store.get("foreign"), "never deleted");
  assert.deepEqual(env.eventsOf("foreign"), []);
  assert.deepEqual(env.writes.writes, [], "not ours to initialise or taint");
  assert.equal(sim.count("get_server"), 0);
});
