import assert from "node:assert/strict";
import { ANNOTATION_PREFIX } from "../../../../lib/ankra_names.ts";
import { ANNOTATIONS, parseAnnotations } from "../../../../lib/provider/service/annotations.ts";
import { annotationDocument } from "../../../../scripts/annotation_docs.ts";

const a = (name: string, value: string) => ({ [ANNOTATION_PREFIX + name]: value });

Deno.test("docs/annotations.md is the table the code parses", async () => {
  const doc = await Deno.readTextFile(new URL("../../../../docs/annotations.md", import.meta.url));
  assert.equal(doc, annotationDocument(), "run: deno run --allow-write scripts/annotation_docs.ts");
  for (const annotation of ANNOTATIONS) assert.ok(doc.includes(`\`${ANNOTATION_PREFIX}${annotation.name}\``));
});

Deno.test("defaults are the API's health check and no IPv4", () => {
  const parsed = parseAnnotations({});
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.settings, {
    ipv4: false,
    networkId: undefined,
    zone: undefined,
    edgeId: undefined,
    healthCheck: { type: "tcp", path: "/", expected_status: "200-399", interval_seconds: 2, rise: 2, fall: 3 },
    balance: "roundrobin",
    protocol: "tcp",
    tlsPorts: [],
    certificateIds: [],
    redirectHttpToHttps: false,
    preserveOnDelete: false,
  });
});

Deno.test("every annotation value rule is enforced and every problem names annotation, rule and value", () => {
  const refused: [Record<string, string>, RegExp][] = [
    [a("ipv4", "maybe"), /ipv4 must be true or false, not "maybe"/],
    [a("health-check-type", "udp"), /health-check-type must be tcp, http or none, not "udp"/],
    [a("health-check-path", "healthz"), /health-check-path must be a path starting with \/, not "healthz"/],
    [a("health-check-expected-status", "ok"), /must be a status such as 200 or a range such as 200-399, not "ok"/],
    [a("health-check-interval", "0"), /health-check-interval must be an integer from 1 to 300, not "0"/],
    [a("health-check-rise", "11"), /health-check-rise must be an integer from 1 to 10, not "11"/],
    [a("health-check-fall", "x"), /health-check-fall must be an integer from 1 to 10, not "x"/],
    [a("balance", "random"), /balance must be roundrobin, leastconn or source, not "random"/],
  ];
  for (const [annotations, pattern] of refused) {
    const parsed = parseAnnotations(annotations);
    assert.ok(!parsed.ok);
    const text = parsed.problems.map((p) => `${p.annotation} ${p.rule}, not "${p.value}"`).join("; ");
    assert.match(text, pattern);
  }
});

Deno.test("accepted forms follow Go's syntax, values are trimmed and blanks mean unset", () => {
  const parsed = parseAnnotations({
    ...a("ipv4", " T "),
    ...a("health-check-interval", "+30"),
    ...a("health-check-expected-status", "399-200"),
    ...a("zone", "  "),
    ...a("health-check-type", "http"),
  });
  assert.ok(parsed.ok);
  assert.equal(parsed.settings.ipv4, true);
  assert.equal(parsed.settings.healthCheck.interval_seconds, 30);
  assert.equal(
    parsed.settings.healthCheck.expected_status,
    "399-200",
    "range order is not checked: the Go controller accepts 399-200 too",
  );
  assert.equal(parsed.settings.zone, undefined);
});

Deno.test("ClientIP session affinity balances by source unless the balance annotation says otherwise", () => {
  const affinity = parseAnnotations({}, { sessionAffinity: "ClientIP" });
  assert.ok(affinity.ok && affinity.settings.balance === "source");
  const explicit = parseAnnotations(a("balance", "leastconn"), { sessionAffinity: "ClientIP" });
  assert.ok(explicit.ok && explicit.settings.balance === "leastconn");
});

Deno.test("http, TLS and redirect annotations are parsed and checked together", () => {
  const https = parseAnnotations({
    ...a("protocol", "http"),
    ...a("tls-ports", "443, 8443"),
    ...a("certificate-ids", "cert-1,cert-2"),
    ...a("redirect-http-to-https", "true"),
  });
  assert.ok(https.ok);
  assert.deepEqual(
    [
      https.settings.protocol,
      https.settings.tlsPorts,
      https.settings.certificateIds,
      https.settings.redirectHttpToHttps,
    ],
    ["http", [443, 8443], ["cert-1", "cert-2"], true],
  );
  const refused: [Record<string, string>, RegExp][] = [
    [a("protocol", "udp"), /protocol must be tcp or http, not "udp"/],
    [a("tls-ports", "https"), /tls-ports must be comma-separated ports/],
    [a("tls-ports", "443"), /tls-ports needs load-balancer\.ankra\.cloud\/certificate-ids/],
    [{ ...a("tls-ports", "443"), ...a("certificate-ids", Array(17).fill("c").join(",")) }, /at most 16/],
    [a("redirect-http-to-https", "true"), /redirect-http-to-https needs load-balancer\.ankra\.cloud\/protocol: http/],
  ];
  for (const [annotations, pattern] of refused) {
    const parsed = parseAnnotations(annotations);
    assert.ok(!parsed.ok, JSON.stringify(annotations));
    assert.match(parsed.problems.map((p) => `${p.annotation} ${p.rule}, not "${p.value}"`).join("; "), pattern);
  }
});
