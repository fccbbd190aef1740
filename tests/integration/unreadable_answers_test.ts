/**
 * Creates whose answer cannot be read, end to end (issue 44): the real kube-apiserver, the Ankra Cloud simulator with
 * scripted `phase: "after"` faults (the request runs, then its answer is spoiled or lost) and the service controller
 * in-process. For every kind of unreadable answer of `create_load_balancer` — a 202 of the wrong shape, one that is not
 * JSON, a connection broken mid-answer, a 500 after the create ran, and the wrong shape on every attempt until the
 * retries run out — each Service ends with exactly one load balancer, whose address is in its status. The same faults
 * on `update_edge` (a Service on a combined edge, which the API's `create_edge` made: its members are written with
 * `update_edge`) leave the Service's members on the edge once, and no load balancer.
 */
import assert from "node:assert/strict";
import { SERVICE_LABEL } from "../../lib/ankra_names.ts";
import type { Fault } from "../../simulator/faults.ts";
import { uniqueName } from "../support/control_plane/control_plane.ts";
import { moreReads } from "../support/cloud/cloud_passes.ts";
import { eventually } from "../support/wait/eventually.ts";
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
import { startServiceController } from "../support/controller/service_controller.ts";
import { testSeed } from "../support/cloud/simulator.ts";

/** The faults of the table, and the 5xx after the request ran. */
function unreadable(operation: string): [string, Fault][] {
  return [
    ["a 202 of the wrong shape", { operation, malformed: "shape", phase: "after", times: 1 }],
    ["a 202 that is not JSON", { operation, malformed: "json", phase: "after", times: 1 }],
    ["a connection broken mid-answer", { operation, drop: true, phase: "after", times: 1 }],
    ["a 500 after the request ran", { operation, status: 500, phase: "after", times: 1 }],
  ];
}

Deno.test("create_load_balancer answered unreadably or not at all: one load balancer per Service, served", async () => {
  await using env = await startServiceController();
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const cases: [string, Fault][] = [
    ...unreadable("create_load_balancer"),
    // Every attempt spoiled: the client's five attempts run out, the pass fails with outcomeUnknown, and the next
    // pass finds the load balancer by its labels instead of creating another.
    [
      "the wrong shape on all five attempts",
      { operation: "create_load_balancer", malformed: "shape", phase: "after", times: 5 },
    ],
  ];
  const names: string[] = [];
  try {
    for (const [what, fault] of cases) {
      const name = uniqueName("unread");
      names.push(name);
      const before = sim.log.length;
      sim.faults.add(fault);
      await createService(name);
      await eventually(async () => ingressIps(await getService(name)).length > 0, 30_000, `${what}: served`);
      const mine = [...sim.loadBalancers.items.values()].filter((lb) => lb.labels[SERVICE_LABEL] === `${NS}/${name}`);
      assert.equal(mine.length, 1, `${what}: exactly one load balancer`);
      const addresses = [mine[0].public_ipv4, ...mine[0].public_ipv6_addresses];
      const ips = ingressIps(await getService(name));
      assert.ok(ips.every((ip) => addresses.includes(ip)), `${what}: the status ${ips} shows its addresses`);
      const creates = sim.log.slice(before).filter((e) => e.operation === "create_load_balancer");
      assert.equal(new Set(creates.map((e) => e.idempotencyKey)).size, 1, `${what}: every create with one key`);
      assert.deepEqual(sim.faults.pending(), [], `${what}: the fault struck`);
      console.log(
        `${what}: ${creates.length} create request(s), statuses ${creates.map((e) => e.status).join(" ")}, ` +
          `replayed ${creates.filter((e) => e.replayed).length}; one load balancer (${mine[0].id}), served`,
      );
    }
    // Two more drift checks of every Service: still one each, nothing created late.
    const creates = sim.count("create_load_balancer");
    await moreReads(sim, { operation: "get_load_balancer" }, { count: 2 * names.length, timeoutMs: 30_000 });
    assert.equal(sim.count("create_load_balancer"), creates, "no create after the Services were served");
    for (const name of names) {
      const mine = [...sim.loadBalancers.items.values()].filter((lb) => lb.labels[SERVICE_LABEL] === `${NS}/${name}`);
      assert.equal(mine.length, 1, `${name}: one load balancer`);
    }
  } finally {
    for (const name of names) await deleteService(name);
    for (const name of names) await eventually(async () => !(await serviceExists(name)), 30_000).catch(() => {});
    await deleteNodes(nodes);
  }
});

Deno.test("update_edge answered unreadably or not at all: the Service's members on the edge once, served", async () => {
  await using env = await startServiceController({
    seed: testSeed({ edges: [{ id: "edge-1", network_id: "net-1", roles: ["load_balancer"], placement: "combined" }] }),
  });
  const sim = env.cloud.simulator.sim;
  const edge = sim.edges.get("edge-1");
  const nodes = await createNodes(2);
  const names: string[] = [];
  try {
    let port = 8000;
    for (const [what, fault] of unreadable("update_edge")) {
      const name = uniqueName("edge-unread");
      names.push(name);
      const servicePort = ++port;
      sim.faults.add(fault);
      await createService(name, {
        ports: [{ port: servicePort }],
        annotations: { "load-balancer.ankra.cloud/edge": "edge-1" },
      });
      await eventually(async () => ingressIps(await getService(name)).length > 0, 30_000, `${what}: served`);
      assert.deepEqual(ingressIps(await getService(name)), [
        edge.machines[0].public_ipv4,
        edge.machines[0].public_ipv6,
      ]);
      const members = edge.members.filter((m) => m.frontend_port === servicePort);
      assert.equal(members.length, nodes.length, `${what}: one member per node`);
      assert.equal(new Set(members.map((m) => m.name)).size, members.length, `${what}: no member twice`);
      assert.deepEqual(sim.faults.pending(), [], `${what}: the fault struck`);
      console.log(`${what}: ${members.length} members on edge-1 for port ${servicePort}, served`);
    }
    assert.equal(sim.loadBalancers.items.size, 0, "no load balancer for Services on an edge");
    assert.equal(sim.count("create_load_balancer"), 0);
  } finally {
    for (const name of names) await deleteService(name);
    for (const name of names) await eventually(async () => !(await serviceExists(name)), 30_000).catch(() => {});
    await deleteNodes(nodes);
  }
});
