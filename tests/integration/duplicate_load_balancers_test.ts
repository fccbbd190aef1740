/**
 * A duplicate made behind the controller's back, end to end: the real kube-apiserver, the Ankra Cloud simulator, and a
 * second load balancer labelled for a served Service created directly through the simulator's API (as a script or a
 * person would). The in-process service controller and sweeper (short periods) delete it and keep the one whose
 * address the Service shows, with the events on the Service and the metric; another cluster's and an unlabelled copy
 * are untouched, and the controller makes no new one. The controller binary does the same with the leak sweep turned
 * off (`--sweep-leaked-load-balancers=false`): duplicates go whatever that flag says.
 */
import assert from "node:assert/strict";
import { CLUSTER_UID_LABEL, SERVICE_LABEL } from "../../lib/ankra_names.ts";
import { LoadBalancerSweeper, type SweepPass } from "../../lib/controllers/service/load_balancer_sweeper.ts";
import { EventRecorder } from "../../lib/kube/events.ts";
import { loadBalancerLabels, loadBalancerName } from "../../lib/provider/service/load_balancer_names.ts";
import { MetricsRegistry } from "../../lib/runtime/metrics.ts";
import { freePort, testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { startReplica, stop } from "../support/controller/controller_process.ts";
import { moreReads } from "../support/cloud/cloud_passes.ts";
import { eventually } from "../support/wait/eventually.ts";
import { kubeOk } from "../support/http/kube_http.ts";
import {
  addNodeServersTo,
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
import { createLabelledLoadBalancer, startTestCloud, TEST_TOKEN, type TestCloud } from "../support/cloud/simulator.ts";

const SWEEP_PERIOD_MS = 1_500;

/** The simulator's load balancers of the cluster with `uid` labelled for Service `name`, not being deleted. */
function liveFor(cloud: TestCloud, name: string, uid: string) {
  return [...cloud.simulator.sim.loadBalancers.items.values()].filter((lb) =>
    lb.labels[SERVICE_LABEL] === `${NS}/${name}` && lb.labels[CLUSTER_UID_LABEL] === uid && lb.state !== "deleting"
  );
}

Deno.test("a duplicate made behind the controller's back is deleted; the served address stays", async () => {
  await using env = await startServiceController();
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const name = uniqueName("dup");
  await createService(name);
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000, "served");
    const served = ingressIps(await getService(name));
    const [kept] = liveFor(env.cloud, name, env.clusterUid);
    const own = { ...loadBalancerLabels("test", NS, name), [CLUSTER_UID_LABEL]: env.clusterUid };
    const lbName = loadBalancerName("test", NS, name);
    const duplicate = await createLabelledLoadBalancer(env.cloud, lbName, own);
    const otherCluster = await createLabelledLoadBalancer(env.cloud, lbName, {
      ...own,
      [CLUSTER_UID_LABEL]: "another-uid",
    });
    const unlabelled = await createLabelledLoadBalancer(env.cloud, lbName, {});
    const createsBefore = sim.count("create_load_balancer");
    const metrics = new MetricsRegistry();
    const passes: SweepPass[] = [];
    const sweeper = new LoadBalancerSweeper({
      cloud: env.cloud.client,
      services: env.services.watched(),
      clusterName: "test",
      clusterUid: env.clusterUid,
      periodMs: SWEEP_PERIOD_MS,
      events: new EventRecorder(env.kube, { component: "service-controller", host: "test" }),
      metrics,
      onPass: (pass) => passes.push(pass),
    });
    const stopper = new AbortController();
    const running = sweeper.run(stopper.signal);
    try {
      await eventually(() => passes.some((p) => p.duplicates.deleted.includes(duplicate)), 15_000, "deleted");
    } finally {
      stopper.abort();
      await running;
    }
    const first = passes.find((p) => p.duplicates.found.length > 0)!;
    assert.deepEqual(first.duplicates.found, [duplicate], "found at the first observation, not deleted");
    assert.deepEqual(first.duplicates.deleted, []);
    assert.deepEqual(liveFor(env.cloud, name, env.clusterUid).map((lb) => lb.id), [kept.id], "the served one stays");
    const live = (id: string) => sim.loadBalancers.items.get(id)?.state !== "deleting";
    assert.ok(live(otherCluster) && live(unlabelled), "another cluster's and an unlabelled one are untouched");
    assert.deepEqual(ingressIps(await getService(name)), served, "the served address is unchanged");
    assert.match(metrics.render(), /^ankra_ccm_duplicate_load_balancers_found_total 1$/m);
    const events = await eventsFor(name);
    const found = events.find((e) => e.reason === "DuplicateLoadBalancer");
    assert.equal(found?.type, "Warning");
    assert.match(found!.message, new RegExp(`${kept.id} .* stays, the one whose address is in the Service's status`));
    const deleted = events.find((e) => e.reason === "DeletedDuplicateLoadBalancer");
    assert.match(deleted!.message, new RegExp(`^deleted load balancer ${duplicate} `));
    // The controller goes on with the one that stays: two more drift checks of it, nothing created.
    await moreReads(sim, { operation: "get_load_balancer", pathIncludes: kept.id }, { count: 2 });
    assert.equal(sim.count("create_load_balancer"), createsBefore, "no load balancer made in its place");
    assert.deepEqual(ingressIps(await getService(name)), served);
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000).catch(() => {});
    await deleteNodes(nodes);
  }
});

Deno.test("the controller binary deletes a duplicate with the leak sweep off, saying so on the Service", async () => {
  await using cloud = await startTestCloud();
  const sim = cloud.simulator.sim;
  addNodeServersTo(sim.world);
  const nodes = await createNodes(1);
  const cluster = uniqueName("dupbin");
  const name = uniqueName("dup");
  const port = freePort();
  const replica = await startReplica([
    "--leader-elect=false",
    `--secure-port=${port}`,
    "--bind-address=127.0.0.1",
    "--metrics-authorization=none",
    `--cluster-name=${cluster}`,
    "--load-balancer-drift-period=2s",
    "--sweep-leaked-load-balancers=false",
    "--controllers=service",
  ], { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_API_URL: cloud.simulator.url, ANKRA_CLOUD_NETWORK_ID: "net-1" });
  try {
    await createService(name);
    await eventually(async () => ingressIps(await getService(name)).length > 0, 20_000, "served");
    const served = ingressIps(await getService(name));
    const uid =
      (await kubeOk<{ metadata: { uid: string } }>(testControlPlane(), "GET", "/api/v1/namespaces/kube-system"))
        .metadata.uid;
    const [kept] = liveFor(cloud, name, uid);
    const duplicate = await createLabelledLoadBalancer(cloud, loadBalancerName(cluster, NS, name), {
      ...loadBalancerLabels(cluster, NS, name),
      [CLUSTER_UID_LABEL]: uid,
    });
    await replica.waitFor(new RegExp(`deleted duplicate load balancer .*loadBalancer=${duplicate}`), 30_000);
    assert.deepEqual(liveFor(cloud, name, uid).map((lb) => lb.id), [kept.id]);
    assert.deepEqual(ingressIps(await getService(name)), served);
    const found = replica.lines.find((l) => /found a second load balancer for one Service/.test(l.text))!.text;
    assert.match(found, /WARN/);
    assert.match(found, new RegExp(`duplicate=${duplicate}.*keep=${kept.id}`));
    await eventually(
      async () => (await eventsFor(name)).some((e) => e.reason === "DeletedDuplicateLoadBalancer"),
      10_000,
      "the event on the Service",
    );
    // The controller's self-signed certificate: read as a probe would (curl -k).
    const out = await new Deno.Command("curl", { args: ["-sk", `https://127.0.0.1:${port}/metrics`], stdout: "piped" })
      .output();
    assert.match(new TextDecoder().decode(out.stdout), /^ankra_ccm_duplicate_load_balancers_found_total 1$/m);
    assert.ok(!replica.lines.some((l) => /leaked/.test(l.text)), "the leak sweep is off and says nothing");
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 20_000).catch(() => {});
    await stop(replica);
    addNodeServersTo(undefined);
    await deleteNodes(nodes);
  }
});
