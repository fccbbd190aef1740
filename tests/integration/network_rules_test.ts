/**
 * The load balancer's network and its members, end to end (real kube-apiserver, simulator, service controller
 * in-process, `main.ts doctor` as a subprocess), in the two worlds that went wrong before:
 *
 * - worker-1's server is on network-1 and network-2 and its kubelet reports the network-2 address as InternalIP;
 *   worker-2's server is on network-1 only. The load balancer goes on network-1 and its members are both servers'
 *   network-1 addresses (the simulator, like the API, refuses the network-2 one); the doctor says ✓ and exits 0.
 * - ANKRA_CLOUD_NETWORK_ID is network-1 and worker-b's server has no leg on it: an IPv4 Service with only worker-b
 *   creates nothing (the Warning names worker-b and what to do; the doctor says ✗); with worker-a beside it, it is
 *   served by worker-a and a Warning names worker-b (the doctor warns). Excluding worker-b clears it.
 * - servers with only their public IPv6 (no leg on any network — IPv6 is always on in Ankra Cloud, private networks
 *   are extras): with the network named, an IPv6 Service's members are their public IPv6 addresses; a dual-stack one
 *   is served over IPv6 with a Warning that IPv4 has no member; exclusion and re-inclusion move the members; with no
 *   network named, the Warning asks for one.
 *
 * Every test starts from a cluster without Nodes (test files run one after another, so this touches no other test's
 * objects).
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { eventually } from "../support/wait/eventually.ts";
import { kubeletNode, kubeOk } from "../support/http/kube_http.ts";
import { startServiceController } from "../support/controller/service_controller.ts";
import {
  createService,
  deleteNodes,
  deleteService,
  eventsFor,
  getService,
  ingressIps,
  serviceExists,
} from "../support/controller/service_fixtures.ts";
import { serverSeed, TEST_TOKEN, testSeed } from "../support/cloud/simulator.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

/** network-1 and network-2 (the test seed's zones, one network more). */
function twoNetworks() {
  return testSeed({
    networks: [
      { id: "net-1", name: "network-1", zone: "de-fsn1", cidr: "10.0.0.0/16", ula_prefix: "fd64:1:0:1::/64" },
      { id: "net-2", name: "network-2", zone: "de-fsn1", cidr: "10.1.0.0/16", ula_prefix: "fd64:1:0:2::/64" },
    ],
  });
}

/** Registers an initialised Node of server `serverId` whose kubelet reports `internalIP`. */
async function createNode(name: string, serverId: string, internalIP: string): Promise<void> {
  const node = kubeletNode(name, {
    providerID: `ankracloud://de-fsn1/${serverId}`,
    labels: { "topology.kubernetes.io/zone": "de-fsn1" },
    addresses: [{ type: "InternalIP", address: internalIP }, { type: "Hostname", address: name }],
  }) as { spec: { taints: unknown[] } };
  node.spec.taints = [];
  await kubeOk(testControlPlane(), "POST", "/api/v1/nodes", { body: node });
}

/** `ankra-cloud-ccm doctor` against the simulator at `apiUrl`, with the test control plane's kubeconfig. */
async function runDoctor(apiUrl: string, env: Record<string, string> = {}) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, "doctor", `--kubeconfig=${testControlPlane().kubeconfigPath}`],
    env: { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_TOKEN_FILE: "", ANKRA_CLOUD_API_URL: apiUrl, ...env },
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  const line = stdout.split("\n").find((l) => l.includes("One private network for load balancers")) ?? "";
  return { code: output.code, stdout, line };
}

async function removeAllNodes(): Promise<void> {
  await kubeOk(testControlPlane(), "DELETE", "/api/v1/nodes");
}

Deno.test("a node whose kubelet reports another network's address is served with its server's address on the load balancer's network", async () => {
  await removeAllNodes();
  await using env = await startServiceController({ seed: twoNetworks(), networkId: null });
  const { sim, url } = env.cloud.simulator;
  const one = uniqueName("worker-1");
  const two = uniqueName("worker-2");
  const server1 = sim.world.addServer(serverSeed({
    hostname: one,
    zone: "de-fsn1",
    interfaces: [{ network_id: "net-1", address: "10.0.0.5" }, { network_id: "net-2", address: "10.1.0.5" }],
  }));
  const server2 = sim.world.addServer(serverSeed({
    hostname: two,
    zone: "de-fsn1",
    interfaces: [{ network_id: "net-1", address: "10.0.0.6" }],
  }));
  await createNode(one, server1.id, "10.1.0.5");
  await createNode(two, server2.id, "10.0.0.6");
  const name = uniqueName("web");
  await createService(name, { ipFamilies: ["IPv4"], ipFamilyPolicy: "SingleStack" });
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 20_000, "an address");
    const lbs = [...sim.loadBalancers.items.values()];
    assert.equal(lbs.length, 1);
    const lb = lbs[0];
    assert.equal(lb.network_id, "net-1", "the one network both servers are on");
    const members = lb.backends[0].members.map((m) => m.address).sort();
    assert.deepEqual(members, ["10.0.0.5", "10.0.0.6"], "each server's address on net-1");
    assert.ok(!(await eventsFor(name)).some((e) => e.reason === "SyncLoadBalancerFailed"), "no failed pass");

    // The simulator, like the API, refuses the address the kubelet reports: it is not a host of net-1.
    const refused = await fetch(`${url}/v1/load-balancers/${lb.id}/backends/${lb.backends[0].id}/members`, {
      method: "PUT",
      headers: { authorization: `Bearer ${TEST_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ members: [{ name: "worker-1", address: "10.1.0.5", port: 30080 }] }),
    });
    const problem = await refused.json();
    assert.equal(refused.status, 400);
    assert.match(JSON.stringify(problem), /10\.1\.0\.5 is neither a host of network net-1/);

    const doctor = await runDoctor(url);
    assert.equal(doctor.code, 0, doctor.stdout);
    assert.match(
      doctor.line,
      new RegExp(
        `^✓ .*share net-1 \\(network-1, 10\\.0\\.0\\.0/16\\).*members: ${one} 10\\.0\\.0\\.5 fd64:1:0:1:[0-9a-f:]+, ` +
          `${two} 10\\.0\\.0\\.6 fd64:1:0:1:[0-9a-f:]+$`,
      ),
    );
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000, "the Service gone");
    await deleteNodes([one, two]);
  }
});

Deno.test("a node with no IPv4 address on the load balancer's network: alone nothing is created; beside a served node it stays out, named", async () => {
  await removeAllNodes();
  await using env = await startServiceController({ seed: twoNetworks(), networkId: "net-1" });
  const { sim, url } = env.cloud.simulator;
  const a = uniqueName("worker-a");
  const b = uniqueName("worker-b");
  const serverA = sim.world.addServer(serverSeed({
    hostname: a,
    zone: "de-fsn1",
    interfaces: [{ network_id: "net-1", address: "10.0.0.7" }],
  }));
  const serverB = sim.world.addServer(serverSeed({
    hostname: b,
    zone: "de-fsn1",
    interfaces: [{ network_id: "net-2", address: "10.1.0.8" }],
  }));
  await createNode(b, serverB.id, "10.1.0.8");
  const name = uniqueName("web");
  await createService(name, { ipFamilies: ["IPv4"], ipFamilyPolicy: "SingleStack" });
  const warningOf = async (reason: string) => (await eventsFor(name)).find((e) => e.reason === reason);
  try {
    await eventually(async () => (await warningOf("SyncLoadBalancerFailed")) !== undefined, 15_000, "the Warning");
    const failed = (await warningOf("SyncLoadBalancerFailed"))!;
    assert.equal(failed.type, "Warning");
    assert.match(
      failed.message,
      new RegExp(`node ${b} \\(server ${serverB.id}\\) has no IPv4 address for the load balancer on network net-1`),
    );
    assert.match(failed.message, /no node can be a member: attach its server to net-1/);
    // The decision comes before any create: the pass that recorded the Warning sent nothing.
    assert.equal(sim.loadBalancers.items.size, 0, "no load balancer");
    assert.equal(sim.count("create_load_balancer"), 0, "nothing billed");
    assert.deepEqual(ingressIps(await getService(name)), []);

    // worker-a, on net-1, joins: the Service is served by it; worker-b stays out, named in a Warning.
    await createNode(a, serverA.id, "10.0.0.7");
    await eventually(async () => ingressIps(await getService(name)).length > 0, 20_000, "an address");
    const lb = [...sim.loadBalancers.items.values()][0];
    assert.deepEqual(lb.backends[0].members.map((m) => m.address), ["10.0.0.7"]);
    await eventually(async () => (await warningOf("NodeWithoutMemberAddress")) !== undefined, 10_000, "the notice");
    const notice = (await warningOf("NodeWithoutMemberAddress"))!;
    assert.equal(notice.type, "Warning");
    assert.match(
      notice.message,
      new RegExp(`^node ${b} \\(server ${serverB.id}\\) has no IPv4 address .*not a member`),
    );

    const doctor = await runDoctor(url, { ANKRA_CLOUD_NETWORK_ID: "net-1" });
    assert.equal(doctor.code, 0, doctor.stdout);
    // worker-b's server has a public IPv6 address: IPv6 Services use it; only IPv4 leaves it out.
    assert.match(doctor.line, new RegExp(`^! .*; but node ${b} \\(server ${serverB.id}\\) has no IPv4 address`));
    assert.match(doctor.stdout, /\n {4}attach its server to net-1/);

    // The user excludes worker-b: nothing changes in the members, and the doctor passes.
    await kubeOk(testControlPlane(), "PATCH", `/api/v1/nodes/${b}`, {
      body: { metadata: { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "true" } } },
    });
    const after = await runDoctor(url, { ANKRA_CLOUD_NETWORK_ID: "net-1" });
    assert.equal(after.code, 0, after.stdout);
    assert.match(after.line, new RegExp(`^✓ .*members: ${a} 10\\.0\\.0\\.7 fd64:1:0:1:[0-9a-f:]+$`));
    assert.deepEqual([...sim.loadBalancers.items.values()][0].backends[0].members.map((m) => m.address), ["10.0.0.7"]);
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000, "the Service gone");
    await deleteNodes([a, b]);
  }
});

Deno.test("servers with only their public IPv6 are members by it once the network is named; IPv4 has none, and the Warning says so", async () => {
  await removeAllNodes();
  await using env = await startServiceController({ seed: twoNetworks(), networkId: null });
  const { sim } = env.cloud.simulator;
  const nodes = [uniqueName("v6-1"), uniqueName("v6-2")];
  const servers = nodes.map((hostname) => sim.world.addServer(serverSeed({ hostname, zone: "de-fsn1" })));
  const publicIpv6 = servers.map((server) => server.public_ipv6!);
  for (const [i, node] of nodes.entries()) await createNode(node, servers[i].id, publicIpv6[i]);
  const unnamed = uniqueName("web");
  const ipv6 = uniqueName("web6");
  const dual = uniqueName("web46");
  const named = { "load-balancer.ankra.cloud/network-id": "net-1" };
  await createService(unnamed, { ipFamilies: ["IPv6"], ipFamilyPolicy: "SingleStack" });
  await createService(ipv6, { ipFamilies: ["IPv6"], ipFamilyPolicy: "SingleStack", annotations: named });
  await createService(dual, {
    ipFamilies: ["IPv6", "IPv4"],
    ipFamilyPolicy: "RequireDualStack",
    annotations: { ...named, "load-balancer.ankra.cloud/ipv4": "true" },
  });
  const lbOf = (name: string) =>
    [...sim.loadBalancers.items.values()].find((lb) => lb.labels["ccm.ankra.cloud/service"] === `default/${name}`);
  const membersOf = (name: string) => (lbOf(name)?.backends[0]?.members ?? []).map((m) => m.address).sort();
  try {
    // Nothing named, no network shared: the Warning asks the operator to name the load balancer's network.
    await eventually(
      async () => (await eventsFor(unnamed)).some((e) => e.reason === "SyncLoadBalancerFailed"),
      15_000,
      "the Warning",
    );
    const asked = (await eventsFor(unnamed)).find((e) => e.reason === "SyncLoadBalancerFailed")!;
    assert.match(
      asked.message,
      /do not share one Ankra private network: set the load-balancer\.ankra\.cloud\/network-id/,
    );
    assert.match(asked.message, /members by their public IPv6 address/);
    assert.equal(lbOf(unnamed), undefined);

    // Named: an IPv6 Service is served by the servers' public IPv6 addresses, without a Warning.
    await eventually(async () => ingressIps(await getService(ipv6)).length > 0, 20_000, "the IPv6 Service's address");
    assert.equal(lbOf(ipv6)!.network_id, "net-1");
    assert.deepEqual(membersOf(ipv6), [...publicIpv6].sort());
    assert.ok(!(await eventsFor(ipv6)).some((e) => e.type === "Warning"), "no Warning for the IPv6 Service");

    // Dual-stack: served over IPv6; the Warning names the nodes without an IPv4 address.
    await eventually(async () => ingressIps(await getService(dual)).length > 0, 20_000, "the dual-stack address");
    assert.deepEqual(membersOf(dual), [...publicIpv6].sort());
    await eventually(
      async () => (await eventsFor(dual)).some((e) => e.reason === "NodeWithoutMemberAddress"),
      10_000,
      "the notice",
    );
    const notice = (await eventsFor(dual)).find((e) => e.reason === "NodeWithoutMemberAddress")!;
    assert.match(
      notice.message,
      new RegExp(`^nodes ${nodes[0]} and ${nodes[1]} have no IPv4 address .*over IPv6 only`),
    );

    // Exclusion takes a node out, re-inclusion brings it back.
    const exclude = (value: string | null) =>
      kubeOk(testControlPlane(), "PATCH", `/api/v1/nodes/${nodes[1]}`, {
        body: { metadata: { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": value } } },
      });
    await exclude("true");
    await eventually(() => membersOf(ipv6).join() === publicIpv6[0], 15_000, "the excluded node out");
    await exclude(null);
    await eventually(
      () => membersOf(ipv6).join() === [...publicIpv6].sort().join(),
      15_000,
      "the node back",
    );
  } finally {
    for (const name of [unnamed, ipv6, dual]) await deleteService(name);
    for (const name of [unnamed, ipv6, dual]) {
      await eventually(async () => !(await serviceExists(name)), 15_000, "the Service gone");
    }
    await deleteNodes(nodes);
  }
});
