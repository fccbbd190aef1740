/**
 * The chart's allow-list values become the controller's variables (helm template and the controller's own parsing of
 * them). What the allow-lists and the id checks make the controller do is in
 * tests/unit/controllers/service/annotation_limits_test.ts.
 */
import assert from "node:assert/strict";
import { helm } from "../support/chart/helm.ts";
import { resolveCommand } from "../../lib/config/command.ts";
import { TEST_TOKEN } from "../support/cloud/simulator.ts";

const CHART = new URL("../../chart", import.meta.url).pathname;

Deno.test("the chart's allow-list values become the controller's variables; without them none is set", async () => {
  const plain = await helm(["template", "t", CHART, "--set", "api.token=x"]);
  assert.equal(plain.code, 0, plain.text);
  assert.doesNotMatch(plain.text, /ANKRA_CLOUD_ALLOWED_/, "unset: every resource allowed, as before");
  const lists = await helm([
    "template",
    "t",
    CHART,
    "--set",
    "api.token=x",
    "--set",
    "loadBalancer.allowedCertificateIDs={cert-a,cert-b}",
    "--set",
    "loadBalancer.allowedEdges={edge-1}",
    "--set",
    "loadBalancer.allowedNetworkIDs={net-1,net-2}",
    "--set",
    "loadBalancer.networkID=net-2",
  ]);
  assert.equal(lists.code, 0, lists.text);
  const env: Record<string, string> = {};
  for (const [, name, value] of lists.text.matchAll(/- name: (ANKRA_CLOUD_[A-Z_]+)\n\s+value: "([^"]*)"/g)) {
    env[name] = value;
  }
  assert.equal(env.ANKRA_CLOUD_ALLOWED_CERTIFICATE_IDS, "cert-a,cert-b");
  assert.equal(env.ANKRA_CLOUD_ALLOWED_EDGES, "edge-1");
  assert.equal(env.ANKRA_CLOUD_ALLOWED_NETWORK_IDS, "net-1,net-2");
  const command = resolveCommand([], { env: { ...env, ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_TOKEN_FILE: "" } });
  assert.ok(command.kind === "run");
  assert.deepEqual(command.config.cloud.allowedResources, {
    certificateIds: ["cert-a", "cert-b"],
    edges: ["edge-1"],
    networkIds: ["net-1", "net-2"],
  });
  const bad = await helm(["template", "t", CHART, "--set", "api.token=x", "--set", "loadBalancer.allowedEdges={..}"]);
  assert.notEqual(bad.code, 0, "the schema refuses what is not an id");
  assert.match(bad.text, /at '\/loadBalancer\/allowedEdges\/0': '\.\.' does not match pattern/);
});
