/**
 * Node initialisation end to end: a node found by hostname gets its providerID, labels, addresses (IPv6 first) and
 * loses its taint, with the `Synced` event as the framework words it. The real kube-apiserver, the Ankra Cloud
 * simulator, the node controllers in-process. The other initialisation rules (FQDN and providerID links, no or two
 * servers, a provided node IP, address refresh, a burst of joins) run over fakes in
 * tests/unit/controllers/node/node_initialisation_test.ts.
 */
import assert from "node:assert/strict";
import { uniqueName } from "../support/control_plane/control_plane.ts";
import { startNodeControllers } from "../support/controller/node_controllers.ts";
import { eventually } from "../support/wait/eventually.ts";
import {
  createNode,
  deleteNode,
  eventsFor,
  getNode,
  tainted,
  UNINITIALIZED,
} from "../support/controller/node_fixtures.ts";

Deno.test("a node found by hostname is initialised: providerID, labels, addresses IPv6 first, taint gone, Synced", async () => {
  await using env = await startNodeControllers();
  const name = uniqueName("worker");
  const server = env.cloud.simulator.sim.world.addServer({
    hostname: name,
    zone: "de-fsn1",
    plan: "standard-4c-8g",
    state: "started",
    public_ipv4: "203.0.113.77",
    labels: {},
    interfaces: [{ network_id: "net-1", address: "10.0.4.5" }],
  });
  await createNode(name, { addresses: [{ type: "Hostname", address: name }] });
  try {
    await eventually(async () => !tainted(await getNode(name), UNINITIALIZED), 10_000, "taint removed");
    const node = await getNode(name);
    assert.equal(node.spec?.providerID, `ankracloud://de-fsn1/${server.id}`);
    const labels = node.metadata!.labels!;
    assert.equal(labels["node.kubernetes.io/instance-type"], "standard-4c-8g");
    assert.equal(labels["beta.kubernetes.io/instance-type"], "standard-4c-8g");
    assert.equal(labels["topology.kubernetes.io/zone"], "de-fsn1");
    assert.equal(labels["failure-domain.beta.kubernetes.io/zone"], "de-fsn1");
    assert.equal(labels["topology.kubernetes.io/region"], "eu-central");
    assert.equal(labels["kubernetes.io/hostname"], name, "other labels are untouched");
    assert.deepEqual(node.status?.addresses, [
      { type: "ExternalIP", address: server.public_ipv6! },
      { type: "ExternalIP", address: "203.0.113.77" },
      { type: "InternalIP", address: "fd64:1:0:1::a00:405" },
      { type: "InternalIP", address: "10.0.4.5" },
      { type: "Hostname", address: name },
    ]);
    await eventually(async () => (await eventsFor(name)).some((e) => e.reason === "Synced"), 5_000, "Synced event");
    const synced = (await eventsFor(name)).find((e) => e.reason === "Synced")!;
    assert.equal(synced.message, "Node synced successfully");
    assert.equal(synced.source.component, "cloud-node-controller");
  } finally {
    await deleteNode(name);
  }
});
