/**
 * Leaked load balancers end to end: the real kube-apiserver, the Ankra Cloud simulator, the service controller and
 * the sweeper in-process (short periods), and the controller binary for the flag and the dry run. The sweeper's
 * behaviour through an Ankra Cloud outage is tested over fakes (tests/unit/controllers/service/load_balancer_sweeper_test.ts).
 */
import { CLUSTER_UID_LABEL } from "../../lib/ankra_names.ts";
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { startReplica, stop } from "../support/controller/controller_process.ts";
import { kubeOk } from "../support/http/kube_http.ts";
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
import { type RunningServiceController, startServiceController } from "../support/controller/service_controller.ts";
import { createLabelledLoadBalancer, startTestCloud, TEST_TOKEN } from "../support/cloud/simulator.ts";
import { LoadBalancerSweeper, type SweepPass } from "../../lib/controllers/service/load_balancer_sweeper.ts";
import { loadBalancerLabels } from "../../lib/provider/service/load_balancer_names.ts";
import { MetricsRegistry } from "../../lib/runtime/metrics.ts";

const SWEEP_PERIOD_MS = 1_500;

/** Runs a sweeper over the harness's Services; its passes are recorded with the time they ended. */
function startSweeper(env: Pick<RunningServiceController, "cloud" | "services" | "clusterUid">) {
  const passes: (SweepPass & { atMs: number })[] = [];
  const metrics = new MetricsRegistry();
  const sweeper = new LoadBalancerSweeper({
    cloud: env.cloud.client,
    services: env.services.watched(),
    clusterName: "test",
    clusterUid: env.clusterUid,
    periodMs: SWEEP_PERIOD_MS,
    metrics,
    onPass: (pass) => passes.push({ ...pass, atMs: performance.now() }),
  });
  const stopper = new AbortController();
  const running = sweeper.run(stopper.signal);
  return {
    passes,
    metrics,
    async [Symbol.asyncDispose]() {
      stopper.abort();
      await running;
    },
  };
}

Deno.test("a Service deleted without its finalizer loses its load balancer at the second observation, not before", async () => {
  await using env = await startServiceController();
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const name = uniqueName("leak");
  await createService(name);
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000, "an address");
    const [leakedId] = [...sim.loadBalancers.items.keys()];
    const otherCluster = await createLabelledLoadBalancer(env.cloud, "k8s-staging-default-web", {
      ...loadBalancerLabels("staging", NS, name),
    });
    const unlabelled = await createLabelledLoadBalancer(env.cloud, `k8s-test-${NS}-${name}-copy`, {});
    // While the controller is down, someone strips the finalizer and deletes the Service.
    await env.stopController();
    await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${name}`, {
      body: { metadata: { finalizers: null } },
    });
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 10_000, "Service gone");
    await eventually(() => env.services.watched().store.get(`${NS}/${name}`) === undefined, 10_000, "store without it");
    const deletedAt = performance.now();
    env.startController();
    await using sweeper = startSweeper(env);
    await eventually(() => sweeper.passes.some((p) => p.swept.includes(leakedId)), 15_000, "the leak swept");
    const first = sweeper.passes.find((p) => p.observed)!;
    const sweep = sweeper.passes.find((p) => p.swept.includes(leakedId))!;
    assert.equal(first.pending, 1, "the first observation only notes the absent Service");
    assert.deepEqual(first.swept, []);
    assert.ok(
      sweep.atMs - first.atMs >= SWEEP_PERIOD_MS - 50,
      `swept ${(sweep.atMs - first.atMs).toFixed(0)} ms after the first observation`,
    );
    await eventually(() => !sim.loadBalancers.items.has(leakedId), 10_000, "the leaked load balancer deleted");
    assert.ok(sim.loadBalancers.items.has(otherCluster), "another cluster's load balancer survives");
    assert.ok(sim.loadBalancers.items.has(unlabelled), "an unlabelled load balancer survives");
    assert.match(sweeper.metrics.render(), /ankra_ccm_leaked_load_balancers_swept_total 1/);
    console.log(
      `sweep timings: first observation ${(first.atMs - deletedAt).toFixed(0)} ms after the deletion, swept ` +
        `${(sweep.atMs - first.atMs).toFixed(0)} ms later (period ${SWEEP_PERIOD_MS} ms)`,
    );
    // Later passes leave the survivors alone.
    const passes = sweeper.passes.length;
    await eventually(() => sweeper.passes.length >= passes + 2, 10_000, "two more passes");
    assert.ok(sim.loadBalancers.items.has(otherCluster) && sim.loadBalancers.items.has(unlabelled));
  } finally {
    await deleteService(name);
    await deleteNodes(nodes);
  }
});

Deno.test("the controller binary sweeps a leak by default, only reports it in a dry run, and not with the flag off", async () => {
  await using cloud = await startTestCloud();
  const sim = cloud.simulator.sim;
  const cluster = uniqueName("sweep");
  // The binary reads the test control plane's kube-system UID: the leak carries it, so it is this cluster's.
  const uid = (await kubeOk<{ metadata: { uid: string } }>(testControlPlane(), "GET", "/api/v1/namespaces/kube-system"))
    .metadata.uid;
  const leakedId = await createLabelledLoadBalancer(
    cloud,
    `k8s-${cluster}-default-gone`,
    { ...loadBalancerLabels(cluster, NS, "gone"), [CLUSTER_UID_LABEL]: uid },
  );
  const env = { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_API_URL: cloud.simulator.url };
  const args = (extra: string[]) => [
    `--cluster-name=${cluster}`,
    "--load-balancer-drift-period=1s",
    "--server-list-period=1s",
    "--controllers=*",
    ...extra,
  ];
  // Flag off: three drift periods pass (the shared server list runs once a second) and the leak stays.
  const off = await startReplica(args(["--sweep-leaked-load-balancers=false"]), env);
  try {
    await moreReads(sim, { operation: "list_servers" }, { count: 4, timeoutMs: 30_000 });
    assert.ok(sim.loadBalancers.items.has(leakedId), "with the flag off nothing is swept");
    assert.ok(!off.lines.some((l) => /leaked/.test(l.text)), "and nothing is said about it");
  } finally {
    await stop(off);
  }
  // Dry run: reported, never deleted.
  const dry = await startReplica(args(["--dry-run"]), env);
  try {
    await dry.waitFor(/dry run: would delete leaked load balancer/, 30_000);
    assert.ok(sim.loadBalancers.items.has(leakedId), "a dry run deletes nothing");
    assert.equal(sim.count("delete_load_balancer"), 0);
  } finally {
    await stop(dry);
  }
  // Default: swept, with an INFO line naming it.
  const on = await startReplica(args([]), env);
  try {
    const listsBefore = sim.count("list_load_balancers");
    await on.waitFor(/deleted leaked load balancer/, 30_000);
    const line = on.lines.find((l) => /deleted leaked load balancer/.test(l.text))!.text;
    assert.match(line, new RegExp(leakedId));
    assert.match(line, /default\/gone/);
    assert.ok(!line.includes(TEST_TOKEN));
    assert.ok(sim.count("list_load_balancers") > listsBefore);
    await eventually(() => !sim.loadBalancers.items.has(leakedId), 10_000, "deleted");
  } finally {
    await stop(on);
  }
});
