/**
 * The queries of the Grafana dashboard (`chart/dashboards/ankra-cloud-ccm.json`) as Prometheus would receive them
 * from Grafana: the `$job` variable and `$__rate_interval` replaced by values.
 *
 * @module
 */

/** The dashboard's source file. */
export const DASHBOARD_PATH = new URL("../../../chart/dashboards/ankra-cloud-ccm.json", import.meta.url).pathname;

/** One query of one panel. */
export interface PanelQuery {
  /** The panel's title. */
  panel: string;
  /** The target's legend format. */
  legend: string;
  /** The PromQL expression with the variables replaced. */
  expr: string;
}

/** A Grafana dashboard's parts read here. */
export interface Dashboard {
  title: string;
  panels: { title: string; description?: string; targets?: { expr: string; legendFormat?: string }[] }[];
  templating: { list: { name: string; type: string; definition?: string }[] };
}

/** Reads the dashboard's source file. */
export async function readDashboard(): Promise<Dashboard> {
  return JSON.parse(await Deno.readTextFile(DASHBOARD_PATH)) as Dashboard;
}

/** Every panel's every query, with `$job` as `job` (a regular expression) and `$__rate_interval` as `rateInterval`. */
export function dashboardQueries(dashboard: Dashboard, vars: { job: string; rateInterval: string }): PanelQuery[] {
  return dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      panel: panel.title,
      legend: target.legendFormat ?? "",
      expr: target.expr.replaceAll("$__rate_interval", vars.rateInterval).replaceAll("$job", vars.job),
    }))
  );
}

/** The metric names an expression reads (a name directly followed by a label matcher). */
export function metricNames(expr: string): string[] {
  return [...new Set([...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g)].map((m) => m[1]))];
}
