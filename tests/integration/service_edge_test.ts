/**
 * Services on a combined edge end to end: members beside others on the edge, its address as the Service's, moving off
 * and back, refused ports. The real kube-apiserver, the Ankra Cloud simulator, the service controller in-process.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { kubeOk } from "../support/http/kube_http.ts";
import { eventually } from "../support/wait/eventually.ts";
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
import { startServiceController } from "../support/controller/service_controller.ts";
import { moreReads } from "../support/cloud/cloud_passes.ts";
import { testSeed } from "../support/cloud/simulator.ts";
import { edgeClusterPrefix } from "../../lib/provider/service/load_balancer_names.ts";

const EDGE_SEED = () =>
  testSeed({
    edges: [{
      id: "edge-1",
      network_id: "net-1",
      roles: ["load_balancer", "nat_gateway"],
      placement: "combined",
      members: [{ name: "hand-made", frontend_port: 8443, address: "10.0.0.99", port: 443 }],
    }],
  });

async function setAnnotation(name: string, key: string, value: string | null): Promise<void> {
  await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${name}`, {
    body: { metadata: { annotations: { [key]: value } } },
  });
}

Deno.test("edge mode: members on the combined edge beside others, status from the edge, and a clean exit", async () => {
  await using env = await startServiceController({ seed: EDGE_SEED(), driftCheckMs: 500 });
  const sim = env.cloud.simulator.sim;
  const edge = sim.edges.get("edge-1");
  const nodes = await createNodes(2);
  const name = uniqueName("edge");
  await createService(name, { annotations: { "load-balancer.ankra.cloud/edge": "edge-1" } });
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000, "edge address");
    // An IPv4 Service (the test cluster is IPv4-only): the edge's IPv4 first.
    assert.deepEqual(ingressIps(await getService(name)), [edge.machines[0].public_ipv4, edge.machines[0].public_ipv6]);
    assert.equal(sim.loadBalancers.items.size, 0, "no dedicated load balancer in edge mode");
    const mine = edge.members.filter((m) => m.name !== "hand-made");
    assert.equal(mine.length, 2);
    const clusterPrefix = edgeClusterPrefix(env.clusterUid);
    assert.ok(
      mine.every((m) => m.name.startsWith(clusterPrefix) && /^k[0-9a-f]{6}-[0-9a-f]{8}-[0-9a-f]{8}$/.test(m.name)),
      "named with the cluster's identity",
    );
    assert.ok(mine.every((m) => m.frontend_port === 80));
    assert.ok(edge.members.some((m) => m.name === "hand-made" && m.frontend_port === 8443), "other members kept");
    const updates = sim.count("update_edge");
    const unfilteredLists = () =>
      sim.log.filter((e) => e.operation === "list_load_balancers" && !e.path.includes("label=")).length;
    const scans = unfilteredLists();
    await moreReads(sim, { operation: "get_edge", pathIncludes: "edge-1" }, { count: 2 });
    assert.equal(sim.count("update_edge"), updates, "steady state: no edge writes");
    assert.equal(unfilteredLists(), scans, "steady state never lists the whole account");
    // Leaving edge mode: the members go from the edge and a dedicated load balancer serves the Service.
    await setAnnotation(name, "load-balancer.ankra.cloud/edge", null);
    await eventually(
      () => edge.members.length === 1 && sim.loadBalancers.items.size === 1,
      15_000,
      "moved off the edge",
    );
    const lb = [...sim.loadBalancers.items.values()][0];
    await eventually(async () => ingressIps(await getService(name))[0] === lb.public_ipv6_addresses[0], 15_000);
    // And back: the dedicated load balancer is retired.
    await setAnnotation(name, "load-balancer.ankra.cloud/edge", "edge-1");
    await eventually(() => edge.members.length === 3 && sim.loadBalancers.items.size === 0, 15_000, "back on the edge");
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    assert.deepEqual(edge.members.map((m) => m.name), ["hand-made"], "deleting the Service removes its members");
    await deleteNodes(nodes);
  }
});

Deno.test("edge mode refuses a port another member already serves, with a clear event and no change", async () => {
  await using env = await startServiceController({ seed: EDGE_SEED() });
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const name = uniqueName("clash");
  await createService(name, {
    ports: [{ port: 8443 }],
    annotations: { "load-balancer.ankra.cloud/edge": "edge-1" },
  });
  try {
    await eventually(async () =>
      (await eventsFor(name)).some((e) => /already served by member hand-made/.test(e.message))
    );
    assert.equal(sim.count("update_edge"), 0);
    assert.deepEqual(ingressIps(await getService(name)), []);
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    await deleteNodes(nodes);
  }
});

Deno.test("an edge without an address yet is not reported as ready", async () => {
  await using env = await startServiceController({
    seed: testSeed({ settings: { edge_sync_delay_ms: 2500 } }),
  });
  const sim = env.cloud.simulator.sim;
  const { edge } = sim.edges.create({ network_id: "net-1", roles: ["load_balancer"], placement: "combined" });
  const nodes = await createNodes(1);
  const name = uniqueName("edge-new");
  await createService(name, { annotations: { "load-balancer.ankra.cloud/edge": edge.id } });
  try {
    await eventually(() => edge.members.length === 1, 10_000, "member written");
    assert.equal(edge.state, "creating");
    assert.deepEqual(ingressIps(await getService(name)), []);
    await eventually(async () => ingressIps(await getService(name)).length === 2, 15_000, "address once running");
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000);
    await deleteNodes(nodes);
  }
});
