/**
 * The Ankra Cloud client against the simulator, every operation: servers across pages, zones and networks, load
 * balancers and their listeners and members, edges.
 */
import assert from "node:assert/strict";
import { isNotFound } from "../../../lib/cloud/errors.ts";
import { startTestCloud, testSeed } from "../../support/cloud/simulator.ts";
import { failure, LB_LABELS } from "../../support/cloud/cloud_client_fixtures.ts";

/** The simulator's clock, which the tests move on to finish life cycles (creates take 300 ms, deletes 200 ms). */
function fakeClock() {
  let now = Date.now();
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

Deno.test("servers are listed across several pages and filtered by exact hostname and label", async () => {
  const servers = Array.from({ length: 230 }, (_, i) => ({
    hostname: `worker-${i}`,
    zone: "de-fsn1",
    labels: i % 2 ? { pool: "odd" } : { pool: "even" },
    interfaces: [{ network_id: "net-1" }],
  }));
  await using cloud = await startTestCloud(testSeed({ servers }));
  const all = (await cloud.client.listServers()).items;
  assert.equal(all.length, 230);
  assert.equal(new Set(all.map((s) => s.id)).size, 230);
  assert.equal(cloud.simulator.sim.count("list_servers"), 3, "100 + 100 + 30");
  const one = (await cloud.client.listServers({ hostname: "worker-1" })).items;
  assert.deepEqual(one.map((s) => s.hostname), ["worker-1"], "worker-10.. are not matches for worker-1");
  const odd = (await cloud.client.listServers({ labels: { pool: "odd" } })).items;
  assert.equal(odd.length, 115);
  const server = await cloud.client.getServer(all[0].id);
  assert.equal(server.hostname, "worker-0");
  assert.equal(server.state, "started");
  assert.match(server.public_ipv6 ?? "", /^2001:db8:/);
  assert.equal(server.public_ipv4, null);
  const legs = await cloud.client.listServerInterfaces(server.id);
  assert.equal(legs.length, 1);
  assert.equal(legs[0].network_id, "net-1");
  assert.match(legs[0].address, /^10\.0\.0\.\d+$/);
  assert.match(legs[0].address6, /^fd64:1:0:1::a00:/);
});

Deno.test("zones, their capabilities and networks are read and validated", async () => {
  await using cloud = await startTestCloud();
  const zones = await cloud.client.listZones();
  assert.deepEqual(zones.map((z) => [z.name, z.region]), [["de-fsn1", "eu-central"], ["de-fsn2", "eu-central"]]);
  const two = await cloud.client.getZoneCapabilities("de-fsn1");
  assert.equal(two.features.load_balancer_ha, true);
  const one = await cloud.client.getZoneCapabilities("de-fsn2");
  assert.equal(one.features.load_balancer_ha, false);
  assert.equal(one.compute_nodes, 1);
  assert.match(one.reasons.load_balancer_ha, /1 compute node\(s\); it needs 2/);
  assert.ok(
    !("datacenters" in one),
    "unknown fields are accepted and dropped: a cached document holds only what is read",
  );
  assert.ok(isNotFound(await failure(cloud.client.getZoneCapabilities("us-nowhere"))));
  const networks = (await cloud.client.listNetworks()).items;
  assert.deepEqual(networks.map((n) => n.id), ["net-1"]);
  const network = await cloud.client.getNetwork("net-1");
  assert.equal(network.cidr, "10.0.0.0/16");
  assert.deepEqual(network.members, []);
});

Deno.test("a load balancer is created, becomes running with its addresses, and is deleted through deleting", async () => {
  const clock = fakeClock();
  await using cloud = await startTestCloud(testSeed(), { simulatorClock: clock.now });
  const { loadBalancer, operation } = await cloud.client.createLoadBalancer({
    zone: "de-fsn1",
    name: "k8s-prod-shop-web",
    network_id: "net-1",
    labels: LB_LABELS,
    public_ipv4: false,
  });
  assert.equal(operation.kind, "load_balancer.create");
  assert.equal(loadBalancer.state, "creating");
  assert.equal(loadBalancer.public_ipv6, null);
  assert.equal(loadBalancer.high_availability, true, "a two-node zone gets a pair when not asked");
  assert.deepEqual(loadBalancer.labels, LB_LABELS);
  clock.advance(299);
  assert.equal((await cloud.client.getLoadBalancer(loadBalancer.id)).state, "creating");
  clock.advance(1);
  const running = await cloud.client.getLoadBalancer(loadBalancer.id);
  assert.equal(running.state, "running");
  assert.equal(running.public_ipv6_addresses.length, 2, "an HA pair has two IPv6 frontend addresses");
  assert.equal(running.public_ipv6, running.public_ipv6_addresses[0]);
  assert.equal(running.public_ipv4, null, "no IPv4 unless asked");
  const found = (await cloud.client.listLoadBalancers({ labels: LB_LABELS })).items;
  assert.deepEqual(found.map((lb) => lb.id), [loadBalancer.id]);
  assert.deepEqual(found[0].backends, [], "list items come without backends");
  const renamed = await cloud.client.updateLoadBalancer(loadBalancer.id, { labels: { ...LB_LABELS, extra: "x" } });
  assert.equal(renamed.labels.extra, "x");
  const deletion = await cloud.client.deleteLoadBalancer(loadBalancer.id);
  assert.equal(deletion.kind, "load_balancer.delete");
  assert.equal((await cloud.client.getLoadBalancer(loadBalancer.id)).state, "deleting");
  const again = await failure(cloud.client.updateLoadBalancer(loadBalancer.id, { name: "x" }));
  assert.equal(again.kind, "conflict");
  clock.advance(200);
  assert.ok(isNotFound(await failure(cloud.client.getLoadBalancer(loadBalancer.id))));
});

Deno.test("a single-VM load balancer with the IPv4 add-on gets one IPv6 and one IPv4", async () => {
  const clock = fakeClock();
  await using cloud = await startTestCloud(testSeed(), { simulatorClock: clock.now });
  const { loadBalancer } = await cloud.client.createLoadBalancer({
    zone: "de-fsn2",
    name: "single",
    network_id: "net-1",
    high_availability: false,
    public_ipv4: true,
  });
  clock.advance(300);
  const running = await cloud.client.getLoadBalancer(loadBalancer.id);
  assert.equal(running.high_availability, false);
  assert.equal(running.public_ipv6_addresses.length, 1);
  assert.match(running.public_ipv4 ?? "", /^203\.0\.113\.\d+$/);
});

Deno.test("backends, frontends and members are created, changed and removed", async () => {
  await using cloud = await startTestCloud();
  const c = cloud.client;
  const { loadBalancer: lb } = await c.createLoadBalancer({
    zone: "de-fsn1",
    name: "listeners",
    network_id: "net-1",
    public_ipv4: false,
  });
  const backend = await c.createBackend(lb.id, { name: "tcp-80", mode: "tcp" });
  assert.deepEqual(backend.health_check, {
    type: "tcp",
    path: "/",
    expected_status: "200-399",
    interval_seconds: 2,
    rise: 2,
    fall: 3,
  });
  const updated = await c.updateBackend(lb.id, backend.id, {
    health_check: { type: "http", path: "/healthz", interval_seconds: 5 },
    balance: "source",
  });
  assert.equal(updated.health_check.type, "http");
  assert.equal(updated.health_check.rise, 2, "omitted fields keep their value");
  assert.equal(updated.balance, "source");
  const frontend = await c.createFrontend(lb.id, { name: "tcp-80", port: 80, backend_id: backend.id });
  assert.equal(frontend.port, 80);
  const inUse = await failure(c.deleteBackend(lb.id, backend.id));
  assert.equal(inUse.kind, "conflict", "a backend a frontend forwards to cannot go");
  const members = await c.replaceMembers(lb.id, backend.id, [
    { name: "worker-1-aaaa", address: "fd64:1:0:1::a00:5", port: 30080 },
    { name: "worker-1-bbbb", address: "10.0.0.5", port: 30080 },
    { name: "worker-2-cccc", address: "2001:db8:99::1", port: 30080 },
  ]);
  assert.equal(members.length, 3);
  const kept = await c.replaceMembers(lb.id, backend.id, [
    { name: "worker-1-aaaa", address: "fd64:1:0:1::a00:6", port: 30081 },
  ]);
  assert.equal(kept[0].id, members[0].id, "a member whose name reappears keeps its id");
  assert.equal(kept[0].port, 30081);
  assert.deepEqual(await c.replaceMembers(lb.id, backend.id, []), []);
  await c.deleteFrontend(lb.id, frontend.id);
  await c.deleteBackend(lb.id, backend.id);
  const after = await c.getLoadBalancer(lb.id);
  assert.deepEqual([after.frontends.length, after.backends.length], [0, 0]);
  assert.ok(isNotFound(await failure(c.deleteFrontend(lb.id, frontend.id))));
});

Deno.test("edges are read and their members replaced with an edge.sync operation", async () => {
  const clock = fakeClock();
  await using cloud = await startTestCloud(
    testSeed({
      edges: [{
        id: "edge-1",
        network_id: "net-1",
        roles: ["load_balancer", "nat_gateway"],
        placement: "combined",
        members: [{ name: "hand-made", frontend_port: 8443, address: "10.0.0.99", port: 443 }],
      }],
    }),
    { simulatorClock: clock.now },
  );
  const edge = await cloud.client.getEdge("edge-1");
  assert.equal(edge.placement, "combined");
  assert.equal(edge.state, "running");
  assert.match(edge.public_ipv4 ?? "", /^203\.0\.113\./);
  assert.equal(edge.machines[0].roles.includes("load_balancer"), true);
  const { edge: changed, operation } = await cloud.client.updateEdge("edge-1", {
    members: [
      ...edge.members.map(({ name, frontend_port, address, port, weight, enabled }) => ({
        name,
        frontend_port,
        address,
        port,
        weight,
        enabled,
      })),
      { name: "kabc-1", frontend_port: 80, address: "10.0.0.5", port: 30080 },
    ],
  });
  assert.equal(operation.kind, "edge.sync");
  assert.equal(operation.status, "running");
  assert.deepEqual(changed.members.map((m) => m.name), ["hand-made", "kabc-1"]);
  clock.advance(200);
  assert.equal((await cloud.client.getOperation(operation.id)).status, "succeeded");
  assert.equal((await cloud.client.listEdges()).items.length, 1);
  const emptied = await cloud.client.updateEdge("edge-1", { members: [] });
  assert.deepEqual(emptied.edge.members, []);
});
