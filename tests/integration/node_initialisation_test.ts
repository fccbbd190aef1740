/**
 * Node initialisation end to end: nodes linked to their servers (by hostname, FQDN or providerID), their addresses,
 * labels and taint, the Warnings when no or two servers match, and address changes on the refresh period. The real
 * kube-apiserver, the Ankra Cloud simulator, the node controllers in-process.
 */
import assert from "node:assert/strict";
import { uniqueName } from "../support/control_plane.ts";
import { startNodeControllers } from "../support/node_controllers.ts";
import { eventually } from "../support/eventually.ts";
import { serverSeed } from "../support/simulator.ts";
import {
  createNode,
  deleteNode,
  eventsFor,
  getNode,
  passesAfterNextList,
  tainted,
  UNINITIALIZED,
} from "../support/node_fixtures.ts";

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

Deno.test("a node with an FQDN name or a providerID is linked to its server; an existing providerID is kept", async () => {
  await using env = await startNodeControllers();
  const world = env.cloud.simulator.sim.world;
  const short = uniqueName("fqdn");
  const byName = world.addServer(serverSeed({ hostname: short, zone: "de-fsn1" }));
  const byId = world.addServer({
    hostname: "elsewhere",
    zone: "de-fsn2",
    plan: "starter-1c-1g",
    state: "started",
    labels: {},
    interfaces: [],
  });
  const fqdn = `${short}.cluster.example`;
  const withId = uniqueName("byid");
  await createNode(fqdn);
  await createNode(withId, { providerID: `ankracloud://de-fsn2/${byId.id}` });
  try {
    await eventually(async () =>
      !tainted(await getNode(fqdn), UNINITIALIZED) && !tainted(await getNode(withId), UNINITIALIZED)
    );
    assert.equal((await getNode(fqdn)).spec?.providerID, `ankracloud://de-fsn1/${byName.id}`);
    const node = await getNode(withId);
    assert.equal(node.spec?.providerID, `ankracloud://de-fsn2/${byId.id}`);
    assert.equal(node.metadata!.labels!["node.kubernetes.io/instance-type"], "starter-1c-1g");
    assert.equal(env.cloud.simulator.sim.count("list_zones"), 1, "regions are cached per zone: one list_zones");
  } finally {
    await deleteNode(fqdn);
    await deleteNode(withId);
  }
});

Deno.test("two servers with the node's hostname: one Warning telling the user to set the providerID; the taint stays", async () => {
  await using env = await startNodeControllers();
  const name = uniqueName("twin");
  const world = env.cloud.simulator.sim.world;
  for (const zone of ["de-fsn1", "de-fsn2"]) {
    world.addServer({ hostname: name, zone, plan: "standard-2c-4g", state: "started", labels: {}, interfaces: [] });
  }
  await createNode(name);
  try {
    await eventually(async () => (await eventsFor(name)).some((e) => e.reason === "AmbiguousHostname"));
    await passesAfterNextList(env.cloud.simulator.sim);
    const node = await getNode(name);
    assert.ok(tainted(node, UNINITIALIZED));
    assert.equal(node.spec?.providerID, undefined);
    const events = (await eventsFor(name)).filter((e) => e.reason === "AmbiguousHostname");
    assert.equal(events.length, 1, "repeats aggregate into one event");
    assert.equal(events[0].type, "Warning");
    assert.match(
      events[0].message,
      /2 Ankra Cloud servers have hostname .*set the node's spec\.providerID to ankracloud:\/\//,
    );
  } finally {
    await deleteNode(name);
  }
});

Deno.test("a node no server has gets one clear Warning, keeps its taint, waits for the user and joins once a fresh list has its server", async () => {
  await using env = await startNodeControllers();
  const name = uniqueName("orphan");
  await createNode(name);
  try {
    await eventually(async () => (await eventsFor(name)).some((e) => e.reason === "InstanceNotFound"));
    const event = (await eventsFor(name)).find((e) => e.reason === "InstanceNotFound")!;
    assert.match(event.message, new RegExp(`no Ankra Cloud server has hostname ${name}.*set\\s+spec\\.providerID`));
    await passesAfterNextList(env.cloud.simulator.sim);
    assert.ok(tainted(await getNode(name), UNINITIALIZED));
    assert.equal((await eventsFor(name)).filter((e) => e.reason === "InstanceNotFound").length, 1);
    const server = env.cloud.simulator.sim.world.addServer(serverSeed({ hostname: name, zone: "de-fsn1" }));
    await eventually(async () => (await getNode(name)).spec?.providerID === `ankracloud://de-fsn1/${server.id}`);
  } finally {
    await deleteNode(name);
  }
});

Deno.test("a provided node IP the server does not have keeps the node tainted with a Warning; a matching one goes first", async () => {
  await using env = await startNodeControllers();
  const world = env.cloud.simulator.sim.world;
  const wrong = uniqueName("nodeip-bad");
  const right = uniqueName("nodeip-ok");
  for (const [name, address] of [[wrong, "10.0.7.1"], [right, "10.0.7.2"]]) {
    world.addServer({
      hostname: name,
      zone: "de-fsn1",
      plan: "standard-2c-4g",
      state: "started",
      labels: {},
      interfaces: [{ network_id: "net-1", address }],
    });
  }
  await createNode(wrong, { providedNodeIp: "192.168.1.1" });
  await createNode(right, { providedNodeIp: "10.0.7.2,fd64:1:0:1::a00:702" });
  try {
    await eventually(async () => !tainted(await getNode(right), UNINITIALIZED));
    assert.deepEqual((await getNode(right)).status?.addresses?.slice(0, 2), [
      { type: "InternalIP", address: "10.0.7.2" },
      { type: "InternalIP", address: "fd64:1:0:1::a00:702" },
    ]);
    await eventually(async () => (await eventsFor(wrong)).some((e) => e.reason === "NodeIPNotFound"));
    const event = (await eventsFor(wrong)).find((e) => e.reason === "NodeIPNotFound")!;
    assert.match(event.message, /192\.168\.1\.1/);
    assert.match(event.message, /stays tainted/);
    assert.ok(tainted(await getNode(wrong), UNINITIALIZED));
  } finally {
    await deleteNode(wrong);
    await deleteNode(right);
  }
});

Deno.test("address changes reach initialised nodes on the refresh period, with no no-op patches", async () => {
  await using env = await startNodeControllers({ refreshPeriodMs: 500, serverListPeriodMs: 500 });
  const name = uniqueName("refresh");
  const server = env.cloud.simulator.sim.world.addServer({
    hostname: name,
    zone: "de-fsn1",
    plan: "standard-2c-4g",
    state: "started",
    labels: {},
    interfaces: [{ network_id: "net-1" }],
  });
  await createNode(name);
  try {
    await eventually(async () => !tainted(await getNode(name), UNINITIALIZED));
    const before = (await getNode(name)).metadata!.resourceVersion;
    await passesAfterNextList(env.cloud.simulator.sim);
    assert.equal((await getNode(name)).metadata!.resourceVersion, before, "steady state writes nothing");
    server.public_ipv4 = "203.0.113.99";
    server.updated_at = new Date().toISOString();
    await eventually(async () =>
      (await getNode(name)).status?.addresses?.some((a) => a.address === "203.0.113.99") ?? false
    );
  } finally {
    await deleteNode(name);
  }
});

Deno.test("fifty nodes joining at once get their servers' legs from the networks, not one call per node", async () => {
  await using env = await startNodeControllers();
  const sim = env.cloud.simulator.sim;
  const prefix = uniqueName("burst");
  const names = Array.from({ length: 50 }, (_, i) => `${prefix}-${i}`);
  for (const name of names) {
    sim.world.addServer(serverSeed({ hostname: name, zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }));
  }
  const interfaceCalls = sim.count("list_server_interfaces");
  await Promise.all(names.map((name) => createNode(name)));
  try {
    await eventually(
      async () => (await Promise.all(names.map(getNode))).every((n) => !tainted(n, UNINITIALIZED)),
      30_000,
      "all initialised",
    );
    const perNode = sim.count("list_server_interfaces") - interfaceCalls;
    // Only nodes that arrived before the burst was seen (its first 100 ms window, at most 10) are read one by one.
    assert.ok(perNode <= 10, `${perNode} list_server_interfaces calls for 50 nodes`);
    assert.ok(sim.count("get_network") >= 1, "the legs came from get_network");
    const node = await getNode(names[7]);
    assert.ok(
      node.status!.addresses!.some((a) => a.type === "InternalIP" && a.address.startsWith("10.0.")),
      "each node still gets its private addresses",
    );
  } finally {
    await Promise.all(names.map(deleteNode));
  }
});
