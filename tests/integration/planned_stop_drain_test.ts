/**
 * A planned stop drains first, end to end: the controller as a separate process (`main.ts`, every controller, a 2 s
 * server list, a 4 s member drain) against the real kube-apiserver and the simulator. A server's stop announced 20 s
 * ahead (its `active_operation`, its state unchanged meanwhile) takes its node out of a LoadBalancer Service's load
 * balancer as a drained member (weight 0) and then off it, and out of a node-address Service's ingress, all while the
 * server still runs — with a Normal `DrainingNode` on each Service, told once — and the other node keeps serving.
 * Nothing but the server list is read for it (no `get_server`, no `list_operations`). Once stopped, the node stays
 * out; started again, it is back.
 *
 * The rule over plain values (which nodes leave, a sole node kept): tests/unit/provider/service/
 * service_decision_test.ts.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { type Replica, startReplica, stop } from "../support/controller/controller_process.ts";
import { eventually } from "../support/wait/eventually.ts";
import { kubeletNode, kubeOk } from "../support/http/kube_http.ts";
import { deleteNode, getNode, tainted, UNINITIALIZED } from "../support/controller/node_fixtures.ts";
import {
  createService,
  deleteService,
  eventsFor,
  getService,
  ingressIps,
  NS,
} from "../support/controller/service_fixtures.ts";
import { serverSeed, startTestCloud, TEST_TOKEN, type TestCloud } from "../support/cloud/simulator.ts";

const LIST_PERIOD_MS = 2_000;
const DRAIN_MS = 4_000;
const STOP_IN_MS = 20_000;

/** A server `name` on net-1 with the public IPv4 `ipv4`, and its Node as its kubelet registers it, once initialised. */
async function initialisedNode(cloud: TestCloud, name: string, ipv4: string) {
  const server = cloud.simulator.sim.world.addServer(
    serverSeed({ hostname: name, zone: "de-fsn1", public_ipv4: ipv4, interfaces: [{ network_id: "net-1" }] }),
  );
  await kubeOk(testControlPlane(), "POST", "/api/v1/nodes", { body: kubeletNode(name) });
  await eventually(async () => !tainted(await getNode(name), UNINITIALIZED), 20_000, `${name} initialised`);
  return server;
}

Deno.test("a server's announced stop drains its node from a load balancer and a node-address ingress before it goes down", async () => {
  await using cloud = await startTestCloud();
  const { sim, url } = cloud.simulator;
  const [staying, stopping] = [uniqueName("stay"), uniqueName("stop")];
  const replica: Replica = await startReplica([
    "--leader-elect=false",
    "--secure-port=0",
    `--server-list-period=${LIST_PERIOD_MS / 1000}s`,
    `--member-drain-period=${DRAIN_MS / 1000}s`,
    "--node-monitor-period=1s",
  ], { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_API_URL: url });
  const [lbService, onNodes] = [uniqueName("lb"), uniqueName("nodes")];
  try {
    await replica.waitFor(/starting controllers/);
    await initialisedNode(cloud, staying, "198.51.100.30");
    const server = await initialisedNode(cloud, stopping, "198.51.100.31");
    await createService(lbService);
    await createService(onNodes, {
      annotations: { "load-balancer.ankra.cloud/mode": "node-addresses" },
      ipFamilies: ["IPv4"],
    });
    const members = () => {
      const lb = [...sim.loadBalancers.items.values()].find((l) =>
        l.labels["ccm.ankra.cloud/service"] === `${NS}/${lbService}`
      );
      return new Map((lb?.backends[0]?.members ?? []).map((m) => [m.name.split("-").slice(0, -1).join("-"), m]));
    };
    const publicIpv4 = sim.world.servers.get(server.id)!.public_ipv4!;
    await eventually(async () => ingressIps(await getService(lbService)).length > 0, 20_000, "the LB address");
    await eventually(() => members().has(staying) && members().has(stopping), 10_000, "both nodes members");
    await eventually(
      async () => ingressIps(await getService(onNodes)).includes(publicIpv4),
      20_000,
      "the stopping node's address in the node-address ingress",
    );

    const gets = sim.count("get_server");
    const announcedAt = performance.now();
    const answer = await fetch(`${url}/_simulator/servers/${server.id}/operations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "server.stop", duration_ms: STOP_IN_MS }),
    });
    assert.equal(answer.status, 201, await answer.text());
    const seconds = () => ((performance.now() - announcedAt) / 1000).toFixed(1);

    await eventually(() => members().get(stopping)?.weight === 0, 3 * LIST_PERIOD_MS + 3_000, "drained: weight 0");
    const drainedAfter = seconds();
    assert.equal(members().get(staying)?.weight ?? 100, 100, "the other node keeps serving");
    await eventually(() => !members().has(stopping), DRAIN_MS + 5_000, "off the load balancer after the drain");
    const removedAfter = seconds();
    await eventually(
      async () => !ingressIps(await getService(onNodes)).includes(publicIpv4),
      DRAIN_MS + 3 * LIST_PERIOD_MS + 5_000,
      "off the node-address ingress after the drain",
    );
    const unpublishedAfter = seconds();
    console.log(
      `announced stop: weight 0 after ${drainedAfter} s, off the load balancer after ${removedAfter} s, off the ` +
        `node-address ingress after ${unpublishedAfter} s (list period ${LIST_PERIOD_MS / 1000} s, drain ` +
        `${DRAIN_MS / 1000} s, stop due after ${STOP_IN_MS / 1000} s)`,
    );
    assert.equal(sim.world.servers.get(server.id)?.state, "started", "all of it before the server went down");
    assert.ok(ingressIps(await getService(onNodes)).length > 0, "the other node's address stays");

    for (const name of [lbService, onNodes]) {
      const told = (await eventsFor(name)).filter((e) => e.reason === "DrainingNode");
      assert.equal(told.length, 1, `${name}: told once`);
      assert.equal(told[0].type, "Normal");
      const expected = `^node ${stopping} leaves its (load balancer|ingress) before its server ${server.id} goes ` +
        "down \\(leaving: planned stop \\(operation ";
      assert.match(told[0].message ?? "", new RegExp(expected));
      assert.equal(told[0].count ?? 1, 1, `${name}: not every pass`);
    }
    assert.equal(sim.count("get_server"), gets, "read from the server list alone");
    assert.equal(sim.count("list_operations"), 0);

    // The stop done (its operation gone from the list, the server stopped): the node stays out — it does not come
    // back as a member the moment nothing announces a stop any more — and returns once its server runs again.
    await eventually(() => sim.world.servers.get(server.id)?.state === "stopped", STOP_IN_MS + 5_000, "stopped");
    const stoppedAt = performance.now();
    while (performance.now() - stoppedAt < 3 * LIST_PERIOD_MS + 1_000) {
      assert.ok(!members().has(stopping), "a node whose server is stopped is no member");
      assert.ok(!ingressIps(await getService(onNodes)).includes(publicIpv4), "nor in the node-address ingress");
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const started = await fetch(`${url}/_simulator/servers/${server.id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ state: "started" }),
    });
    assert.equal(started.status, 200, await started.text());
    await eventually(() => (members().get(stopping)?.weight ?? 0) > 0, 3 * LIST_PERIOD_MS + 5_000, "back once started");
    await eventually(
      async () => ingressIps(await getService(onNodes)).includes(publicIpv4),
      3 * LIST_PERIOD_MS + 5_000,
      "back in the node-address ingress once started",
    );
  } finally {
    await stop(replica);
    for (const name of [lbService, onNodes]) await deleteService(name).catch(() => {});
    for (const name of [staying, stopping]) await deleteNode(name).catch(() => {});
  }
});
