/**
 * The node controllers end to end: the real kube-apiserver, the Ankra Cloud simulator, the controllers in-process.
 */
import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { testControlPlane, uniqueName } from "../support/control_plane.ts";
import { eventsFor as eventsForObject, kubeletNode, kubeOk, kubeRequest } from "../support/kube_http.ts";
import { eventually, startNodeControllers } from "../support/node_controllers.ts";
import { serverSeed } from "../support/simulator.ts";
import { moreReads } from "../support/cloud_passes.ts";
import type { Simulator } from "../../simulator/simulator.ts";

const UNINITIALIZED = "node.cloudprovider.kubernetes.io/uninitialized";
const SHUTDOWN = "node.cloudprovider.kubernetes.io/shutdown";

function getNode(name: string): Promise<V1Node> {
  return kubeOk<V1Node>(testControlPlane(), "GET", `/api/v1/nodes/${name}`);
}

async function nodeExists(name: string): Promise<boolean> {
  return (await kubeRequest(testControlPlane(), "GET", `/api/v1/nodes/${name}`)).status === 200;
}

function eventsFor(name: string) {
  return eventsForObject(testControlPlane(), name);
}

/**
 * Resolves once two more server lists have reached the simulator: the node and lifecycle passes that follow the
 * first of them have run (the second starts a period after the first ends).
 */
function passesAfterNextList(sim: Simulator): Promise<void> {
  return moreReads(sim, { operation: "list_servers" }, { count: 2 });
}

/**
 * Resolves once the server lists the simulator answered with `status` (0: hung) since `fromSeq` span two of the
 * view's confirmation intervals (1 s here): lists that would have proven a server gone, had they succeeded without
 * it, and one more after them.
 */
function failedListsSpanning(sim: Simulator, status: number, fromSeq: number): Promise<void> {
  return eventually(
    () => {
      const at = sim.log.filter((e) => e.seq > fromSeq && e.operation === "list_servers" && e.status === status)
        .map((e) => e.atMs);
      return at.length >= 2 && at[at.length - 1] - at[0] >= 2_000;
    },
    20_000,
    `server lists answered ${status} over 2 s`,
  );
}

function tainted(node: V1Node, key: string): boolean {
  return (node.spec?.taints ?? []).some((t) => t.key === key);
}

async function createNode(name: string, options: Parameters<typeof kubeletNode>[1] = {}): Promise<void> {
  await kubeOk(testControlPlane(), "POST", "/api/v1/nodes", { body: kubeletNode(name, options) });
}

async function setReady(name: string, ready: boolean): Promise<void> {
  const now = new Date().toISOString();
  await kubeOk(testControlPlane(), "PATCH", `/api/v1/nodes/${name}/status`, {
    patch: "strategic",
    body: {
      status: {
        conditions: [{
          type: "Ready",
          status: ready ? "True" : "False",
          reason: ready ? "KubeletReady" : "NodeStatusUnknown",
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        }],
      },
    },
  });
}

async function deleteNode(name: string): Promise<void> {
  await kubeRequest(testControlPlane(), "DELETE", `/api/v1/nodes/${name}`);
}

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

Deno.test("a NotReady node whose server is deleting or gone is deleted with a DeletingNode event", async () => {
  await using env = await startNodeControllers();
  const world = env.cloud.simulator.sim.world;
  const deleting = uniqueName("srv-deleting");
  const gone = uniqueName("srv-gone");
  const servers = [deleting, gone].map((hostname) =>
    world.addServer({ hostname, zone: "de-fsn1", plan: "standard-2c-4g", state: "started", labels: {}, interfaces: [] })
  );
  await createNode(deleting);
  await createNode(gone);
  try {
    await eventually(async () =>
      !tainted(await getNode(deleting), UNINITIALIZED) && !tainted(await getNode(gone), UNINITIALIZED)
    );
    await setReady(deleting, false);
    await setReady(gone, false);
    servers[0].state = "deleting";
    world.servers.delete(servers[1].id);
    await eventually(async () => !(await nodeExists(deleting)) && !(await nodeExists(gone)), 10_000, "nodes deleted");
    for (const name of [deleting, gone]) {
      const event = (await eventsFor(name)).find((e) => e.reason === "DeletingNode")!;
      assert.equal(event.message, `Deleting node ${name} because it does not exist in the cloud provider`);
      assert.equal(event.source.component, "cloud-node-lifecycle-controller");
    }
  } finally {
    await deleteNode(deleting);
    await deleteNode(gone);
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

Deno.test("a NotReady node of another provider is left alone: no lookup, no event, never deleted", async () => {
  await using env = await startNodeControllers();
  const name = uniqueName("foreign");
  await createNode(name, { providerID: "hcloud://123456" });
  try {
    await setReady(name, false);
    await passesAfterNextList(env.cloud.simulator.sim);
    assert.ok(await nodeExists(name));
    assert.deepEqual(await eventsFor(name), []);
    assert.ok(tainted(await getNode(name), UNINITIALIZED), "not ours to initialise");
    assert.equal(env.cloud.simulator.sim.count("get_server"), 0);
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
    // Staying NotReady costs nothing more.
    const after = sim.count("get_server") + sim.count("list_servers");
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    assert.equal(
      sim.count("get_server") + sim.count("list_servers"),
      after,
      "no further reads while it stays NotReady",
    );
  } finally {
    await deleteNode(name);
  }
});
