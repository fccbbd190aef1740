// deno-lint-ignore-file no-explicit-any -- state documents are read field by field
/**
 * End to end with the controller and the loopback data plane: a LoadBalancer Service over two Nodes whose servers sit
 * on a network inside 127.0.0.0/8, each Node running an echo server on the Service's node port — connections to the
 * Service's published IPv4 reach both; once a Node is excluded from load balancers, its echo server gets no new
 * connection. The real kube-apiserver, the service controller in-process, the simulator with its data plane.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { kubeOk } from "../support/http/kube_http.ts";
import { eventually } from "../support/wait/eventually.ts";
import { createServedNode, testSeed } from "../support/cloud/simulator.ts";
import { startServiceController } from "../support/controller/service_controller.ts";
import {
  createService,
  deleteNodes,
  deleteService,
  getService,
  ingressIps,
  serviceExists,
} from "../support/controller/service_fixtures.ts";
import { askName, tcpMember } from "../support/cloud/data_plane_fixtures.ts";

Deno.test("a LoadBalancer Service's address carries connections to both Nodes, and an excluded Node gets none", async () => {
  const octet = 20 + (crypto.getRandomValues(new Uint8Array(1))[0] % 200);
  const seed = testSeed({
    settings: { data_plane: "loopback", loopback_ipv4_range: `127.${octet}.113.0/24` },
    networks: [{
      id: "net-1",
      name: "private",
      zone: "de-fsn1",
      cidr: `127.${octet}.0.0/16`,
      ula_prefix: "fd64:1:0:1::/64",
    }],
  });
  await using env = await startServiceController({ seed });
  const sim = env.cloud.simulator.sim;
  const plane = testControlPlane();
  const nodes = [uniqueName("dpn-a"), uniqueName("dpn-b")];
  const addresses = [`127.${octet}.0.11`, `127.${octet}.0.12`];
  for (const [i, name] of nodes.entries()) await createServedNode(plane, sim.world, { name, address: addresses[i] });
  const name = uniqueName("traffic");
  const port = 20_000 + (crypto.getRandomValues(new Uint16Array(1))[0] % 9_000);
  await createService(name, { ports: [{ port }], annotations: { "load-balancer.ankra.cloud/ipv4": "true" } });
  const nodePort = (await getService(name)).spec!.ports![0].nodePort!;
  const echo = nodes.map((node, i) => tcpMember(node, addresses[i], nodePort));
  try {
    let ipv4 = "";
    await eventually(
      async () => {
        ipv4 = ingressIps(await getService(name)).find((ip) => ip.startsWith(`127.${octet}.113.`)) ?? "";
        return ipv4 !== "";
      },
      20_000,
      "the Service's published IPv4",
    );
    const published = ingressIps(await getService(name));
    assert.equal(published[0], ipv4, "an IPv4 Service lists its IPv4 first (ingress[0] is what pods and scripts call)");
    assert.ok(published.slice(1).every((ip) => ip.includes(":")) && published.length >= 2, `${published}`);
    const members = async () => {
      const state = await (await fetch(`${env.cloud.simulator.url}/_simulator/state`)).json();
      return state.load_balancers.flatMap((lb: any) => lb.backends.flatMap((b: any) => b.members));
    };
    await eventually(
      async () => {
        const all = await members();
        return all.length === 2 && all.every((m: any) => m.health === "up" && m.port === nodePort);
      },
      10_000,
      "both Nodes members, up, on the node port",
    );

    const answered = new Set<string | undefined>();
    for (let i = 0; i < 20; i++) answered.add(await askName(ipv4, port));
    assert.deepEqual([...answered].sort(), [...nodes].sort(), `connections to ${ipv4}:${port} reach both Nodes`);

    await kubeOk(plane, "PATCH", `/api/v1/nodes/${nodes[0]}`, {
      body: { metadata: { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "true" } } },
    });
    await eventually(
      async () => {
        const all = await members();
        return !all.some((m: any) => m.address === addresses[0] && m.enabled);
      },
      10_000,
      "the excluded Node no longer an enabled member",
    );
    const servedBefore = echo[0].served;
    const after: (string | undefined)[] = [];
    for (let i = 0; i < 20; i++) after.push(await askName(ipv4, port));
    assert.deepEqual(after, Array(20).fill(nodes[1]), "every new connection reaches the Node still included");
    assert.equal(echo[0].served, servedBefore, "the excluded Node's echo server got no new connection");
  } finally {
    for (const member of echo) member.close();
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000, "Service gone");
    await deleteNodes(nodes);
  }
});
