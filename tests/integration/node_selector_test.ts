/**
 * The `node-selector` annotation end to end (real kube-apiserver, simulator, the service controller in-process): the
 * members are the matching nodes and follow their labels; a selector matching none keeps the load balancer as it is,
 * with a `NoMatchingNodes` Warning; an invalid one is an `InvalidAnnotation`.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { eventually } from "../support/wait/eventually.ts";
import { kubeOk } from "../support/http/kube_http.ts";
import { startServiceController } from "../support/controller/service_controller.ts";
import {
  createNodes,
  createService,
  deleteNodes,
  deleteService,
  eventsFor,
  getService,
  ingressIps,
  NS,
  serviceExists,
} from "../support/controller/service_fixtures.ts";

const SELECTOR = "load-balancer.ankra.cloud/node-selector";

function label(node: string, value: string | null): Promise<unknown> {
  return kubeOk(testControlPlane(), "PATCH", `/api/v1/nodes/${node}`, {
    body: { metadata: { labels: { pool: value } } },
  });
}

Deno.test("node-selector: members are the matching nodes and follow their labels; none matching keeps the load balancer", async () => {
  await using env = await startServiceController();
  const { sim } = env.cloud.simulator;
  const nodes = await createNodes(3);
  await label(nodes[0], "edge");
  await label(nodes[1], "edge");
  const name = uniqueName("selected");
  await createService(name, { annotations: { [SELECTOR]: "pool=edge" } });
  const lbOf = () =>
    [...sim.loadBalancers.items.values()].find((lb) => lb.labels["ccm.ankra.cloud/service"] === `${NS}/${name}`);
  /** The nodes the members stand for (a member's name is its node's name, a dash and a hash). */
  const memberNodes = () =>
    (lbOf()?.backends[0]?.members ?? []).map((m) => nodes.find((n) => m.name.startsWith(`${n}-`)) ?? m.name).sort();
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000, "an address");
    assert.deepEqual(memberNodes(), [nodes[0], nodes[1]]);

    // A node gains the label: it becomes a member; one loses it: it leaves.
    await label(nodes[2], "edge");
    await label(nodes[0], "web");
    await eventually(
      () => memberNodes().join() === [nodes[1], nodes[2]].join(),
      10_000,
      "the members following the labels",
    );

    // No node matches: a Warning, and the load balancer keeps its members.
    const before = memberNodes();
    await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${name}`, {
      body: { metadata: { annotations: { [SELECTOR]: "pool=gpu" } } },
    });
    await eventually(async () => (await eventsFor(name)).some((e) => e.reason === "NoMatchingNodes"), 10_000);
    const warning = (await eventsFor(name)).find((e) => e.reason === "NoMatchingNodes")!;
    assert.equal(warning.type, "Warning");
    assert.match(warning.message, /"pool=gpu" matches no eligible node/);
    assert.deepEqual(memberNodes(), before, "the load balancer is kept as it is");

    // An invalid selector is an InvalidAnnotation naming it.
    await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${name}`, {
      body: { metadata: { annotations: { [SELECTOR]: "pool in (edge" } } },
    });
    await eventually(async () => (await eventsFor(name)).some((e) => e.reason === "InvalidAnnotation"), 10_000);
    const invalid = (await eventsFor(name)).find((e) => e.reason === "InvalidAnnotation")!;
    assert.match(invalid.message, /node-selector must have balanced parentheses/);
    assert.deepEqual(memberNodes(), before);
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000, "the Service gone");
    await deleteNodes(nodes);
  }
});
