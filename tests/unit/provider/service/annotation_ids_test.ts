/**
 * Ids and zones in annotations end up in URL paths (`/v1/edges/{id}`, `/v1/networks/{id}`,
 * `/v1/zones/{zone}/capabilities`): a value outside the API's id shape is an `InvalidAnnotation` and the Service waits,
 * so no request is ever built from it.
 */
import { ANNOTATION_PREFIX } from "../../../../lib/ankra_names.ts";
import assert from "node:assert/strict";
import { parseAnnotations } from "../../../../lib/provider/service/annotations.ts";
import { serviceIntent } from "../../../../lib/provider/service/service_plan.ts";
import { pathId } from "../../../../lib/cloud/cloud_api.ts";
import { slimService } from "../../../support/fakes/slim_service.ts";

const a = (name: string, value: string) => ({ [ANNOTATION_PREFIX + name]: value });

/** Values that would leave their path segment, or are not ids at all. */
const NOT_IDS = [
  ".",
  "..",
  "../servers",
  "a/b",
  "%2e%2e",
  "a%2Fb",
  "a?b",
  "a#b",
  "a b",
  "-a",
  "_a",
  "é",
  "a".repeat(129),
];

Deno.test("an edge, network or certificate id that is not an Ankra Cloud id is an annotation problem naming it", () => {
  for (const value of NOT_IDS) {
    for (const name of ["edge", "network-id", "certificate-ids"]) {
      const parsed = parseAnnotations(a(name, value));
      assert.ok(!parsed.ok, `${name}: ${JSON.stringify(value)} is refused`);
      assert.equal(parsed.problems.length, 1);
      assert.equal(parsed.problems[0].annotation, ANNOTATION_PREFIX + name);
      assert.match(parsed.problems[0].rule, /Ankra Cloud (edge|network|certificate) ids? \(1-128 letters, digits/);
      assert.equal(parsed.problems[0].value, value.trim());
    }
  }
  const oneBad = parseAnnotations(a("certificate-ids", "cert-a, .., cert-b"));
  assert.ok(!oneBad.ok, "one bad certificate among good ones refuses the annotation");
});

Deno.test("a zone annotation must be a zone name: dot segments and capitals are refused", () => {
  for (const value of [".", "..", "de/fsn1", "DE-FSN1", "de_fsn1", "-de", "de-", "a".repeat(65)]) {
    const parsed = parseAnnotations(a("zone", value));
    assert.ok(!parsed.ok, JSON.stringify(value));
    assert.match(`${parsed.problems[0].annotation} ${parsed.problems[0].rule}`, /zone must be a zone name such as/);
  }
});

Deno.test("ids and zones of the API's shape are accepted as given", () => {
  const parsed = parseAnnotations({
    ...a("edge", " edge-1 "),
    ...a("network-id", "9f1c2d3e-0b7a-4c1e-8d2f-1a2b3c4d5e6f"),
    ...a("zone", "de-fsn1"),
    ...a("certificate-ids", "cert.a,cert_b"),
  });
  assert.ok(parsed.ok);
  assert.equal(parsed.settings.edgeId, "edge-1");
  assert.equal(parsed.settings.networkId, "9f1c2d3e-0b7a-4c1e-8d2f-1a2b3c4d5e6f");
  assert.equal(parsed.settings.zone, "de-fsn1");
  assert.deepEqual(parsed.settings.certificateIds, ["cert.a", "cert_b"]);
});

Deno.test('a Service with edge ".." gets InvalidAnnotation and waits: no edge is looked up', () => {
  const intent = serviceIntent(slimService({ annotations: a("edge", "..") }), [], {
    clusterName: "prod",
    defaults: { highAvailability: "auto" },
  });
  const notice = intent.notices.find((n) => n.topic === "annotations")!;
  assert.equal(notice.reason, "InvalidAnnotation");
  assert.match(notice.message!, /^load-balancer\.ankra\.cloud\/edge must be an Ankra Cloud edge id .*, not "\.\."/);
  assert.ok(intent.waitFor, "nothing is created or changed");
  assert.equal(intent.settings.edgeId, undefined, "the settings name no edge");
});

Deno.test("pathId refuses dot segments and everything outside the id shape, and sends ids through unchanged", () => {
  for (const value of ["", ...NOT_IDS]) {
    assert.throws(() => pathId(value), RangeError, JSON.stringify(value));
  }
  assert.throws(() => pathId(".."), /^RangeError: path parameter "\.\." is not an Ankra Cloud id .*no request is sent/);
  for (const id of ["lb-00000a", "edge-1", "de-fsn1", "9f1c2d3e-0b7a-4c1e-8d2f-1a2b3c4d5e6f", "a..b", "x.y_z", "A1"]) {
    assert.equal(pathId(id), id);
    const url = new URL(`/v1/edges/${pathId(id)}`, "https://cloud.ankra.app");
    assert.equal(url.pathname, `/v1/edges/${id}`, "one path segment, never folded into another path");
  }
});

Deno.test("every annotation value accepted as an id passes pathId", () => {
  for (const value of ["edge-1", "e", "a".repeat(128), "a..b", "x.y_z-1"]) {
    for (const name of ["edge", "network-id"]) {
      const parsed = parseAnnotations(a(name, value));
      assert.ok(parsed.ok, `${name}=${value}`);
      const id = name === "edge" ? parsed.settings.edgeId! : parsed.settings.networkId!;
      assert.equal(pathId(id), id);
    }
  }
});
