/**
 * chart/values.schema.json against the chart's own values, the Go chart 0.1.1's values and the controller's parser:
 * every key either values file has is declared (so `helm upgrade --reuse-values` from the Go chart validates), the
 * shapes the chart owns refuse unknown keys, and what the schema accepts the controller accepts too — for the
 * cluster name, network, zone and metrics mode exactly the same set.
 *
 * Schema patterns are ECMA-262 regular expressions (JSON Schema says so), so they are checked here with RegExp; the
 * Helm side of the same schema is in tests/integration/chart_test.ts.
 */
import assert from "node:assert/strict";
import { load as loadYaml } from "js-yaml";
import { resolveCommand } from "../../../lib/config/command.ts";
import { ConfigError } from "../../../lib/config_error.ts";
import { TEST_TOKEN } from "../../support/cloud/simulator.ts";

const ROOT = new URL("../../..", import.meta.url).pathname;

interface SchemaNode {
  type?: string;
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: boolean | SchemaNode;
  items?: SchemaNode;
}

const schema = JSON.parse(await Deno.readTextFile(`${ROOT}chart/values.schema.json`)) as SchemaNode;
const chartValues = loadYaml(await Deno.readTextFile(`${ROOT}chart/values.yaml`)) as Record<string, unknown>;
const goValues = loadYaml(
  await Deno.readTextFile(`${ROOT}tests/fixtures/go-chart-0.1.1/values.yaml`),
) as Record<string, unknown>;

function node(path: string): SchemaNode {
  let current = schema;
  for (const key of path.split(".")) {
    const next = current.properties?.[key];
    assert.ok(next, `the schema declares ${path}`);
    current = next;
  }
  return current;
}

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (value === null) return "null";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** Whether the schema accepts `value` at `path` (the keywords this schema uses on scalars). */
function schemaAccepts(path: string, value: unknown): boolean {
  const rule = node(path);
  if (rule.type && rule.type !== typeOf(value)) return false;
  if (rule.enum && !rule.enum.includes(value)) return false;
  if (rule.pattern && !new RegExp(rule.pattern).test(String(value))) return false;
  if (rule.minimum !== undefined && (value as number) < rule.minimum) return false;
  if (rule.maximum !== undefined && (value as number) > rule.maximum) return false;
  return true;
}

/** Whether the controller starts with `args` and `env` (plus a token). */
function controllerAccepts(args: string[], env: Record<string, string> = {}): boolean {
  try {
    resolveCommand(args, { env: { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ...env } });
    return true;
  } catch (error) {
    if (error instanceof ConfigError) return false;
    throw error;
  }
}

/** Walks `values` against the schema: every key declared with its type; owned shapes closed to unknown keys. */
function assertDeclared(values: Record<string, unknown>, rule: SchemaNode, path: string): void {
  assert.equal(rule.additionalProperties, false, `${path || "(top level)"} refuses unknown keys`);
  for (const [key, value] of Object.entries(values)) {
    const at = path ? `${path}.${key}` : key;
    const child = rule.properties?.[key];
    assert.ok(child, `the schema declares ${at}`);
    if (child.type) assert.equal(child.type === "number" ? "integer" : child.type, typeOf(value), `type of ${at}`);
    if (child.properties) assertDeclared(value as Record<string, unknown>, child, at);
  }
}

Deno.test("every value of the chart and of the Go chart 0.1.1 is declared in the schema with its type", () => {
  assertDeclared(chartValues, schema, "");
  assertDeclared(goValues, schema, "");
  const goKeys = JSON.stringify(Object.keys(goValues).sort());
  const added = Object.keys(chartValues).filter((key) => !(key in goValues));
  const observability = ["podAnnotations", "podLabels", "extraEnv", "podDisruptionBudget", "metrics", "dashboard"];
  assert.deepEqual(
    added,
    ["metricsAuthorization", "admissionPolicy", "cleanup", ...observability],
    "the chart adds only metricsAuthorization, the admission policy, the uninstall cleanup and the observability " +
      `opt-ins to ${goKeys}`,
  );
  for (const [path, value] of [["replicas", 1], ["clusterName", "kubernetes"], ["logVerbosity", 2]] as const) {
    assert.ok(schemaAccepts(path, value), `${path}=${value}`);
  }
});

Deno.test("the schema's cluster name, network, zone and metrics mode are exactly what the controller accepts", () => {
  const cases: [path: string, samples: string[], toController: (value: string) => boolean][] = [
    [
      "clusterName",
      ["prod", "a", "prod.eu_1", "A1", "a".repeat(63), "a".repeat(64), "-prod", "prod-", "pro d", "prød", "a/b"],
      (value) => controllerAccepts([`--cluster-name=${value}`]),
    ],
    [
      "loadBalancer.networkID",
      ["net-1", "9f1c2d3e", "a".repeat(128), "a".repeat(129), "-net", "net 1", "net/1", "net_1.2"],
      (value) => controllerAccepts([], { ANKRA_CLOUD_NETWORK_ID: value }),
    ],
    [
      "loadBalancer.zone",
      ["de-fsn1", "a", "a".repeat(64), "a".repeat(65), "DE-FSN1", "de-", "-de", "de_fsn1"],
      (value) => controllerAccepts([], { ANKRA_CLOUD_ZONE: value }),
    ],
    [
      "metricsAuthorization",
      ["delegated", "none", "open", "Delegated"],
      (value) => controllerAccepts([`--metrics-authorization=${value}`]),
    ],
    [
      "loadBalancer.defaultMode",
      ["load-balancer", "node-addresses", "nodes", "Node-Addresses", ""],
      (value) => controllerAccepts([`--default-load-balancer-mode=${value}`]),
    ],
  ];
  for (const [path, samples, toController] of cases) {
    for (const sample of samples) {
      assert.equal(schemaAccepts(path, sample), toController(sample), `${path}=${JSON.stringify(sample)}`);
    }
  }
});

Deno.test("what the schema accepts for the API URL, HA mode and verbosity, the controller accepts", () => {
  const cases: [path: string, samples: unknown[], toController: (value: unknown) => boolean][] = [
    [
      "api.url",
      ["https://cloud.ankra.app", "http://127.0.0.1:8080", "https://api.example/v1/", "ftp://x", "https://u:p@x", "x"],
      (value) => controllerAccepts([], { ANKRA_CLOUD_API_URL: String(value) }),
    ],
    [
      "loadBalancer.highAvailability",
      ["auto", "true", "false", true, false, "TRUE", "maybe", ""],
      (value) => controllerAccepts([], { ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY: String(value) }),
    ],
    ["logVerbosity", [0, 2, 10, 11, -1], (value) => controllerAccepts([`--v=${value}`])],
    [
      // Empty renders no flag (the controller's list). A range whose end is below its start passes the schema and is
      // refused by the controller with the item named: JSON Schema cannot compare two numbers of one string.
      "loadBalancer.nodeAddressReservedPorts",
      ["", "none", "NONE", "22", "22,2379-2380,8472/udp", "1-10/udp, 30/sctp", "0", "65536", "22,", "abc", "80/icmp"],
      (value) => controllerAccepts(value === "" ? [] : [`--node-address-reserved-ports=${value}`]),
    ],
  ];
  for (const [path, samples, toController] of cases) {
    for (const sample of samples) {
      if (schemaAccepts(path, sample)) assert.ok(toController(sample), `${path}=${JSON.stringify(sample)}`);
    }
  }
  assert.ok(!schemaAccepts("api.url", "https://u:p@x"), "no credentials in the URL");
  assert.ok(!schemaAccepts("api.url", "http://cloud.example"), "plain http only to loopback, as the controller says");
  assert.ok(schemaAccepts("api.url", "http://127.0.0.1:8787"), "a local simulator");
  assert.ok(!schemaAccepts("logVerbosity", 11));
  for (const value of ["0", "65536", "22,", "80/icmp"]) {
    assert.ok(!schemaAccepts("loadBalancer.nodeAddressReservedPorts", value), value);
  }
});
