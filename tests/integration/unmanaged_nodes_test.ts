/**
 * Nodes that are not Ankra servers (`node.ankra.cloud/managed=false`) end to end: the real kube-apiserver, the
 * simulator, the node controllers in-process. Such a node never being a load balancer member (the label coming and
 * going) runs over fakes in tests/unit/controllers/service/service_rules_test.ts.
 */
import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { eventsFor, kubeletNode, kubeOk, kubeRequest } from "../support/http/kube_http.ts";
import { eventually, startNodeControllers } from "../support/controller/node_controllers.ts";
import { serverSeed } from "../support/cloud/simulator.ts";

const UNMANAGED = { "node.ankra.cloud/managed": "false" };
const UNINITIALIZED = "node.cloudprovider.kubernetes.io/uninitialized";

function getNode(name: string): Promise<V1Node> {
  return kubeOk<V1Node>(testControlPlane(), "GET", `/api/v1/nodes/${name}`);
}

async function nodeExists(name: string): Promise<boolean> {
  return (await kubeRequest(testControlPlane(), "GET", `/api/v1/nodes/${name}`)).status === 200;
}

Deno.test("a node labelled node.ankra.cloud/managed=false is never looked up, initialised, tainted or deleted, and gets no event", async () => {
  await using env = await startNodeControllers();
  const sim = env.cloud.simulator.sim;
  const onPrem = uniqueName("onprem");
  const lookalike = uniqueName("lookalike");
  const control = uniqueName("control");
  // On-premises: no server of its name, the kubelet's uninitialized taint, NotReady.
  await kubeOk(testControlPlane(), "POST", "/api/v1/nodes", {
    body: kubeletNode(onPrem, { labels: UNMANAGED, ready: false }),
  });
  // Two nodes whose providerID names a stopped server, NotReady: one labelled, one not (the control).
  const servers = [lookalike, control].map((hostname) =>
    sim.world.addServer(serverSeed({ hostname, zone: "de-fsn1" }))
  );
  for (const server of servers) server.state = "stopped";
  for (const [i, name] of [lookalike, control].entries()) {
    await kubeOk(testControlPlane(), "POST", "/api/v1/nodes", {
      body: kubeletNode(name, {
        providerID: `ankracloud://de-fsn1/${servers[i].id}`,
        labels: name === lookalike ? UNMANAGED : {},
        ready: false,
      }),
    });
  }
  try {
    // The control is initialised and gets the shutdown taint; then its server goes and the node with it.
    await eventually(
      async () => (await getNode(control)).spec?.taints?.some((t) => t.key.endsWith("/shutdown")) ?? false,
      15_000,
      "the control node tainted as shut down",
    );
    for (const server of servers) sim.world.servers.delete(server.id);
    await eventually(async () => !(await nodeExists(control)), 20_000, "the control node deleted");
    // Meanwhile the labelled nodes were left exactly as the kubelet registered them.
    for (const name of [onPrem, lookalike]) {
      const node = await getNode(name);
      const taints = (node.spec?.taints ?? []).map((t) => t.key);
      assert.ok(taints.includes(UNINITIALIZED), `${name}: the kubelet's taint is not ours to remove`);
      assert.ok(!taints.some((key) => key.endsWith("/shutdown")), `${name}: never tainted as shut down`);
      assert.equal(node.metadata?.labels?.["topology.kubernetes.io/zone"], undefined, `${name}: no labels written`);
      assert.deepEqual(await eventsFor(testControlPlane(), name), [], `${name}: no event`);
    }
    assert.equal((await getNode(onPrem)).spec?.providerID, undefined, "no providerID given");
    const lookups = sim.log.filter((e) =>
      e.path.includes(onPrem) || e.path.includes(lookalike) || e.path.includes(servers[0].id)
    );
    assert.deepEqual(lookups.map((e) => e.path), [], "never looked up by hostname or server id");
  } finally {
    for (const name of [onPrem, lookalike, control]) {
      await kubeRequest(testControlPlane(), "DELETE", `/api/v1/nodes/${name}`);
    }
  }
});
