/**
 * Node-address mode follows its servers' public addresses, end to end: the controller as a process (`main.ts`, the
 * chart's identity), the real kube-apiserver, the simulator. A dual-stack Service of the class
 * `ankra.cloud/node-addresses` is published on its node's server's public IPv4 and IPv6; the simulator's control API
 * then changes the server's IPv4 (the add-on released and another bought) and renumbers its /64, as Ankra Cloud does
 * under a running server. Each change reaches the Service's ingress within `--server-list-period` (here 2 s; the drift
 * check is the default 10 minutes, so it is not what finds it), with a Normal `NodeAddressesChanged` event naming the
 * old and the new address, and the controller keeps running. The Node's addresses follow as well, keeping kube-proxy's
 * node IPs as `lib/provider/node/kube_proxy_node_ips.ts` says: the IPv4 change leaves them as they are; the renumbered
 * IPv6, one of them, changes them (nothing can keep an address the server no longer has).
 */
import assert from "node:assert/strict";
import { kubeProxyNodeIps } from "../../lib/provider/node/kube_proxy_node_ips.ts";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { startReplica, stop } from "../support/controller/controller_process.ts";
import { eventually } from "../support/wait/eventually.ts";
import { eventsFor, kubeletNode, kubeOk, kubeRequest, serviceIngress } from "../support/http/kube_http.ts";
import { serverSeed, startTestCloud, TEST_TOKEN } from "../support/cloud/simulator.ts";

const NS = "default";
const SERVER_LIST_PERIOD_MS = 2_000;

/** The Node's addresses as the API server has them. */
async function nodeAddresses(name: string): Promise<{ type: string; address: string }[]> {
  const node = await kubeOk<{ status: { addresses?: { type: string; address: string }[] } }>(
    testControlPlane(),
    "GET",
    `/api/v1/nodes/${name}`,
  );
  return node.status.addresses ?? [];
}

Deno.test("a server's new public IPv4 and renumbered IPv6 reach a node-address Service within the server list period", async () => {
  const plane = testControlPlane();
  await using cloud = await startTestCloud();
  const node = uniqueName("follow");
  const service = uniqueName("follow-svc");
  const server = cloud.simulator.sim.world.addServer(serverSeed({
    hostname: node,
    zone: "de-fsn1",
    public_ipv4: "198.51.100.20",
    public_ipv6: "2001:db8:20::1",
    interfaces: [{ network_id: "net-1", address: "10.0.7.20" }],
  }));
  // A kubelet with --cloud-provider=external and --node-ip=10.0.7.20 (one family, as k3s's --node-ip).
  await kubeOk(plane, "POST", "/api/v1/nodes", {
    body: kubeletNode(node, {
      providedNodeIp: "10.0.7.20",
      addresses: [{ type: "InternalIP", address: "10.0.7.20" }, { type: "Hostname", address: node }],
    }),
  });
  const replica = await startReplica([
    `--cluster-name=${uniqueName("follow")}`,
    "--leader-elect=false",
    "--secure-port=0",
    `--server-list-period=${SERVER_LIST_PERIOD_MS / 1000}s`,
    "--node-status-update-frequency=1s",
  ], { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_API_URL: cloud.simulator.url });
  let exitedEarly = false;
  replica.exited.then(() => (exitedEarly = true));
  const change = async (body: Record<string, unknown>) => {
    const response = await fetch(`${cloud.simulator.url}/_simulator/servers/${server.id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 200, await response.text());
    return performance.now();
  };
  /** Waits until the Service's ingress is `expected`; the milliseconds since `since`. */
  const ingressBecomes = async (expected: string[], since: number) => {
    await eventually(
      async () => JSON.stringify(await serviceIngress(plane, NS, service)) === JSON.stringify(expected),
      30_000,
      `the ingress ${expected.join(", ")}`,
    );
    return performance.now() - since;
  };
  try {
    await kubeOk(plane, "POST", `/api/v1/namespaces/${NS}/services`, {
      body: {
        metadata: { name: service, namespace: NS },
        spec: {
          type: "LoadBalancer",
          loadBalancerClass: "ankra.cloud/node-addresses",
          ipFamilyPolicy: "PreferDualStack",
          ipFamilies: ["IPv4", "IPv6"],
          ports: [{ port: 80, targetPort: 8080 }],
        },
      },
    });
    await ingressBecomes(["198.51.100.20", "2001:db8:20::1"], performance.now());
    await eventually(
      async () => (await nodeAddresses(node)).some((a) => a.address === "198.51.100.20"),
      30_000,
      "the Node initialised with the server's addresses",
    );
    const proxyIps = kubeProxyNodeIps(await nodeAddresses(node));
    assert.deepEqual(proxyIps, ["10.0.7.20", "2001:db8:20::1"]);

    // The IPv4 add-on changes.
    const ipv4Changed = await change({ public_ipv4: "198.51.100.21" });
    const ipv4Ms = await ingressBecomes(["198.51.100.21", "2001:db8:20::1"], ipv4Changed);
    const events = await eventually(
      async () => {
        const found = (await eventsFor(plane, service)).filter((e) => e.reason === "NodeAddressesChanged");
        return found.length > 0 ? found : undefined;
      },
      10_000,
      "the NodeAddressesChanged event",
    );
    assert.equal(events[0].type, "Normal");
    assert.match(events[0].message, new RegExp(`IPv4 198\\.51\\.100\\.20 → 198\\.51\\.100\\.21 \\(node ${node}\\)`));
    assert.match(
      events[0].message,
      /now served on 198\.51\.100\.21, 2001:db8:20::1, before on 198\.51\.100\.20, 2001:db8:20::1/,
    );
    await eventually(
      async () => (await nodeAddresses(node)).some((a) => a.type === "ExternalIP" && a.address === "198.51.100.21"),
      15_000,
      "the Node's ExternalIP follows",
    );
    assert.deepEqual(kubeProxyNodeIps(await nodeAddresses(node)), proxyIps, "kube-proxy's node IPs stay");

    // The /64 is in a pool being drained, then renumbered.
    await change({ ipv6_renumber_available: true });
    const renumbered = await change({ public_ipv6: "2001:db8:21::1" });
    const ipv6Ms = await ingressBecomes(["198.51.100.21", "2001:db8:21::1"], renumbered);
    await eventually(
      async () =>
        (await eventsFor(plane, service)).some((e) =>
          e.reason === "NodeAddressesChanged" && e.message.includes("IPv6 2001:db8:20::1 → 2001:db8:21::1")
        ),
      10_000,
      "the event of the renumbering",
    );
    await eventually(
      async () => (await nodeAddresses(node)).some((a) => a.address === "2001:db8:21::1"),
      15_000,
      "the Node's IPv6 follows",
    );
    assert.deepEqual(
      kubeProxyNodeIps(await nodeAddresses(node)),
      ["10.0.7.20", "2001:db8:21::1"],
      "the old IPv6 is gone from the server: kube-proxy's second node IP moves with it",
    );
    console.log(
      `ingress followed the IPv4 change after ${ipv4Ms.toFixed(0)} ms and the renumbering after ${
        ipv6Ms.toFixed(0)
      } ms ` +
        `(server list period ${SERVER_LIST_PERIOD_MS} ms)`,
    );
    // Within the period, plus the pass itself and this test's polling; far below the 10-minute drift check.
    for (const ms of [ipv4Ms, ipv6Ms]) assert.ok(ms < SERVER_LIST_PERIOD_MS + 5_000, `followed after ${ms} ms`);
    assert.equal(
      replica.lines.filter((l) => /provider initialised/.test(l.text)).length,
      1,
      "the controller never restarted",
    );
    assert.equal(exitedEarly, false, "the controller still runs");
    assert.equal(cloud.simulator.sim.loadBalancers.items.size, 0, "no Ankra load balancer throughout");
  } finally {
    await kubeRequest(plane, "DELETE", `/api/v1/namespaces/${NS}/services/${service}`);
    await eventually(
      async () => (await kubeRequest(plane, "GET", `/api/v1/namespaces/${NS}/services/${service}`)).status === 404,
      15_000,
      "the Service gone (its finalizer removed)",
    ).catch(() => {});
    await stop(replica);
    await kubeRequest(plane, "DELETE", `/api/v1/nodes/${node}`);
  }
});
