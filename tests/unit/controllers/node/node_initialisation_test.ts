/**
 * Node initialisation over fakes (fast tier): a node linked to its server by FQDN or providerID, the Warnings when no
 * or two servers match, a provided node IP the server lacks, address changes on the refresh period without no-op
 * writes, and a burst of joining nodes read from the networks. A node found by hostname and initialised, against a
 * real API server, is in tests/integration/node_initialisation_test.ts.
 */
import assert from "node:assert/strict";
import type { SlimNode } from "../../../../lib/kube/slim.ts";
import { UNINITIALIZED_TAINT } from "../../../../lib/provider/node/node_plan.ts";
import { moreReads } from "../../../support/cloud/cloud_passes.ts";
import { eventually } from "../../../support/wait/eventually.ts";
import { fakeNode } from "../../../support/fakes/fake_cluster.ts";
import { startFakeNodeControllers } from "../../../support/fakes/fake_node_controllers.ts";
import { serverSeed } from "../../../support/cloud/simulator.ts";

/** A Node as a kubelet with `--cloud-provider=external` registers it: tainted, no providerID, no topology labels. */
function joiningNode(name: string, extra: Partial<SlimNode> = {}): SlimNode {
  return fakeNode(name, {
    taints: [{ key: UNINITIALIZED_TAINT, effect: "NoSchedule" }],
    providerID: undefined,
    labels: {},
    ...extra,
  });
}

const tainted = (node: SlimNode | undefined) => node?.taints.some((t) => t.key === UNINITIALIZED_TAINT) ?? false;

Deno.test("a node with an FQDN name or a providerID is linked to its server; an existing providerID is kept", async () => {
  await using env = await startFakeNodeControllers();
  const world = env.cloud.simulator.sim.world;
  const byName = world.addServer(serverSeed({ hostname: "fqdn", zone: "de-fsn1" }));
  const byId = world.addServer(serverSeed({ hostname: "elsewhere", zone: "de-fsn2", plan: "starter-1c-1g" }));
  env.nodes.put(joiningNode("fqdn.cluster.example"));
  env.nodes.put(joiningNode("byid", { providerID: `ankracloud://de-fsn2/${byId.id}` }));
  await eventually(
    () => !tainted(env.nodes.store.get("fqdn.cluster.example")) && !tainted(env.nodes.store.get("byid")),
    {
      what: "both initialised",
    },
  );
  assert.equal(env.nodes.store.get("fqdn.cluster.example")!.providerID, `ankracloud://de-fsn1/${byName.id}`);
  const node = env.nodes.store.get("byid")!;
  assert.equal(node.providerID, `ankracloud://de-fsn2/${byId.id}`);
  assert.equal(node.labels["node.kubernetes.io/instance-type"], "starter-1c-1g");
  assert.equal(env.cloud.simulator.sim.count("list_zones"), 1, "regions are cached per zone: one list_zones");
});

Deno.test("two servers with the node's hostname: one Warning telling the user to set the providerID; the taint stays", async () => {
  await using env = await startFakeNodeControllers();
  const { sim } = env.cloud.simulator;
  for (const zone of ["de-fsn1", "de-fsn2"]) sim.world.addServer(serverSeed({ hostname: "twin", zone }));
  env.nodes.put(joiningNode("twin"));
  await eventually(() => env.eventsOf("twin").some((e) => e.reason === "AmbiguousHostname"), {
    what: "the AmbiguousHostname Warning",
  });
  // Two more server lists: the node passes after the first of them have run.
  await moreReads(sim, { operation: "list_servers" }, { count: 2 });
  const node = env.nodes.store.get("twin")!;
  assert.ok(tainted(node));
  assert.equal(node.providerID, undefined);
  const events = env.eventsOf("twin").filter((e) => e.reason === "AmbiguousHostname");
  // Each retry repeats the same Warning, word for word: the recorder aggregates it into one Event with a count
  // (tests/integration/kube_events_test.ts).
  assert.equal(new Set(events.map((e) => `${e.type} ${e.message}`)).size, 1, "one Warning, repeated as it is");
  assert.equal(events[0].type, "Warning");
  assert.match(
    events[0].message,
    /2 Ankra Cloud servers have hostname .*set the node's spec\.providerID to ankracloud:\/\//,
  );
});

Deno.test("a node no server has gets one clear Warning, keeps its taint, waits for the user and joins once a fresh list has its server", async () => {
  await using env = await startFakeNodeControllers();
  const { sim } = env.cloud.simulator;
  env.nodes.put(joiningNode("orphan"));
  const event = await eventually(() => env.eventsOf("orphan").find((e) => e.reason === "InstanceNotFound"), {
    what: "the InstanceNotFound Warning",
  });
  assert.match(event.message, /no Ankra Cloud server has hostname orphan.*set\s+spec\.providerID/);
  await moreReads(sim, { operation: "list_servers" }, { count: 2 });
  assert.ok(tainted(env.nodes.store.get("orphan")));
  const warnings = env.eventsOf("orphan").filter((e) => e.reason === "InstanceNotFound");
  assert.equal(new Set(warnings.map((e) => e.message)).size, 1, "one Warning, repeated as it is (aggregated)");
  const server = sim.world.addServer(serverSeed({ hostname: "orphan", zone: "de-fsn1" }));
  await eventually(() => env.nodes.store.get("orphan")!.providerID === `ankracloud://de-fsn1/${server.id}`, {
    what: "the node linked once its server is listed",
  });
});

Deno.test("a provided node IP the server does not have keeps the node tainted with a Warning; a matching one goes first", async () => {
  await using env = await startFakeNodeControllers();
  const world = env.cloud.simulator.sim.world;
  for (const [name, address] of [["nodeip-bad", "10.0.7.1"], ["nodeip-ok", "10.0.7.2"]]) {
    world.addServer(serverSeed({ hostname: name, zone: "de-fsn1", interfaces: [{ network_id: "net-1", address }] }));
  }
  env.nodes.put(joiningNode("nodeip-bad", { providedNodeIP: "192.168.1.1" }));
  env.nodes.put(joiningNode("nodeip-ok", { providedNodeIP: "10.0.7.2,fd64:1:0:1::a00:702" }));
  await eventually(() => !tainted(env.nodes.store.get("nodeip-ok")), { what: "nodeip-ok initialised" });
  assert.deepEqual(env.nodes.store.get("nodeip-ok")!.addresses.slice(0, 2), [
    { type: "InternalIP", address: "10.0.7.2" },
    { type: "InternalIP", address: "fd64:1:0:1::a00:702" },
  ]);
  const event = await eventually(() => env.eventsOf("nodeip-bad").find((e) => e.reason === "NodeIPNotFound"), {
    what: "the NodeIPNotFound Warning",
  });
  assert.match(event.message, /192\.168\.1\.1/);
  assert.match(event.message, /stays tainted/);
  assert.ok(tainted(env.nodes.store.get("nodeip-bad")));
});

Deno.test("address changes reach initialised nodes on the refresh period, with no no-op patches", async () => {
  await using env = await startFakeNodeControllers({ refreshPeriodMs: 500, serverListPeriodMs: 500 });
  const { sim } = env.cloud.simulator;
  const server = sim.world.addServer(
    serverSeed({ hostname: "refresh", zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }),
  );
  env.nodes.put(joiningNode("refresh"));
  await eventually(() => !tainted(env.nodes.store.get("refresh")), { what: "initialised" });
  const writes = env.writes.writes.length;
  await moreReads(sim, { operation: "list_servers" }, { count: 2 });
  assert.equal(env.writes.writes.length, writes, "steady state writes nothing");
  server.public_ipv4 = "203.0.113.99";
  server.updated_at = new Date().toISOString();
  await eventually(() => env.nodes.store.get("refresh")!.addresses.some((a) => a.address === "203.0.113.99"), {
    what: "the new address",
  });
});

Deno.test("fifty nodes joining at once get their servers' legs from the networks, not one call per node", async () => {
  await using env = await startFakeNodeControllers();
  const { sim } = env.cloud.simulator;
  const names = Array.from({ length: 50 }, (_, i) => `burst-${i}`);
  for (const name of names) {
    sim.world.addServer(serverSeed({ hostname: name, zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }));
  }
  const interfaceCalls = sim.count("list_server_interfaces");
  for (const name of names) env.nodes.put(joiningNode(name));
  await eventually(() => names.every((name) => !tainted(env.nodes.store.get(name))), {
    what: "all initialised",
    timeoutMs: 30_000,
  });
  const perNode = sim.count("list_server_interfaces") - interfaceCalls;
  // Only nodes that arrived before the burst was seen (its first 100 ms window, at most 10) are read one by one.
  assert.ok(perNode <= 10, `${perNode} list_server_interfaces calls for 50 nodes`);
  assert.ok(sim.count("get_network") >= 1, "the legs came from get_network");
  assert.ok(
    env.nodes.store.get(names[7])!.addresses.some((a) => a.type === "InternalIP" && a.address.startsWith("10.0.")),
    "each node still gets its private addresses",
  );
});
