/**
 * Ownership by cluster identity end to end: the real kube-apiserver (two of them for two clusters), one simulator
 * account, the service controller and the sweeper in-process with short periods. Load balancers carry the
 * `kube-system` namespace's UID; a load balancer of another cluster with the same `--cluster-name` is never adopted,
 * changed or deleted.
 */
import { CLUSTER_UID_LABEL } from "../../lib/ankra_names.ts";
import assert from "node:assert/strict";
import { LoadBalancerSweeper } from "../../lib/controllers/service/load_balancer_sweeper.ts";
import { loadBalancerLabels, loadBalancerName } from "../../lib/provider/service/load_balancer_names.ts";
import {
  type SharedControlPlane,
  startControlPlane,
  testControlPlane,
  uniqueName,
} from "../support/control_plane/control_plane.ts";
import { eventually } from "../support/wait/eventually.ts";
import { kubeOk, kubeRequest } from "../support/http/kube_http.ts";
import { addNodeServersTo, createNodes, deleteNodes } from "../support/controller/service_fixtures.ts";
import { type RunningServiceController, startServiceController } from "../support/controller/service_controller.ts";
import {
  createLabelledLoadBalancer,
  createServedNode,
  startTestCloud,
  TEST_TOKEN,
  type TestCloud,
  testSeed,
} from "../support/cloud/simulator.ts";

/** A second operate token: cluster B's requests are told from cluster A's in the simulator's request log. */
const TOKEN_B = "act_Y2x1c3Rlci1iLXRva2VuLW9wZXJhdGUteHh4eHh4";
const PERIOD_MS = 1_000;
const SERVICE = "ccm.ankra.cloud/service";

interface ServiceDoc {
  metadata: { uid: string; finalizers?: string[] };
  status?: { loadBalancer?: { ingress?: { ip?: string }[] } };
}

async function createService(plane: SharedControlPlane, name: string): Promise<string> {
  const created = await kubeOk<ServiceDoc>(plane, "POST", "/api/v1/namespaces/default/services", {
    body: { metadata: { name }, spec: { type: "LoadBalancer", selector: { app: name }, ports: [{ port: 80 }] } },
  });
  return created.metadata.uid;
}

async function getService(plane: SharedControlPlane, name: string): Promise<ServiceDoc | undefined> {
  const answer = await kubeRequest<ServiceDoc>(plane, "GET", `/api/v1/namespaces/default/services/${name}`);
  return answer.status === 200 ? answer.body : undefined;
}

async function deleteService(plane: SharedControlPlane, name: string, options: { leak?: boolean } = {}) {
  if (options.leak) {
    // Someone strips the finalizer: the Service goes at once and its load balancer is left to the sweep.
    await kubeRequest(plane, "PATCH", `/api/v1/namespaces/default/services/${name}`, {
      body: { metadata: { finalizers: null } },
    });
  }
  await kubeRequest(plane, "DELETE", `/api/v1/namespaces/default/services/${name}`);
}

/** The reasons of the events about the Service object with `uid`. */
async function reasonsFor(plane: SharedControlPlane, name: string, uid: string): Promise<string[]> {
  const list = await kubeOk<{ items: { reason: string; message: string }[] }>(
    plane,
    "GET",
    `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${name},involvedObject.uid=${uid}`,
  );
  return list.items.map((e) => e.reason);
}

/** A restartable sweeper over a harness's Services. */
function startSweeper(env: RunningServiceController, clusterName: string) {
  let stopper = new AbortController();
  let running = Promise.resolve();
  const start = () => {
    stopper = new AbortController();
    running = new LoadBalancerSweeper({
      cloud: env.cloud.client,
      services: env.services.watched(),
      clusterName,
      clusterUid: env.clusterUid,
      periodMs: PERIOD_MS,
    }).run(stopper.signal);
  };
  start();
  return {
    async restart() {
      stopper.abort();
      await running;
      start();
    },
    async [Symbol.asyncDispose]() {
      stopper.abort();
      await running;
    },
  };
}

/** Records the labels every load balancer had when the simulator created it (deleted ones included). */
function recordCreations(cloud: TestCloud): Map<string, Record<string, string>> {
  const created = new Map<string, Record<string, string>>();
  const items = cloud.simulator.sim.loadBalancers.items;
  const set = items.set.bind(items);
  items.set = (id, lb) => {
    if (!created.has(id)) created.set(id, { ...lb.labels });
    return set(id, lb);
  };
  return created;
}

Deno.test("a Go controller's load balancer gets the UID label in one PATCH; another cluster's of the same name is never touched", async () => {
  await using cloud = await startTestCloud(testSeed());
  const sim = cloud.simulator.sim;
  addNodeServersTo(sim.world);
  const nodes = await createNodes(2);
  const legacy = uniqueName("legacy");
  const twin = uniqueName("twin");
  const make = (name: string, labels: Record<string, string>) =>
    createLabelledLoadBalancer(cloud, loadBalancerName("test", "default", name), labels);
  const legacyId = await make(legacy, loadBalancerLabels("test", "default", legacy));
  const otherUid = crypto.randomUUID();
  const twinId = await make(twin, { ...loadBalancerLabels("test", "default", twin), [CLUSTER_UID_LABEL]: otherUid });
  const plane = testControlPlane();
  try {
    await using env = await startServiceController({ cloud, driftCheckMs: PERIOD_MS });
    await using _sweeper = startSweeper(env, "test");
    await createService(plane, legacy);
    const twinUid = await createService(plane, twin);
    // The legacy one is adopted: the UID label merged with its two, in one label PATCH, and it serves.
    await eventually(
      () => sim.loadBalancers.items.get(legacyId)?.labels[CLUSTER_UID_LABEL] === env.clusterUid,
      15_000,
      "the legacy load balancer labelled with this cluster's UID",
    );
    assert.deepEqual(sim.loadBalancers.items.get(legacyId)!.labels, {
      ...loadBalancerLabels("test", "default", legacy),
      [CLUSTER_UID_LABEL]: env.clusterUid,
    });
    await eventually(async () => ((await getService(plane, legacy))?.status?.loadBalancer?.ingress ?? []).length > 0);
    const labelPatches = () =>
      sim.log.filter((e) => e.operation === "update_load_balancer" && e.path.includes(legacyId)).length;
    assert.equal(labelPatches(), 1, "one label PATCH");
    // The twin waits with ClusterNameCollision naming the other cluster's load balancer; nothing is created.
    await eventually(
      async () => (await reasonsFor(plane, twin, twinUid)).includes("ClusterNameCollision"),
      15_000,
      "the ClusterNameCollision Warning",
    );
    const events = await kubeOk<{ items: { reason: string; type: string; message: string }[] }>(
      plane,
      "GET",
      `/api/v1/namespaces/default/events?fieldSelector=involvedObject.uid=${twinUid}`,
    );
    const collision = events.items.find((e) => e.reason === "ClusterNameCollision")!;
    assert.equal(collision.type, "Warning");
    assert.match(collision.message, new RegExp(`load balancer ${twinId} \\(k8s-test-default-${twin}\\)`));
    assert.match(collision.message, new RegExp(`${CLUSTER_UID_LABEL}=${otherUid}`));
    assert.ok(!events.items.some((e) => e.reason === "SyncLoadBalancerFailed"), "one Warning, not two");
    assert.equal(sim.loadBalancers.items.size, 2, "no load balancer created for the twin: the name is taken");
    assert.ok(!(await getService(plane, twin))!.metadata.finalizers, "no finalizer on the waiting Service");
    // The twin Service goes: its namesake is not deleted. Two sweeps later it is still there, unchanged.
    await deleteService(plane, twin);
    await eventually(async () => !(await getService(plane, twin)), 10_000, "the twin Service gone");
    const logged = sim.log.length;
    await eventually(
      () => sim.log.slice(logged).filter((e) => e.operation === "list_load_balancers").length >= 3,
      15_000,
      "three more lists (sweeps)",
    );
    const writes = sim.log.filter((e) => e.method !== "GET" && e.path.includes(twinId));
    assert.deepEqual(writes, [], "no request changed the other cluster's load balancer");
    assert.deepEqual(sim.loadBalancers.items.get(twinId)!.labels[CLUSTER_UID_LABEL], otherUid);
    // Once the other cluster's load balancer is gone, the name is free: a Service of that name gets its own.
    await cloud.client.deleteLoadBalancer(twinId);
    await eventually(() => !sim.loadBalancers.items.has(twinId), 10_000, "the other cluster's one deleted");
    const againUid = await createService(plane, twin);
    await eventually(
      async () => ((await getService(plane, twin))?.status?.loadBalancer?.ingress ?? []).length > 0,
      15_000,
      "the twin served once the name is free",
    );
    assert.ok(!(await reasonsFor(plane, twin, againUid)).includes("ClusterNameCollision"));
    await deleteService(plane, legacy);
    await deleteService(plane, twin);
    await eventually(() => sim.loadBalancers.items.size === 0, 15_000, "both deleted with their Services");
  } finally {
    await deleteService(plane, legacy);
    await deleteService(plane, twin);
    await deleteNodes(nodes);
    addNodeServersTo(undefined);
  }
});

Deno.test("two clusters with one --cluster-name on one account: 20 create/delete cycles, restarts and sweeps, neither touches the other's", async () => {
  const planeA = testControlPlane();
  const planeB = await startControlPlane();
  const cluster = uniqueName("twin");
  const seed = testSeed({
    tokens: [{ token: TEST_TOKEN, scope: "read_write" }, { token: TOKEN_B, scope: "read_write" }],
  });
  await using cloud = await startTestCloud(seed);
  const sim = cloud.simulator.sim;
  const created = recordCreations(cloud);
  const nodesA = [uniqueName("a-node"), uniqueName("a-node")];
  const nodesB = [uniqueName("b-node"), uniqueName("b-node")];
  for (const [i, name] of nodesA.entries()) {
    await createServedNode(planeA, sim.world, { name, address: `10.0.1.${10 + i}` });
  }
  for (const [i, name] of nodesB.entries()) {
    await createServedNode(planeB, sim.world, { name, address: `10.0.2.${10 + i}` });
  }
  const cloudB: TestCloud = { ...cloud, client: cloud.clientWith({ token: TOKEN_B }) };
  const keep = uniqueName("keep");
  const names = [0, 1, 2, 3].map((i) => `${cluster}-s${i}`);
  try {
    await using a = await startServiceController({ cloud, clusterName: cluster, driftCheckMs: PERIOD_MS });
    await using b = await startServiceController({
      cloud: cloudB,
      plane: planeB,
      clusterName: cluster,
      driftCheckMs: PERIOD_MS,
    });
    assert.notEqual(a.clusterUid, b.clusterUid, "two API servers, two kube-system UIDs");
    await using sweepA = startSweeper(a, cluster);
    await using sweepB = startSweeper(b, cluster);
    const sides = [
      { name: "A", plane: planeA, env: a, sweeper: sweepA },
      { name: "B", plane: planeB, env: b, sweeper: sweepB },
    ];
    // A Service only cluster A has, for the whole run: with the cluster name alone, B's sweep would delete it.
    await createService(planeA, keep);
    await eventually(async () => ((await getService(planeA, keep))?.status?.loadBalancer?.ingress ?? []).length > 0);
    const started = performance.now();
    let collisions = 0;
    for (let cycle = 0; cycle < 20; cycle++) {
      const name = names[cycle % names.length];
      // Restarts: A at cycles 6 and 13, B at 7 and 14 (controller and sweeper: a new term primes from the account).
      for (const side of sides) {
        if (
          (side.name === "A" && (cycle === 6 || cycle === 13)) || (side.name === "B" && (cycle === 7 || cycle === 14))
        ) {
          await side.env.stopController();
          side.env.startController();
          await side.sweeper.restart();
        }
      }
      // Same name in both clusters; B starts one step behind every third cycle, so it may find A's first.
      const uidA = await createService(planeA, name);
      if (cycle % 3 === 0) {
        await eventually(async () =>
          ((await getService(planeA, name))?.status?.loadBalancer?.ingress ?? []).length > 0
        );
      }
      const uidB = await createService(planeB, name);
      for (const [side, uid] of [[sides[0], uidA], [sides[1], uidB]] as const) {
        await eventually(
          async () => {
            const service = await getService(side.plane, name);
            if ((service?.status?.loadBalancer?.ingress ?? []).length > 0) return true;
            if ((await reasonsFor(side.plane, name, uid)).includes("ClusterNameCollision")) {
              collisions++;
              return true;
            }
            return false;
          },
          20_000,
          `cycle ${cycle}: ${side.name}'s Service ${name} served or told of the collision`,
        );
      }
      // Every fifth cycle one cluster's Service is deleted without its finalizer: a leak for its own sweep.
      await deleteService(planeA, name, { leak: cycle % 5 === 2 });
      await deleteService(planeB, name, { leak: cycle % 5 === 4 });
      await eventually(
        async () => !(await getService(planeA, name)) && !(await getService(planeB, name)),
        20_000,
        `cycle ${cycle}: both Services ${name} gone`,
      );
    }
    // B gets a Service of the kept one's name: its term began with A's load balancer of that name in the account, so
    // it waits with ClusterNameCollision and makes none.
    const keepB = await createService(planeB, keep);
    await eventually(
      async () => (await reasonsFor(planeB, keep, keepB)).includes("ClusterNameCollision"),
      15_000,
      "B told that the kept Service's name is taken",
    );
    collisions++;
    assert.ok(
      ![...created.values()].some((l) => l[CLUSTER_UID_LABEL] === b.clusterUid && l[SERVICE] === `default/${keep}`),
      "B made no load balancer of the taken name",
    );
    await deleteService(planeB, keep);
    // Every load balancer but A's kept one goes: by its Service's deletion, or by its own cluster's sweep.
    await eventually(
      () => [...sim.loadBalancers.items.values()].every((lb) => lb.labels[SERVICE] === `default/${keep}`),
      20_000,
      "only the kept load balancer left",
    );
    const seconds = (performance.now() - started) / 1000;
    // The proof: each load balancer was written to only with its own cluster's token, and carries its own UID.
    const uidOfToken = new Map([[TEST_TOKEN.slice(0, 8), a.clusterUid], [TOKEN_B.slice(0, 8), b.clusterUid]]);
    const crossed: string[] = [];
    for (const entry of sim.log) {
      const id = entry.path.match(/^\/v1\/load-balancers\/([^/?]+)/)?.[1];
      if (!id || entry.method === "GET") continue;
      const owner = created.get(id)?.[CLUSTER_UID_LABEL];
      if (owner !== uidOfToken.get(entry.tokenPrefix ?? "")) crossed.push(`${entry.method} ${entry.path} (${owner})`);
    }
    assert.deepEqual(crossed, [], "no load balancer deleted, adopted or modified by the other cluster");
    const uids = [...created.values()].map((labels) => labels[CLUSTER_UID_LABEL]);
    assert.ok(uids.every((uid) => uid === a.clusterUid || uid === b.clusterUid), "every one made with its UID");
    const keptLb = [...sim.loadBalancers.items.values()][0];
    assert.equal(keptLb.labels[CLUSTER_UID_LABEL], a.clusterUid);
    const deletes = (token: string) =>
      sim.log.filter((e) => e.operation === "delete_load_balancer" && e.tokenPrefix === token.slice(0, 8)).length;
    console.log(
      `20 cycles in ${seconds.toFixed(1)} s: ${created.size} load balancers made (A ${
        uids.filter((u) => u === a.clusterUid).length
      }, B ${uids.filter((u) => u === b.clusterUid).length}), deletes A ${deletes(TEST_TOKEN)} B ${
        deletes(TOKEN_B)
      }, ${collisions} ClusterNameCollision waits, 0 crossed writes`,
    );
    await deleteService(planeA, keep);
    await eventually(() => sim.loadBalancers.items.size === 0, 15_000, "the kept one deleted with its Service");
  } finally {
    await deleteService(planeA, keep);
    for (const name of names) {
      await deleteService(planeA, name, { leak: true });
      await deleteService(planeB, name, { leak: true });
    }
    for (const name of nodesA) await kubeRequest(planeA, "DELETE", `/api/v1/nodes/${name}`);
    await planeB.stop();
  }
});
