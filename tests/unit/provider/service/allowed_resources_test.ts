/**
 * The operator's allow-lists of certificates, edges and networks a Service may name: the decision (pure), how the
 * variables are read, and the chart values that set them.
 */
import { ANNOTATION_PREFIX } from "../../../../lib/ankra_names.ts";
import assert from "node:assert/strict";
import { load as loadYaml } from "js-yaml";
import { resolveCommand } from "../../../../lib/config/command.ts";
import { ConfigError } from "../../../../lib/config_error.ts";
import { helpText } from "../../../../lib/config/help_text.ts";
import {
  type AllowedResources,
  disallowedResources,
  RESOURCE_NOT_ALLOWED,
  withinAllowedResources,
} from "../../../../lib/provider/service/allowed_resources.ts";
import { serviceIntent } from "../../../../lib/provider/service/service_plan.ts";
import { slimService } from "../../../support/fakes/slim_service.ts";
import { TEST_TOKEN } from "../../../support/cloud/simulator.ts";

const ROOT = new URL("../../../..", import.meta.url).pathname;
const OPTIONS = { clusterName: "prod", defaults: { highAvailability: "auto" as const } };
const TLS = {
  [`${ANNOTATION_PREFIX}protocol`]: "http",
  [`${ANNOTATION_PREFIX}tls-ports`]: "443",
  [`${ANNOTATION_PREFIX}certificate-ids`]: "cert-team, cert-wildcard",
};

function intentFor(annotations: Record<string, string>, allowed: AllowedResources) {
  const service = slimService({
    annotations,
    ports: [{ protocol: "TCP", port: 443, nodePort: 30443 }],
  });
  return withinAllowedResources(serviceIntent(service, [], OPTIONS), allowed);
}

Deno.test("without allow-lists every certificate, edge and network may be named, as before", () => {
  const settings = { certificateIds: ["cert-wildcard"], edgeId: "edge-other", networkId: "net-other" };
  assert.deepEqual(disallowedResources(settings, {}), []);
  const intent = serviceIntent(slimService({ annotations: TLS }), [], OPTIONS);
  assert.equal(withinAllowedResources(intent, {}), intent, "the intent is unchanged");
});

Deno.test("a certificate outside the list is a ResourceNotAllowed Warning and the Service waits: no frontend with it", () => {
  const intent = intentFor(TLS, { certificateIds: ["cert-team"] });
  const notice = intent.notices.find((n) => n.topic === "annotations")!;
  assert.equal(notice.reason, RESOURCE_NOT_ALLOWED);
  assert.equal(
    notice.message,
    `${ANNOTATION_PREFIX}certificate-ids names certificate "cert-wildcard", which ANKRA_CLOUD_ALLOWED_CERTIFICATE_IDS does not ` +
      "allow; nothing is created or changed until the annotation names an allowed one (or the controller's " +
      "operator adds it to the list)",
  );
  assert.deepEqual(intent.waitFor, { message: "an annotation names a resource that is not allowed", reported: true });
  assert.equal(intent.notices.filter((n) => n.topic === "annotations").length, 1, "one notice for the topic");

  const allowed = intentFor(TLS, { certificateIds: ["cert-wildcard", "cert-team"] });
  assert.equal(allowed.waitFor, undefined);
  assert.equal(allowed.notices.find((n) => n.topic === "annotations")!.message, undefined, "the Warning is over");
});

Deno.test("an edge or network outside its list is named with its variable; each list governs only its kind", () => {
  const annotations = {
    [`${ANNOTATION_PREFIX}edge`]: "edge-shared",
    [`${ANNOTATION_PREFIX}network-id`]: "net-finance",
  };
  const both = disallowedResources(
    { edgeId: "edge-shared", networkId: "net-finance", certificateIds: [] },
    { edges: ["edge-team"], networkIds: ["net-team"], certificateIds: [] },
  );
  assert.deepEqual(both, [
    {
      annotation: `${ANNOTATION_PREFIX}network-id`,
      kind: "network",
      id: "net-finance",
      variable: "ANKRA_CLOUD_ALLOWED_NETWORK_IDS",
    },
    { annotation: `${ANNOTATION_PREFIX}edge`, kind: "edge", id: "edge-shared", variable: "ANKRA_CLOUD_ALLOWED_EDGES" },
  ]);
  const message = intentFor(annotations, { edges: ["edge-team"], networkIds: ["net-team"] }).notices
    .find((n) => n.topic === "annotations")!.message!;
  assert.match(
    message,
    /network-id names network "net-finance", which ANKRA_CLOUD_ALLOWED_NETWORK_IDS does not allow; /,
  );
  assert.match(message, /edge names edge "edge-shared", which ANKRA_CLOUD_ALLOWED_EDGES does not allow; nothing is/);
  assert.equal(intentFor(annotations, { certificateIds: ["cert-team"] }).waitFor, undefined, "other lists unset");
  assert.ok(intentFor(annotations, { edges: [] }).waitFor, "an empty list allows nothing");
});

Deno.test("invalid annotations stay an InvalidAnnotation; the allow-lists judge only valid settings", () => {
  const intent = intentFor({
    [`${ANNOTATION_PREFIX}edge`]: "..",
    [`${ANNOTATION_PREFIX}certificate-ids`]: "cert-wildcard",
  }, {
    edges: ["edge-team"],
    certificateIds: ["cert-team"],
  });
  const notice = intent.notices.find((n) => n.topic === "annotations")!;
  assert.equal(notice.reason, "InvalidAnnotation");
  assert.ok(intent.waitFor);
});

function configOf(env: Record<string, string>) {
  const command = resolveCommand([], { env: { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ...env } });
  assert.equal(command.kind, "run");
  return command.kind === "run" ? command.config : undefined!;
}

Deno.test("the allow-lists are read from ANKRA_CLOUD_ALLOWED_*: comma-separated, spaces allowed, unset allows all", () => {
  assert.deepEqual(configOf({}).cloud.allowedResources, {
    certificateIds: undefined,
    edges: undefined,
    networkIds: undefined,
  });
  assert.deepEqual(
    configOf({
      ANKRA_CLOUD_ALLOWED_CERTIFICATE_IDS: " cert-a , cert-b,cert-a ",
      ANKRA_CLOUD_ALLOWED_EDGES: "edge-1",
      ANKRA_CLOUD_ALLOWED_NETWORK_IDS: "net-1,net-2",
      ANKRA_CLOUD_NETWORK_ID: "net-2",
    }).cloud.allowedResources,
    { certificateIds: ["cert-a", "cert-b"], edges: ["edge-1"], networkIds: ["net-1", "net-2"] },
  );
  assert.equal(configOf({ ANKRA_CLOUD_ALLOWED_EDGES: "  " }).cloud.allowedResources.edges, undefined, "blank: unset");
  for (const name of ["ANKRA_CLOUD_ALLOWED_CERTIFICATE_IDS", "ANKRA_CLOUD_ALLOWED_EDGES"]) {
    assert.match(helpText(), new RegExp(`\\n  ${name}\\n`), `--help lists ${name}`);
  }
});

Deno.test("an allow-list with something other than ids, or without the default network, stops the start", () => {
  const refused: [Record<string, string>, RegExp][] = [
    [{ ANKRA_CLOUD_ALLOWED_EDGES: "edge-1,,edge-2" }, /^ANKRA_CLOUD_ALLOWED_EDGES must be comma-separated Ankra Cloud/],
    [{ ANKRA_CLOUD_ALLOWED_NETWORK_IDS: "net-1;net-2" }, /^ANKRA_CLOUD_ALLOWED_NETWORK_IDS must be comma-separated/],
    [{ ANKRA_CLOUD_ALLOWED_CERTIFICATE_IDS: "cert-a,.." }, /^ANKRA_CLOUD_ALLOWED_CERTIFICATE_IDS must be comma/],
    [
      { ANKRA_CLOUD_ALLOWED_NETWORK_IDS: "net-1", ANKRA_CLOUD_NETWORK_ID: "net-9" },
      /^ANKRA_CLOUD_NETWORK_ID net-9 is not in ANKRA_CLOUD_ALLOWED_NETWORK_IDS: add it to the list or choose/,
    ],
  ];
  for (const [env, pattern] of refused) {
    assert.throws(() => configOf(env), (error: unknown) => error instanceof ConfigError && pattern.test(error.message));
  }
});

Deno.test("the chart's allow-list values are lists of what the controller accepts, rendered as its variables", async () => {
  const values = loadYaml(await Deno.readTextFile(`${ROOT}chart/values.yaml`)) as {
    loadBalancer: Record<string, unknown>;
  };
  const schema = JSON.parse(await Deno.readTextFile(`${ROOT}chart/values.schema.json`));
  const deployment = await Deno.readTextFile(`${ROOT}chart/templates/deployment.yaml`);
  const keys: [string, string][] = [
    ["allowedCertificateIDs", "ANKRA_CLOUD_ALLOWED_CERTIFICATE_IDS"],
    ["allowedEdges", "ANKRA_CLOUD_ALLOWED_EDGES"],
    ["allowedNetworkIDs", "ANKRA_CLOUD_ALLOWED_NETWORK_IDS"],
  ];
  for (const [key, variable] of keys) {
    assert.deepEqual(values.loadBalancer[key], [], `${key} is empty by default: everything allowed`);
    const rule = schema.properties.loadBalancer.properties[key];
    assert.equal(rule.type, "array");
    const pattern = new RegExp(rule.items.pattern);
    for (const sample of ["cert-a", "9f1c2d3e", "a".repeat(128), "a".repeat(129), "..", "a/b", "a b", "-a", "a.b_c"]) {
      const accepted = (() => {
        try {
          configOf({ [variable]: sample });
          return true;
        } catch (error) {
          if (error instanceof ConfigError) return false;
          throw error;
        }
      })();
      assert.equal(pattern.test(sample), accepted, `${key} item ${JSON.stringify(sample)}`);
    }
    assert.match(
      deployment,
      new RegExp(
        `with \\.Values\\.loadBalancer\\.${key} \\}\\}\\s+- name: ${variable}\\s+value: \\{\\{ join "," \\. \\| quote \\}\\}`,
      ),
    );
  }
});
