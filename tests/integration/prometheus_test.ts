/**
 * The Grafana dashboard against a real Prometheus: Prometheus scrapes the released controller's HTTPS /metrics with the
 * token of a ServiceAccount bound to the chart's metrics reader ClusterRole (delegated authorization, as the chart's
 * ServiceMonitor does), the controller initialises a Node and serves a burst of 20 LoadBalancer Services from the
 * simulator, and every panel's query, evaluated through Prometheus' HTTP API, returns data.
 *
 * Needs the `prometheus` binary (Debian's package; `PROMETHEUS` may name another).
 */
import assert from "node:assert/strict";
import { loadAll } from "js-yaml";
import { freePort, testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { dashboardQueries, readDashboard } from "../support/metrics/dashboard_queries.ts";
import { eventually } from "../support/wait/eventually.ts";
import { helmOk } from "../support/chart/helm.ts";
import { kubeletNode, kubeOk, kubeRequest, serviceIngress } from "../support/http/kube_http.ts";
import { type Replica, startReplica, stop } from "../support/controller/controller_process.ts";
import { releasedLauncher } from "../support/image/release_build.ts";
import { type RunningPrometheus, type Sample, startPrometheus } from "../support/metrics/prometheus.ts";
import { serverSeed, startTestCloud, TEST_TOKEN, testSeed } from "../support/cloud/simulator.ts";

const CHART = new URL("../../chart", import.meta.url).pathname;
const JOB = "ankra-cloud-ccm";
const BURST = 20;

/** The chart's metrics reader ClusterRole and its binding to `reader`, as `helm template` renders them. */
async function chartReaderRbac(reader: string): Promise<{ kind: string; metadata: { name: string } }[]> {
  const rendered = await helmOk([
    "template",
    "t",
    CHART,
    "--namespace",
    "kube-system",
    "--set",
    "api.token=x",
    "--set",
    `metrics.readers[0].name=${reader}`,
    "--set",
    "metrics.readers[0].namespace=kube-system",
    "--show-only",
    "templates/metrics-reader-rbac.yaml",
  ]);
  return (loadAll(rendered) as ({ kind: string; metadata: { name: string } } | null)[])
    .filter((doc) => doc !== null);
}

function describe(samples: Sample[]): string {
  if (samples.length === 0) return "(no data)";
  return samples.map((s) => {
    const labels = Object.values(s.metric).join(" ") || "value";
    const value = Number.isInteger(s.value) ? String(s.value) : s.value.toPrecision(3);
    return `${labels}=${value}`;
  }).join(", ");
}

Deno.test("a real Prometheus scraping the controller answers every dashboard panel's query with data", async () => {
  const plane = testControlPlane();
  await using cloud = await startTestCloud(testSeed({
    settings: { load_balancer_create_delay_ms: 3000, load_balancer_quota: 50, rate_limit_per_minute: 600 },
  }));
  const sim = cloud.simulator.sim;
  const dir = await Deno.makeTempDir({ prefix: "ccm-prometheus-test-" });
  const reader = uniqueName("prometheus");
  const node = uniqueName("prom-node");
  const warmUp = `${reader}-warm-up`;
  const burst = Array.from({ length: BURST }, (_, i) => `${reader}-svc-${i}`);
  const services = [warmUp, ...burst];
  const rbac = await chartReaderRbac(reader);
  assert.deepEqual(rbac.map((doc) => doc.kind), ["ClusterRole", "ClusterRoleBinding"]);
  let replica: Replica | undefined;
  let prometheus: RunningPrometheus | undefined;
  try {
    // Prometheus' identity: a ServiceAccount bound to the chart's reader ClusterRole.
    await kubeOk(plane, "POST", "/api/v1/namespaces/kube-system/serviceaccounts", {
      body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: reader } },
    });
    for (const doc of rbac) {
      const path = `/apis/rbac.authorization.k8s.io/v1/${
        doc.kind === "ClusterRole" ? "clusterroles" : "clusterrolebindings"
      }`;
      await kubeRequest(plane, "DELETE", `${path}/${doc.metadata.name}`);
      await kubeOk(plane, "POST", path, { body: doc });
    }
    const token = (await kubeOk<{ status: { token: string } }>(
      plane,
      "POST",
      `/api/v1/namespaces/kube-system/serviceaccounts/${reader}/token`,
      { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } } },
    )).status.token;
    await Deno.writeTextFile(`${dir}/token`, token, { mode: 0o600 });

    sim.world.addServer(serverSeed({
      id: `srv-${node}`,
      hostname: node,
      zone: "de-fsn1",
      interfaces: [{ network_id: "net-1", address: "10.0.0.211" }],
    }));
    const port = freePort();
    replica = await startReplica(
      [
        "--leader-elect=true",
        `--secure-port=${port}`,
        "--bind-address=127.0.0.1",
        "--cluster-name=prom",
      ],
      { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_API_URL: cloud.simulator.url, ANKRA_CLOUD_NETWORK_ID: "net-1" },
      {
        // The release artifact, as users run it: its runtime, its permission list, its V8 flags.
        launcher: await releasedLauncher(),
      },
    );
    await replica.waitFor(/Ankra Cloud provider initialised/);
    prometheus = await startPrometheus([{ job: JOB, target: `127.0.0.1:${port}`, bearerTokenFile: `${dir}/token` }]);
    const p = prometheus;
    await eventually(
      async () => (await p.query(`up{job="${JOB}"} == 1`)).length === 1,
      30_000,
      "the controller scraped successfully (up == 1)",
    );
    await eventually(
      async () => (await p.query(`leader_election_master_status{job="${JOB}"} == 1`)).length === 1,
      30_000,
      "the leader seen by Prometheus",
    );

    // Activity: a Node to initialise and one LoadBalancer Service, then a burst of them created at once. The first
    // one gives every series of a create its first sample: a counter's first sample is its baseline for rate(), so
    // calls made before Prometheus first saw the series never show in a rate.
    await kubeOk(plane, "POST", "/api/v1/nodes", {
      body: kubeletNode(node, {
        providerID: `ankracloud://de-fsn1/srv-${node}`,
        addresses: [{ type: "InternalIP", address: "10.0.0.211" }],
      }),
    });
    const createService = (name: string) =>
      kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
        body: { metadata: { name }, spec: { type: "LoadBalancer", ports: [{ port: 80 }] } },
      });
    await createService(warmUp);
    await eventually(
      async () => (await p.query(`ankra_ccm_load_balancers_served{job="${JOB}"} >= 1`)).length === 1,
      30_000,
      "the first load balancer served, seen by Prometheus",
    );
    const burstStarted = performance.now();
    await Promise.all(burst.map(createService));
    await eventually(
      async () =>
        (await p.query(`max_over_time(ankra_ccm_load_balancers_provisioning{job="${JOB}"}[5m]) > 0`)).length === 1,
      30_000,
      "provisioning load balancers seen by Prometheus",
    );
    await eventually(
      async () =>
        (await Promise.all(services.map((name) => serviceIngress(plane, "default", name)))).every((ip) => ip.length),
      60_000,
      `addresses on all ${BURST} Services`,
    );
    const burstSeconds = (performance.now() - burstStarted) / 1000;
    // Every panel's every query, as Grafana sends it with the job variable set to this job: data now, and the
    // peak over the burst (a one-second subquery over its whole duration, once that covers the last scrape).
    const window = `${Math.ceil((performance.now() - burstStarted) / 1000) + 10}s`;
    await eventually(
      async () =>
        (await p.query(`max_over_time(ankra_ccm_load_balancers_served{job="${JOB}"}[${window}:1s]) > ${BURST}`))
          .length === 1,
      30_000,
      `${BURST + 1} served load balancers seen by Prometheus`,
    );
    const dashboard = await readDashboard();
    const report: string[] = [`burst of ${BURST} Services: every address in ${burstSeconds.toFixed(1)} s`];
    for (const query of dashboardQueries(dashboard, { job: JOB, rateInterval: "1m" })) {
      const now = await p.query(query.expr);
      assert.ok(now.length > 0, `${query.panel} (${query.legend}): ${query.expr} returns data`);
      assert.ok(now.some((s) => Number.isFinite(s.value)), `${query.panel}: ${query.expr} has a number`);
      const peak = await p.query(`max_over_time((${query.expr})[${window}:1s])`);
      report.push(`${query.panel} [${query.legend}]: now ${describe(now)}; peak ${describe(peak)}`);
    }
    const jobs = await p.labelValues("job", "ankra_cloud_credentials_accepted");
    assert.deepEqual(jobs, [JOB], "the dashboard's job variable lists the controller's job");
    const createRate = await p.query(
      `max_over_time((sum(rate(ankra_cloud_requests_total{job="${JOB}",operation="create_load_balancer"}[1m])))` +
        `[${window}:1s])`,
    );
    assert.ok(createRate[0]?.value > 0, "the burst's creates show in the calls panel's rate");
    console.log(report.join("\n"));
  } catch (error) {
    console.error(`controller's last lines:\n${replica?.lines.slice(-40).map((l) => l.text).join("\n")}`);
    console.error(`prometheus' log:\n${prometheus?.log()}`);
    throw error;
  } finally {
    for (const name of services) await kubeRequest(plane, "DELETE", `/api/v1/namespaces/default/services/${name}`);
    await eventually(
      async () =>
        (await Promise.all(
          services.map((name) => kubeRequest(plane, "GET", `/api/v1/namespaces/default/services/${name}`)),
        )).every((answer) => answer.status === 404),
      30_000,
      "the Services deleted",
    ).catch(() => {});
    await prometheus?.[Symbol.asyncDispose]();
    if (replica) await stop(replica);
    await kubeRequest(plane, "DELETE", `/api/v1/nodes/${node}`);
    await kubeRequest(plane, "DELETE", `/api/v1/namespaces/kube-system/serviceaccounts/${reader}`);
    for (const doc of rbac) {
      const path = `/apis/rbac.authorization.k8s.io/v1/${
        doc.kind === "ClusterRole" ? "clusterroles" : "clusterrolebindings"
      }`;
      await kubeRequest(plane, "DELETE", `${path}/${doc.metadata.name}`);
    }
    await Deno.remove(dir, { recursive: true });
  }
});
