/**
 * The chart's opt-ins for people who watch the controller, rendered with the real helm: pod annotations, labels and
 * extra environment, a PodDisruptionBudget with more than one replica, the Prometheus operator's ServiceMonitor (with
 * its headless Service) and PodMonitor, the metrics reader ClusterRole and binding, and the Grafana dashboard's
 * ConfigMap. Each rendered object is checked for what makes it work (selectors that match the pods, the port the
 * container serves, the sidecar label, the dashboard unchanged), the Kubernetes objects are accepted by the real
 * kube-apiserver (server-side dry run), and with the defaults none of them appears.
 */
import assert from "node:assert/strict";
import { dump as dumpYaml, loadAll } from "js-yaml";
import { helm, helmOk, kubectl, toolPath } from "../support/chart/helm.ts";
import { DASHBOARD_MANIFEST_PATH, renderDashboardManifest } from "../../scripts/render_dashboard.ts";
import { readDashboard } from "../support/metrics/dashboard_queries.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const CHART = `${ROOT}chart`;

/** A rendered object, read loosely: the assertions say what each field must be. */
type Doc = {
  apiVersion: string;
  kind: string;
  // deno-lint-ignore no-explicit-any
  metadata: { name: string; namespace?: string; [k: string]: any };
  // deno-lint-ignore no-explicit-any
  [k: string]: any;
};

const EVERY_OPT_IN = {
  api: { token: "chart-test-token" },
  replicas: 2,
  podAnnotations: { "example.com/team": "platform", "prometheus.io/scrape": "false" },
  podLabels: { "example.com/tier": "control", "app.kubernetes.io/name": "overridden" },
  extraEnv: [
    { name: "HTTPS_PROXY", value: "http://proxy.example:3128" },
    { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
  ],
  metrics: {
    readers: [{ name: "prometheus-k8s", namespace: "monitoring" }],
    serviceMonitor: { enabled: true, labels: { release: "kube-prometheus-stack" }, interval: "15s" },
    podMonitor: {
      enabled: true,
      labels: { release: "kube-prometheus-stack" },
      authorization: { type: "Bearer", credentials: { name: "prometheus-metrics-token", key: "token" } },
    },
  },
  dashboard: { enabled: true, namespace: "monitoring", annotations: { grafana_folder: "Kubernetes" } },
};

async function render(values: unknown, extra: string[] = []): Promise<Doc[]> {
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  try {
    await Deno.writeTextFile(file, dumpYaml(values));
    const text = await helmOk([
      "template",
      "ankra-cloud-ccm",
      CHART,
      "--namespace",
      "kube-system",
      "-f",
      file,
      ...extra,
    ]);
    return (loadAll(text) as (Doc | null)[]).filter((doc): doc is Doc => doc !== null);
  } finally {
    await Deno.remove(file);
  }
}

function only(docs: Doc[], kind: string, name?: string): Doc {
  const found = docs.filter((d) => d.kind === kind && (!name || d.metadata.name === name));
  assert.equal(found.length, 1, `exactly one ${kind}${name ? ` ${name}` : ""}: ${found.length}`);
  return found[0];
}

function selects(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

Deno.test("every observability opt-in renders objects whose selectors, ports and labels fit the controller's pods", async () => {
  const docs = await render(EVERY_OPT_IN);
  const deployment = only(docs, "Deployment");
  const pod = deployment.spec.template;
  const container = pod.spec.containers[0];
  const port = container.ports[0];

  // Pod annotations and labels are added; the selector labels stay the chart's.
  assert.equal(pod.metadata.annotations["example.com/team"], "platform");
  assert.ok(pod.metadata.annotations["checksum/secret"], "the chart's own annotation stays");
  assert.equal(pod.metadata.labels["example.com/tier"], "control");
  assert.equal(pod.metadata.labels["app.kubernetes.io/name"], "ankra-cloud-ccm", "a selector label is not overridden");
  assert.ok(selects(deployment.spec.selector.matchLabels, pod.metadata.labels));
  // Extra variables come after the chart's, as given (valueFrom included).
  const env = container.env as { name: string; value?: string; valueFrom?: unknown }[];
  assert.deepEqual(env.slice(-2), EVERY_OPT_IN.extraEnv);
  assert.equal(env[0].name, "ANKRA_CLOUD_TOKEN_FILE");

  // Two replicas: a drain evicts one at a time.
  const pdb = only(docs, "PodDisruptionBudget");
  assert.equal(pdb.spec.maxUnavailable, 1);
  assert.ok(selects(pdb.spec.selector.matchLabels, pod.metadata.labels));

  // ServiceMonitor → headless Service → the pods' https port; HTTPS with Prometheus' own token.
  const service = only(docs, "Service", "ankra-cloud-ccm-metrics");
  assert.equal(service.spec.clusterIP, "None");
  assert.ok(selects(service.spec.selector, pod.metadata.labels), "the metrics Service selects the controller's pods");
  assert.deepEqual(service.spec.ports.map((p: { name: string; targetPort: number }) => [p.name, p.targetPort]), [
    ["https", port.containerPort],
  ]);
  const serviceMonitor = only(docs, "ServiceMonitor");
  assert.equal(serviceMonitor.apiVersion, "monitoring.coreos.com/v1");
  assert.equal(serviceMonitor.metadata.labels.release, "kube-prometheus-stack");
  assert.ok(selects(serviceMonitor.spec.selector.matchLabels, service.metadata.labels));
  assert.deepEqual(serviceMonitor.spec.namespaceSelector.matchNames, ["kube-system"]);
  const endpoint = serviceMonitor.spec.endpoints[0];
  assert.deepEqual(
    [endpoint.port, endpoint.path, endpoint.scheme, endpoint.interval, endpoint.bearerTokenFile, endpoint.tlsConfig],
    ["https", "/metrics", "https", "15s", "/var/run/secrets/kubernetes.io/serviceaccount/token", {
      insecureSkipVerify: true,
    }],
  );

  // PodMonitor → the pods' port by name, with the Secret's token.
  const podMonitor = only(docs, "PodMonitor");
  assert.ok(selects(podMonitor.spec.selector.matchLabels, pod.metadata.labels));
  const podEndpoint = podMonitor.spec.podMetricsEndpoints[0];
  assert.equal(podEndpoint.port, port.name);
  assert.equal(podEndpoint.scheme, "https");
  assert.deepEqual(podEndpoint.authorization, EVERY_OPT_IN.metrics.podMonitor.authorization);

  // The reader ClusterRole allows exactly get /metrics, bound to the named ServiceAccount.
  const role = only(docs, "ClusterRole", "ankra-cloud-ccm-metrics-reader");
  assert.deepEqual(role.rules, [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }]);
  const binding = only(docs, "ClusterRoleBinding", "ankra-cloud-ccm-metrics-reader");
  assert.deepEqual(binding.subjects, [{ kind: "ServiceAccount", name: "prometheus-k8s", namespace: "monitoring" }]);

  // The dashboard for Grafana's sidecar: its label, the folder annotation, the JSON unchanged.
  const dashboard = only(docs, "ConfigMap", "ankra-cloud-ccm-dashboard");
  assert.equal(dashboard.metadata.namespace, "monitoring");
  assert.equal(dashboard.metadata.labels.grafana_dashboard, "1");
  assert.equal(dashboard.metadata.annotations.grafana_folder, "Kubernetes");
  assert.deepEqual(JSON.parse(dashboard.data["ankra-cloud-ccm.json"]), await readDashboard());
});

Deno.test("the kube-apiserver accepts every rendered Kubernetes object of the opt-ins (server-side dry run)", async () => {
  const docs = (await render(EVERY_OPT_IN)).filter((d) => !d.apiVersion.startsWith("monitoring.coreos.com/"));
  const kinds = docs.map((d) => d.kind).sort();
  for (const kind of ["ClusterRole", "ConfigMap", "Deployment", "PodDisruptionBudget", "Service"]) {
    assert.ok(kinds.includes(kind), `${kind} rendered`);
  }
  // The dashboard's namespace need not exist for a dry run of a create: put it where the rest goes.
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  try {
    const inKubeSystem = docs.map((d) =>
      d.kind === "ConfigMap" ? { ...d, metadata: { ...d.metadata, namespace: "kube-system" } } : d
    );
    await Deno.writeTextFile(file, inKubeSystem.map((d) => dumpYaml(d)).join("---\n"));
    const result = await kubectl(["apply", "--dry-run=server", "-f", file]);
    assert.equal(result.code, 0, result.text);
    assert.equal(result.text.match(/\(server dry run\)/g)?.length, docs.length, result.text);
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("with the default values no observability object is rendered, and one replica gets no PodDisruptionBudget", async () => {
  const defaults = await render({ api: { token: "x" } });
  const kinds = defaults.map((d) => `${d.kind}/${d.metadata.name}`);
  for (const absent of ["ServiceMonitor", "PodMonitor", "PodDisruptionBudget", "ConfigMap"]) {
    assert.ok(!kinds.some((k) => k.startsWith(`${absent}/`)), `no ${absent} by default: ${kinds.join(", ")}`);
  }
  assert.ok(!kinds.includes("Service/ankra-cloud-ccm-metrics"));
  assert.ok(!kinds.includes("ClusterRole/ankra-cloud-ccm-metrics-reader"));
  const pod = only(defaults, "Deployment").spec.template;
  assert.deepEqual(Object.keys(pod.metadata.labels).sort(), ["app.kubernetes.io/instance", "app.kubernetes.io/name"]);
  const twoWithoutBudget = await render({ api: { token: "x" }, replicas: 2, podDisruptionBudget: { enabled: false } });
  assert.ok(!twoWithoutBudget.some((d) => d.kind === "PodDisruptionBudget"));
  const monitorOnly = await render({ api: { token: "x" }, metrics: { serviceMonitor: { enabled: true } } });
  assert.ok(monitorOnly.some((d) => d.kind === "ClusterRole" && d.metadata.name === "ankra-cloud-ccm-metrics-reader"));
  assert.ok(!monitorOnly.some((d) => d.kind === "ClusterRoleBinding" && d.metadata.name.endsWith("metrics-reader")));
});

Deno.test("helm lint --strict passes with every opt-in, and the schema refuses a misspelt opt-in naming it", async () => {
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  try {
    await Deno.writeTextFile(file, dumpYaml(EVERY_OPT_IN));
    const lint = await helm(["lint", "--strict", CHART, "-f", file]);
    assert.equal(lint.code, 0, lint.text);
  } finally {
    await Deno.remove(file);
  }
  const misspelt = await helm([
    "template",
    "t",
    CHART,
    "--set",
    "api.token=x",
    "--set",
    "metrics.serviceMonitor.enable=true",
  ]);
  assert.notEqual(misspelt.code, 0);
  assert.match(misspelt.text, /enable/);
  const badInterval = await helm([
    "template",
    "t",
    CHART,
    "--set",
    "api.token=x",
    "--set",
    "metrics.podMonitor.interval=often",
  ]);
  assert.notEqual(badInterval.code, 0);
  assert.match(badInterval.text, /interval/);
});

Deno.test("deploy/grafana-dashboard.yaml is exactly what scripts/render_dashboard.ts renders from the chart", async () => {
  const rendered = await renderDashboardManifest(toolPath("helm"));
  const current = await Deno.readTextFile(`${ROOT}${DASHBOARD_MANIFEST_PATH}`);
  assert.equal(
    current,
    rendered,
    `${DASHBOARD_MANIFEST_PATH} is stale: run \`deno run -A scripts/render_dashboard.ts\``,
  );
});
