/**
 * Graceful drain end to end (real kube-apiserver, simulator, the service controller in-process, a 3 s drain period):
 * a node that stops being a member first gets weight 0 and leaves once the period is over; nodes leaving together
 * leave in one member replacement; a node that comes back during its drain gets its weight back and is never removed.
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
  getService,
  ingressIps,
  NS,
  serviceExists,
} from "../support/controller/service_fixtures.ts";

const DRAIN_MS = 3_000;

function exclude(node: string, value: string | null): Promise<unknown> {
  return kubeOk(testControlPlane(), "PATCH", `/api/v1/nodes/${node}`, {
    body: { metadata: { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": value } } },
  });
}

Deno.test("drain: weight 0 first, removed after the period; leaving together is one step; coming back keeps the member", async () => {
  await using env = await startServiceController({ memberDrainMs: DRAIN_MS });
  const { sim } = env.cloud.simulator;
  const nodes = await createNodes(4);
  const name = uniqueName("drain");
  await createService(name);
  const members = () => {
    const lb = [...sim.loadBalancers.items.values()].find((l) =>
      l.labels["ccm.ankra.cloud/service"] === `${NS}/${name}`
    );
    return new Map((lb?.backends[0]?.members ?? []).map((m) => [nodes.find((n) => m.name.startsWith(`${n}-`))!, m]));
  };
  const weight = (node: string) => members().get(node)?.weight;
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000, "an address");
    assert.equal(members().size, 4);

    // nodes[3] is excluded: weight 0 at once, still a member; gone after the period, in a second replacement.
    const replaces = sim.count("replace_load_balancer_members");
    const excludedAt = performance.now();
    await exclude(nodes[3], "true");
    await eventually(() => weight(nodes[3]) === 0, 5_000, "weight 0");
    assert.ok(members().has(nodes[3]), "draining, not removed");
    await eventually(() => !members().has(nodes[3]), DRAIN_MS + 5_000, "removed after the drain");
    const drainedFor = performance.now() - excludedAt;
    assert.ok(drainedFor >= DRAIN_MS, `removed after ${drainedFor.toFixed(0)} ms, not before the period`);
    assert.equal(sim.count("replace_load_balancer_members") - replaces, 2, "one replacement per step");

    // nodes[1] and nodes[2] leave together; nodes[2] comes back during the drain.
    const before = sim.count("replace_load_balancer_members");
    await exclude(nodes[1], "true");
    await exclude(nodes[2], "true");
    await eventually(() => weight(nodes[1]) === 0 && weight(nodes[2]) === 0, 5_000, "both draining");
    await exclude(nodes[2], null);
    await eventually(() => weight(nodes[2]) === 100, 5_000, "the weight given back");
    await eventually(() => !members().has(nodes[1]), DRAIN_MS + 5_000, "nodes[1] removed");
    assert.ok(members().has(nodes[2]), "the node that came back was never removed");
    assert.deepEqual([...members().keys()].sort(), [nodes[0], nodes[2]].sort());
    assert.ok(sim.count("replace_load_balancer_members") - before <= 3, "drain, weight back, removal");
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000, "the Service gone");
    await deleteNodes(nodes);
  }
});
