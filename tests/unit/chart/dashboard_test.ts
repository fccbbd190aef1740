/**
 * The Grafana dashboard against the code and the docs: every metric a panel reads is one the controller registers,
 * every panel is explained in docs/observability.md, and the copy in deploy/ carries the chart's dashboard unchanged.
 * (tests/integration/prometheus_test.ts evaluates every query against a real Prometheus scraping the controller.)
 */
import assert from "node:assert/strict";
import { load as loadYaml } from "js-yaml";
import { dashboardQueries, metricNames, readDashboard } from "../../support/metrics/dashboard_queries.ts";

const ROOT = new URL("../../..", import.meta.url).pathname;
const dashboard = await readDashboard();

/** The text of every TypeScript file under `dir`. */
async function sourcesUnder(dir: string): Promise<string> {
  const texts: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) texts.push(await sourcesUnder(path));
    else if (entry.name.endsWith(".ts")) texts.push(await Deno.readTextFile(path));
  }
  return texts.join("\n");
}

Deno.test("every metric a dashboard panel reads is registered by the controller", async () => {
  const sources = await sourcesUnder(`${ROOT}lib`);
  const queries = dashboardQueries(dashboard, { job: "j", rateInterval: "1m" });
  assert.ok(queries.length >= dashboard.panels.length, "every panel has a query");
  for (const { panel, expr } of queries) {
    const names = metricNames(expr);
    assert.ok(names.length > 0, `${panel}: ${expr} reads a metric`);
    for (const name of names) {
      const registered = name.replace(/_(bucket|sum|count)$/, "");
      assert.ok(sources.includes(`"${registered}"`), `${panel}: ${name} is registered in lib/`);
      if (name.endsWith("_bucket")) {
        assert.match(sources, new RegExp(`histogram\\(\\s*"${registered}"`), `${panel}: ${registered} is a histogram`);
      }
    }
    assert.match(expr, /\{job=~"j"\}/, `${panel}: every selector is filtered by the job variable`);
  }
});

Deno.test("the dashboard covers Ankra calls, rate limit, queues, load balancers, leader and memory", () => {
  const all = dashboardQueries(dashboard, { job: "j", rateInterval: "1m" }).flatMap((q) => metricNames(q.expr));
  for (
    const name of [
      "ankra_cloud_requests_total",
      "ankra_cloud_rate_limit_remaining",
      "workqueue_depth",
      "workqueue_queue_duration_seconds_bucket",
      "ankra_ccm_load_balancers_provisioning",
      "ankra_ccm_load_balancers_served",
      "leader_election_master_status",
      "process_resident_memory_bytes",
    ]
  ) assert.ok(all.includes(name), `a panel reads ${name}`);
  const variables = dashboard.templating.list.map((v) => `${v.name}:${v.type}`);
  assert.deepEqual(variables, ["datasource:datasource", "job:query"]);
});

Deno.test("docs/observability.md explains every panel by its title", async () => {
  const doc = await Deno.readTextFile(`${ROOT}docs/observability.md`);
  for (const panel of dashboard.panels) {
    assert.ok(doc.includes(`**${panel.title}**`), `docs/observability.md has a paragraph on ${panel.title}`);
  }
});

Deno.test("deploy/grafana-dashboard.yaml carries the chart's dashboard unchanged, for the Grafana sidecar", async () => {
  const manifest = loadYaml(await Deno.readTextFile(`${ROOT}deploy/grafana-dashboard.yaml`)) as {
    kind: string;
    metadata: { labels: Record<string, string>; namespace?: string };
    data: Record<string, string>;
  };
  assert.equal(manifest.kind, "ConfigMap");
  assert.equal(manifest.metadata.labels.grafana_dashboard, "1");
  assert.equal(manifest.metadata.namespace, undefined, "applied into the sidecar's namespace with -n");
  assert.deepEqual(
    JSON.parse(manifest.data["ankra-cloud-ccm.json"]),
    dashboard,
    "deploy/grafana-dashboard.yaml is stale: run `deno run -A scripts/render_dashboard.ts`",
  );
});
