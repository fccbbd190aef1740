/**
 * Sharing and keeping a load balancer, proven by traffic (the real kube-apiserver, the service controller in-process,
 * the simulator with its loopback data plane; each Node an echo server on each Service's node port):
 *
 * - two Services with one `load-balancer.ankra.cloud/share` key: one load balancer, one published IPv4, each Service's
 *   port answered by its own Pods' node port; a controller started again makes no second one; one Service deleted:
 *   its port is refused, the other's still answered; the last one deleted: the load balancer goes;
 * - `preserve-on-delete` then `load-balancer-id`: a Service deleted and made again under another name answers on the
 *   same address.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { eventually } from "../support/wait/eventually.ts";
import { startServiceController } from "../support/controller/service_controller.ts";
import { createServedNode, testSeed } from "../support/cloud/simulator.ts";
import {
  createService,
  deleteNodes,
  deleteService,
  getService,
  ingressIps,
  serviceExists,
} from "../support/controller/service_fixtures.ts";
import { firstLine, type TcpMember, tcpMember } from "../support/cloud/data_plane_fixtures.ts";

/** A seed whose network and public IPv4 range sit in 127.0.0.0/8, served by the loopback data plane. */
function loopbackSeed() {
  const octet = 20 + (crypto.getRandomValues(new Uint8Array(1))[0] % 200);
  return {
    octet,
    seed: testSeed({
      settings: { data_plane: "loopback", loopback_ipv4_range: `127.${octet}.113.0/24` },
      networks: [{
        id: "net-1",
        name: "private",
        zone: "de-fsn1",
        cidr: `127.${octet}.0.0/16`,
        ula_prefix: "fd64:1:0:1::/64",
      }],
    }),
  };
}

const randomPort = () => 20_000 + (crypto.getRandomValues(new Uint16Array(1))[0] % 9_000);
const IPV4 = { "load-balancer.ankra.cloud/ipv4": "true" };

async function publishedIpv4(name: string, octet: number): Promise<string> {
  return await eventually(
    async () => ingressIps(await getService(name)).find((ip) => ip.startsWith(`127.${octet}.113.`)),
    { timeoutMs: 20_000, what: `${name}'s published IPv4` },
  );
}

/** Echo servers named `<service>@<node>` on `nodePort` of every node. */
function echoes(service: string, nodePort: number, nodes: string[], addresses: string[]): TcpMember[] {
  return nodes.map((node, i) => tcpMember(`${service}@${node}`, addresses[i], nodePort));
}

Deno.test("two Services sharing a load balancer: one address, each port answered by its own Service", async () => {
  const { octet, seed } = loopbackSeed();
  await using env = await startServiceController({ seed });
  const sim = env.cloud.simulator.sim;
  const nodes = [uniqueName("shn-a"), uniqueName("shn-b")];
  const addresses = [`127.${octet}.0.21`, `127.${octet}.0.22`];
  for (const [i, name] of nodes.entries()) {
    await createServedNode(testControlPlane(), sim.world, { name, address: addresses[i] });
  }
  const api = uniqueName("api");
  const web = uniqueName("web");
  const [apiPort, webPort] = [randomPort(), randomPort() + 1];
  const share = { "load-balancer.ankra.cloud/share": "front", ...IPV4 };
  await createService(api, { ports: [{ port: apiPort }], annotations: share });
  await createService(web, { ports: [{ port: webPort }], annotations: share });
  const servers = [
    ...echoes(api, (await getService(api)).spec!.ports![0].nodePort!, nodes, addresses),
    ...echoes(web, (await getService(web)).spec!.ports![0].nodePort!, nodes, addresses),
  ];
  try {
    const address = await publishedIpv4(api, octet);
    assert.equal(await publishedIpv4(web, octet), address, "both Services publish the same address");
    assert.equal(sim.loadBalancers.items.size, 1, "one load balancer");
    const ask = async (port: number) =>
      await eventually(() => firstLine(address, port), { what: `${address}:${port}` });
    assert.match(await ask(apiPort), new RegExp(`^${api}@`), "the api port reaches the api Service's node port");
    assert.match(await ask(webPort), new RegExp(`^${web}@`), "the web port reaches the web Service's node port");

    await env.stopController();
    env.startController();
    await eventually(async () => (await firstLine(address, webPort))?.startsWith(web), { what: "still answered" });
    assert.equal(sim.loadBalancers.items.size, 1, "a restarted controller makes no second one");

    await deleteService(web);
    await eventually(async () => !(await serviceExists(web)), { timeoutMs: 15_000, what: "web gone" });
    await eventually(async () => (await firstLine(address, webPort)) === undefined, { what: "the web port refused" });
    assert.match(await ask(apiPort), new RegExp(`^${api}@`), "the api port still answered");
    assert.equal(sim.loadBalancers.items.size, 1);

    await deleteService(api);
    await eventually(async () => !(await serviceExists(api)), { timeoutMs: 15_000, what: "api gone" });
    await eventually(
      () => sim.loadBalancers.items.size === 0 || [...sim.loadBalancers.items.values()][0].state === "deleting",
      {
        what: "the shared load balancer deleted with its last Service",
      },
    );
  } finally {
    for (const server of servers) server.close();
    for (const name of [api, web]) await deleteService(name).catch(() => {});
    await deleteNodes(nodes);
  }
});

Deno.test("preserve-on-delete and load-balancer-id: a Service made again under another name answers on the same address", async () => {
  const { octet, seed } = loopbackSeed();
  await using env = await startServiceController({ seed });
  const sim = env.cloud.simulator.sim;
  const node = uniqueName("pn");
  const nodeAddress = `127.${octet}.0.31`;
  await createServedNode(testControlPlane(), sim.world, { name: node, address: nodeAddress });
  const first = uniqueName("old");
  const second = uniqueName("new");
  const port = randomPort();
  await createService(first, {
    ports: [{ port }],
    annotations: { ...IPV4, "load-balancer.ankra.cloud/preserve-on-delete": "true" },
  });
  const oldServer = tcpMember(`${first}@${node}`, nodeAddress, (await getService(first)).spec!.ports![0].nodePort!);
  let newServer: TcpMember | undefined;
  try {
    const address = await publishedIpv4(first, octet);
    await eventually(async () => (await firstLine(address, port))?.startsWith(first), { what: "the first answers" });
    const [lb] = [...sim.loadBalancers.items.values()];
    await deleteService(first);
    await eventually(async () => !(await serviceExists(first)), { timeoutMs: 15_000, what: "the Service gone" });
    assert.equal(sim.loadBalancers.items.get(lb.id)?.labels["ccm.ankra.cloud/released"], `default.${first}`);
    await eventually(async () => (await firstLine(address, port)) === undefined, {
      what: "nothing forwarded meanwhile",
    });

    await createService(second, {
      ports: [{ port }],
      annotations: { ...IPV4, "load-balancer.ankra.cloud/load-balancer-id": lb.id },
    });
    newServer = tcpMember(`${second}@${node}`, nodeAddress, (await getService(second)).spec!.ports![0].nodePort!);
    assert.equal(await publishedIpv4(second, octet), address, "the same address");
    await eventually(async () => (await firstLine(address, port))?.startsWith(second), { what: "the new one answers" });
    assert.equal(sim.loadBalancers.items.size, 1, "nothing created");
  } finally {
    oldServer.close();
    newServer?.close();
    await deleteService(second).catch(() => {});
    await deleteNodes([node]);
  }
});
