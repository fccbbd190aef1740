/**
 * Renders `deploy/grafana-dashboard.yaml`, the Grafana dashboard for clusters installed with `kubectl apply`: the
 * chart's opt-in ConfigMap (its JSON is `chart/dashboards/ankra-cloud-ccm.json`, the one source of the dashboard) as
 *
 *     helm template ankra-cloud-ccm chart --namespace kube-system --set api.existingSecret=ankra-cloud-ccm \
 *       --set dashboard.enabled=true --show-only templates/dashboard-configmap.yaml
 *
 *     deno run -A scripts/render_dashboard.ts           write the file
 *     deno run -A scripts/render_dashboard.ts --check   exit 1 when the checked-in file differs
 *
 * @module
 */
import { helmTemplate, writeOrCheck } from "./render_manifest.ts";

/** The dashboard's source, relative to the repository root. */
export const DASHBOARD_SOURCE = "chart/dashboards/ankra-cloud-ccm.json";

/** The rendered ConfigMap, relative to the repository root. */
export const DASHBOARD_MANIFEST_PATH = "deploy/grafana-dashboard.yaml";

/** The command that regenerates the ConfigMap, for messages. */
export const DASHBOARD_RENDER_COMMAND = "deno run -A scripts/render_dashboard.ts";

/** `helm` arguments that render the ConfigMap (run in the repository root). */
export const DASHBOARD_HELM_ARGS: readonly string[] = [
  "template",
  "ankra-cloud-ccm",
  "chart",
  "--namespace",
  "kube-system",
  "--set",
  "api.existingSecret=ankra-cloud-ccm",
  "--set",
  "dashboard.enabled=true",
  "--show-only",
  "templates/dashboard-configmap.yaml",
];

/** The comment block above the ConfigMap. */
export const DASHBOARD_HEADER = [
  `# The ankra-cloud-ccm Grafana dashboard for a Grafana sidecar (label grafana_dashboard: "1"), rendered from`,
  `# ${DASHBOARD_SOURCE} by \`${DASHBOARD_RENDER_COMMAND}\`.`,
  "# Apply it in the namespace your Grafana sidecar watches:",
  "#   kubectl apply -n <namespace> -f deploy/grafana-dashboard.yaml",
  "# or import the JSON file into Grafana (Dashboards → New → Import).",
].join("\n") + "\n";

/** The ConfigMap's whole text: {@linkcode DASHBOARD_HEADER} and what `helm template` prints. */
export async function renderDashboardManifest(helm?: string): Promise<string> {
  const rendered = (await helmTemplate(DASHBOARD_HELM_ARGS, helm)).replace(/^---\n/, "").replace(/^\n+/, "");
  // Without the namespace, `kubectl apply -n` puts it where the sidecar looks.
  return DASHBOARD_HEADER + rendered.replace(/^ {2}namespace: kube-system\n/m, "").trimEnd() + "\n";
}

if (import.meta.main) {
  await writeOrCheck({
    path: DASHBOARD_MANIFEST_PATH,
    rendered: await renderDashboardManifest(),
    same: (current, rendered) => current === rendered,
    differs: `${DASHBOARD_MANIFEST_PATH} differs from ${DASHBOARD_SOURCE}: run \`${DASHBOARD_RENDER_COMMAND}\``,
    source: DASHBOARD_SOURCE,
  }, Deno.args);
}
