/**
 * A server whose `public_ipv6` is private (`public_ipv6_is_private`: a ULA that only Ankra Cloud reaches) is published
 * as the Node's InternalIP, not ExternalIP (the Go controller published it as ExternalIP), end to end: the real
 * kube-apiserver, the simulator, the node controllers in-process.
 */
import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { kubeletNode, kubeOk, kubeRequest } from "../support/http/kube_http.ts";
import { eventually, startNodeControllers } from "../support/controller/node_controllers.ts";

const UNINITIALIZED = "node.cloudprovider.kubernetes.io/uninitialized";

function getNode(name: string): Promise<V1Node> {
  return kubeOk<V1Node>(testControlPlane(), "GET", `/api/v1/nodes/${name}`);
}

Deno.test("a server's private public_ipv6 is the Node's InternalIP; a public one stays ExternalIP", async () => {
  await using env = await startNodeControllers();
  const { world } = env.cloud.simulator.sim;
  const privateName = uniqueName("ula");
  const publicName = uniqueName("gua");
  const privateServer = world.addServer({
    hostname: privateName,
    zone: "de-fsn1",
    plan: "standard-2c-4g",
    state: "started",
    public_ipv6: "fd00:ab:cd::1",
    public_ipv6_is_private: true,
    labels: {},
    interfaces: [{ network_id: "net-1", address: "10.0.4.15" }],
  });
  const publicServer = world.addServer({
    hostname: publicName,
    zone: "de-fsn1",
    plan: "standard-2c-4g",
    state: "started",
    labels: {},
    interfaces: [],
  });
  for (const name of [privateName, publicName]) {
    await kubeOk(testControlPlane(), "POST", "/api/v1/nodes", {
      body: kubeletNode(name, { addresses: [{ type: "Hostname", address: name }] }),
    });
  }
  try {
    for (const name of [privateName, publicName]) {
      await eventually(
        async () => !(await getNode(name)).spec?.taints?.some((t) => t.key === UNINITIALIZED),
        10_000,
        `${name} initialised`,
      );
    }
    assert.deepEqual((await getNode(privateName)).status?.addresses, [
      { type: "InternalIP", address: privateServer.public_ipv6! },
      { type: "InternalIP", address: "fd64:1:0:1::a00:40f" },
      { type: "InternalIP", address: "10.0.4.15" },
      { type: "Hostname", address: privateName },
    ]);
    assert.deepEqual((await getNode(publicName)).status?.addresses, [
      { type: "ExternalIP", address: publicServer.public_ipv6! },
      { type: "Hostname", address: publicName },
    ]);
  } finally {
    for (const name of [privateName, publicName]) {
      await kubeRequest(testControlPlane(), "DELETE", `/api/v1/nodes/${name}`);
    }
  }
});
