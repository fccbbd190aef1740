/**
 * A dry run states each planned action once: with an uninitialised Node and a LoadBalancer Service, running for as
 * many server-list, node-refresh and drift cycles as a minute and more of a real run would see, every `dry run:
 * would …` line appears exactly once and no line claims a write that was not sent. The controller runs as a separate
 * process (`--v=4`, every INFO line) against the real kube-apiserver and the simulator.
 */
import assert from "node:assert/strict";
import { freePort, testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { startReplica, stop } from "../support/controller/controller_process.ts";
import { eventually } from "../support/wait/eventually.ts";
import { kubeletNode, kubeOk, kubeRequest } from "../support/http/kube_http.ts";
import { serverSeed, startTestCloud, TEST_TOKEN, testSeed } from "../support/cloud/simulator.ts";

/** Cycles of the shortened periods the test lets pass (the defaults would see one server list in 60 s). */
const CYCLES = 8;

/** Lines that report a write as done: in a dry run, none may appear. */
const CLAIMS = [
  /updated node addresses/,
  /initialised node/,
  /tainted shut-down node/,
  /removed shutdown taint/,
  /deleted node whose server is gone/,
  /created load balancer/,
  /deleting load balancer/,
  /updated edge members/,
  /load balancer is serving/,
];

Deno.test("a dry run with an uninitialised Node and a LoadBalancer Service logs each planned action exactly once", async () => {
  const plane = testControlPlane();
  await using cloud = await startTestCloud(testSeed());
  const sim = cloud.simulator.sim;
  const node = uniqueName("once-node");
  sim.world.addServer(serverSeed({ hostname: node, zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }));
  await kubeOk(plane, "POST", "/api/v1/nodes", { body: kubeletNode(node) });
  const service = uniqueName("once-web");
  await kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
    body: { metadata: { name: service }, spec: { type: "LoadBalancer", ports: [{ name: "http", port: 80 }] } },
  });
  const replica = await startReplica([
    "--dry-run",
    `--cluster-name=${uniqueName("once")}`,
    `--secure-port=${freePort()}`,
    "--bind-address=127.0.0.1",
    "--metrics-authorization=none",
    "--server-list-period=1s",
    "--node-status-update-frequency=1s",
    "--node-monitor-period=1s",
    "--load-balancer-drift-period=1s",
  ], { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_API_URL: cloud.simulator.url });
  try {
    await replica.waitFor(
      new RegExp(`dry run: would initialise node ${node}: providerID ankracloud://de-fsn1/`),
      30_000,
    );
    await replica.waitFor(new RegExp(`dry run: would create load balancer \\S+ for Service default/${service} once`));
    // Let the cycles pass: each fresh server list wakes the uninitialised node again.
    const lists = sim.count("list_servers");
    await eventually(() => sim.count("list_servers") >= lists + CYCLES, 30_000, `${CYCLES} more server lists`);
    const texts = replica.lines.map((l) => l.text);
    const planned = texts.filter((t) => t.includes("dry run: would")).map((t) => t.replace(/^\S+\s+\S+\s+/, ""));
    const repeated = planned.filter((t, i) => planned.indexOf(t) !== i);
    assert.deepEqual(repeated, [], "no planned action is logged twice");
    for (
      const expected of [
        new RegExp(`^dry run: would initialise node ${node}: `),
        new RegExp(`^dry run: would set the addresses of node ${node}`),
        new RegExp(`^dry run: would record Normal event Synced on Node ${node}`),
        new RegExp(`^dry run: would create load balancer \\S+ for Service default/${service} once its 1 node`),
      ]
    ) assert.equal(planned.filter((t) => expected.test(t)).length, 1, `${expected} exactly once`);
    const claims = texts.filter((t) => CLAIMS.some((claim) => claim.test(t)));
    assert.deepEqual(claims, [], "no line claims a write that was not sent");
  } finally {
    await stop(replica);
    await kubeRequest(plane, "DELETE", `/api/v1/namespaces/default/services/${service}`);
    await kubeRequest(plane, "DELETE", `/api/v1/nodes/${node}`);
  }
});
