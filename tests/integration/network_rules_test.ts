/**
 * The load balancer's network and its members, end to end (real kube-apiserver, simulator, service controller
 * in-process, `main.ts doctor` as a subprocess), in the two worlds that went wrong before:
 *
 * - worker-1's server is on network-1 and network-2 and its kubelet reports the network-2 address as InternalIP;
 *   worker-2's server is on network-1 only. The load balancer goes on network-1 and its members are both servers'
 *   network-1 addresses (the simulator, like the API, refuses the network-2 one); the doctor says ✓ and exits 0.
 * - ANKRA_CLOUD_NETWORK_ID is network-1 and worker-b's server has no leg on it: nothing is created, the Service's
 *   Warning names worker-b and what to do; the doctor says ✗ naming worker-b and exits 1. Excluding worker-b then
 *   serves the Service.
 *
 * Every test starts from a cluster without Nodes (test files run one after another, so this touches no other test's
 * objects).
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane.ts";
import { eventually } from "../support/eventually.ts";
import { kubeletNode, kubeOk } from "../support/kube_http.ts";
import { startServiceController } from "../support/service_controller.ts";
import {
  createService,
  deleteNodes,
  deleteService,
  eventsFor,
  getService,
  ingressIps,
  serviceExists,
} from "../support/service_fixtures.ts";
import { serverSeed, TEST_TOKEN, testSeed } from "../support/simulator.ts";

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
        `^✓ .*share net-1 \\(network-1, 10\\.0\\.0\\.0/16\\).*members: ${one} 10\\.0\\.0\\.5, ${two} 10\\.0\\.0\\.6$`,
      ),
    );
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000, "the Service gone");
    await deleteNodes([one, two]);
  }
});

Deno.test("a node with no address on the load balancer's network: nothing is created, the Warning and the doctor name it", async () => {
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
  await createNode(a, serverA.id, "10.0.0.7");
  await createNode(b, serverB.id, "10.1.0.8");
  const name = uniqueName("web");
  await createService(name, { ipFamilies: ["IPv4"], ipFamilyPolicy: "SingleStack" });
  try {
    await eventually(
      async () => (await eventsFor(name)).some((e) => e.reason === "SyncLoadBalancerFailed"),
      15_000,
      "the Warning",
    );
    const warning = (await eventsFor(name)).find((e) => e.reason === "SyncLoadBalancerFailed")!;
    assert.equal(warning.type, "Warning");
    assert.match(warning.message, new RegExp(`node ${b} \\(server ${serverB.id}\\) has no address on network net-1`));
    assert.match(warning.message, /attach its server to net-1/);
    // The decision comes before any create: the pass that recorded the Warning sent nothing.
    assert.equal(sim.loadBalancers.items.size, 0, "no load balancer");
    assert.equal(sim.count("create_load_balancer"), 0, "nothing billed");
    assert.deepEqual(ingressIps(await getService(name)), []);

    const doctor = await runDoctor(url, { ANKRA_CLOUD_NETWORK_ID: "net-1" });
    assert.equal(doctor.code, 1, doctor.stdout);
    assert.match(
      doctor.line,
      new RegExp(`^✗ .*: node ${b} \\(server ${serverB.id}\\) has no address on network net-1`),
    );
    assert.match(doctor.stdout, /\n {4}attach its server to net-1/);

    // The user excludes worker-b: the Service is served by worker-a alone.
    await kubeOk(testControlPlane(), "PATCH", `/api/v1/nodes/${b}`, {
      body: { metadata: { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "true" } } },
    });
    await eventually(async () => ingressIps(await getService(name)).length > 0, 20_000, "an address");
    const lb = [...sim.loadBalancers.items.values()][0];
    assert.deepEqual(lb.backends[0].members.map((m) => m.address), ["10.0.0.7"]);
    const after = await runDoctor(url, { ANKRA_CLOUD_NETWORK_ID: "net-1" });
    assert.equal(after.code, 0, after.stdout);
    assert.match(after.line, new RegExp(`^✓ .*members: ${a} 10\\.0\\.0\\.7$`));
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000, "the Service gone");
    await deleteNodes([a, b]);
  }
});
