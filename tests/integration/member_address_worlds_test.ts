/**
 * The member-address rule in a mixed world, end to end (real kube-apiserver, simulator, service controller
 * in-process, `main.ts doctor` as a subprocess): worker-a's server has a leg on the named network, worker-b's has none
 * (only its public IPv6). A dual-stack Service is served by worker-a's leg (IPv4 and its ULA address) and worker-b's
 * public IPv6; IPv4 leaves worker-b out with a Warning naming it; the doctor warns the same way. 300 IPv6-only servers
 * run over fakes in tests/unit/controllers/service/ipv6_only_members_test.ts.
 *
 * The test starts from a cluster without Nodes (test files run one after another).
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
import { serverSeed, TEST_TOKEN } from "../support/cloud/simulator.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

/** An initialised Node of server `serverId`, its kubelet reporting `addresses` (InternalIP) first. */
async function createNode(name: string, serverId: string, addresses: string[]): Promise<void> {
  const node = kubeletNode(name, {
    providerID: `ankracloud://de-fsn1/${serverId}`,
    labels: { "topology.kubernetes.io/zone": "de-fsn1" },
    addresses: [
      ...addresses.map((address) => ({ type: "InternalIP", address })),
      { type: "Hostname", address: name },
    ],
  }) as { spec: { taints: unknown[] } };
  node.spec.taints = [];
  await kubeOk(testControlPlane(), "POST", "/api/v1/nodes", { body: node });
}

Deno.test("a mixed world: a server with a leg is a member by it, one without by its public IPv6, and IPv4 names the one left out", async () => {
  await kubeOk(testControlPlane(), "DELETE", "/api/v1/nodes");
  await using env = await startServiceController({ networkId: "net-1" });
  const { sim, url } = env.cloud.simulator;
  const a = uniqueName("worker-a");
  const b = uniqueName("worker-b");
  const serverA = sim.world.addServer(serverSeed({
    hostname: a,
    zone: "de-fsn1",
    interfaces: [{ network_id: "net-1", address: "10.0.0.21" }],
  }));
  const serverB = sim.world.addServer(serverSeed({ hostname: b, zone: "de-fsn1" }));
  const legA = sim.world.servers.get(serverA.id)!.interfaces[0];
  // worker-a's kubelet reports its public IPv6 and its leg; worker-b's only its public IPv6.
  await createNode(a, serverA.id, [serverA.public_ipv6!, "10.0.0.21"]);
  await createNode(b, serverB.id, [serverB.public_ipv6!]);
  const name = uniqueName("mixed");
  await createService(name, { ipFamilies: ["IPv4", "IPv6"], ipFamilyPolicy: "RequireDualStack" });
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 20_000, "an address");
    const lb = [...sim.loadBalancers.items.values()].find((l) =>
      l.labels["ccm.ankra.cloud/service"] === `default/${name}`
    )!;
    assert.equal(lb.network_id, "net-1");
    const members = lb.backends[0].members.map((m) => m.address).sort();
    assert.deepEqual(
      members,
      ["10.0.0.21", legA.address6, serverB.public_ipv6!].sort(),
      "worker-a by its leg (IPv4 and ULA), worker-b by its public IPv6; never an address the kubelet chose",
    );
    assert.ok(!members.includes(serverA.public_ipv6!), "worker-a serves IPv6 by its leg, not its public address");
    await eventually(
      async () => (await eventsFor(name)).some((e) => e.reason === "NodeWithoutMemberAddress"),
      10_000,
      "the notice",
    );
    const notice = (await eventsFor(name)).find((e) => e.reason === "NodeWithoutMemberAddress")!;
    assert.equal(notice.type, "Warning");
    assert.match(notice.message, new RegExp(`^node ${b} \\(server ${serverB.id}\\) has no IPv4 address`));
    assert.ok(!notice.message.includes(a), "worker-a is not named");

    const doctor = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", MAIN, "doctor", `--kubeconfig=${testControlPlane().kubeconfigPath}`],
      env: {
        ANKRA_CLOUD_TOKEN: TEST_TOKEN,
        ANKRA_CLOUD_TOKEN_FILE: "",
        ANKRA_CLOUD_API_URL: url,
        ANKRA_CLOUD_NETWORK_ID: "net-1",
      },
      stdout: "piped",
      stderr: "piped",
      stdin: "null",
    }).output();
    const stdout = new TextDecoder().decode(doctor.stdout);
    const line = stdout.split("\n").find((l) => l.includes("One private network for load balancers")) ?? "";
    assert.equal(doctor.code, 0, stdout);
    assert.match(line, new RegExp(`^! .*node ${b} \\(server ${serverB.id}\\) has no IPv4 address`), stdout);
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000, "the Service gone");
    await deleteNodes([a, b]);
  }
});
