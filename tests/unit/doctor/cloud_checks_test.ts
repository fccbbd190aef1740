/**
 * The Ankra Cloud API findings: reachability and TLS, the token, the operate probe's answers, quota.
 */
import assert from "node:assert/strict";
import {
  accountCanCreateFinding,
  apiReachableFinding,
  operateFinding,
  probeVerdict,
  quotaFinding,
  tokenValidFinding,
} from "../../../lib/doctor/cloud_checks.ts";
import { failedRead, fetched } from "../../../lib/doctor/fetched.ts";
import { OPERATE_PROBE, type ProbeOutcome } from "../../../lib/doctor/operate_probe.ts";
import { classifyUnreachable } from "../../../lib/doctor/gather_facts.ts";
import { causeChain } from "../../../lib/error_text.ts";

const API = { apiUrl: "https://cloud.ankra.app" };

Deno.test("unreachable endpoints are classified from the whole cause chain", () => {
  const tls = new TypeError("fetch failed", {
    cause: new Error(
      "error sending request for url (https://x/v1/zones): client error (Connect): invalid peer certificate: " +
        "UnknownIssuer",
    ),
  });
  assert.match(causeChain(tls), /^fetch failed: error sending request .*UnknownIssuer$/);
  assert.equal(classifyUnreachable(causeChain(tls), false), "tls");
  assert.equal(classifyUnreachable("dns error: failed to lookup address information", false), "dns");
  assert.equal(classifyUnreachable("tcp connect error: Connection refused (os error 111)", false), "refused");
  assert.equal(classifyUnreachable("anything", true), "timeout");
  assert.equal(classifyUnreachable("connection reset", false), "network");
});

Deno.test("the API answering passes naming the URL; a TLS failure points at ANKRA_CLOUD_CA_BUNDLE", () => {
  const ok = apiReachableFinding({ ok: true, url: "u", status: 401, body: "" }, API);
  assert.equal(ok.status, "pass");
  assert.equal(ok.result, "https://cloud.ankra.app answered; TLS verified");
  const plain = apiReachableFinding({ ok: true, url: "u", status: 401, body: "" }, { apiUrl: "http://127.0.0.1:1" });
  assert.match(plain.result, /plain http: no TLS to verify/);
  const tls = apiReachableFinding({ ok: false, url: "u", kind: "tls", message: "invalid peer certificate" }, API);
  assert.equal(tls.status, "fail");
  assert.match(tls.result, /^TLS verification failed for https:\/\/cloud\.ankra\.app: invalid peer certificate$/);
  assert.match(tls.fix!, /set ANKRA_CLOUD_CA_BUNDLE/);
  const withBundle = apiReachableFinding(
    { ok: false, url: "u", kind: "tls", message: "UnknownIssuer" },
    { ...API, caBundlePath: "/etc/ca.pem" },
  );
  assert.match(withBundle.fix!, /ANKRA_CLOUD_CA_BUNDLE \(\/etc\/ca\.pem\)/);
  const dns = apiReachableFinding({ ok: false, url: "u", kind: "dns", message: "dns error" }, API);
  assert.match(dns.result, /the name cloud\.ankra\.app does not resolve/);
});

Deno.test("the token: accepted passes, 401 fails as invalid or expired, an outage is only a warning", () => {
  assert.equal(
    tokenValidFinding(fetched([{ name: "de-fsn1" }])).result,
    "the API accepts the token (list_zones: 1 zone)",
  );
  const invalid = tokenValidFinding(failedRead({ kind: "unauthorized", status: 401, message: "list_zones: 401" }));
  assert.equal(invalid.status, "fail");
  assert.match(invalid.result, /invalid or expired \(HTTP 401 on list_zones\)/);
  assert.match(invalid.fix!, /operate permission/);
  assert.equal(
    tokenValidFinding(failedRead({ kind: "unavailable", status: 503, message: "list_zones: unavailable" })).status,
    "warn",
  );
});

function refused(status: number, reason?: string): ProbeOutcome {
  return { created: false, failure: { kind: "x", status, reason, message: `create_load_balancer: HTTP ${status}` } };
}

Deno.test("the probe is well-formed and refused for its made-up zone and empty network", () => {
  assert.equal(OPERATE_PROBE.network_id, "");
  assert.match(OPERATE_PROBE.zone, /no-such-zone/);
  assert.equal(OPERATE_PROBE.public_ipv4, false);
  assert.equal(OPERATE_PROBE.high_availability, false);
});

Deno.test("the probe's answers: 403 is read-only, 402 and email_unverified prove operate, 404 proves both", () => {
  assert.equal(probeVerdict(refused(403)), "read_only");
  assert.equal(probeVerdict(refused(403, "email_unverified")), "email_unverified");
  assert.equal(probeVerdict(refused(402, "payment_method_required")), "payment_required");
  assert.equal(probeVerdict(refused(404)), "refused_as_invalid");
  assert.equal(probeVerdict(refused(400)), "refused_as_invalid");
  assert.equal(probeVerdict(refused(503)), "inconclusive");

  const readOnly = operateFinding(refused(403));
  assert.equal(readOnly.status, "fail");
  assert.match(readOnly.result, /may not make changes: .*HTTP 403 on create_load_balancer/);
  assert.equal(accountCanCreateFinding(refused(403)).status, "skip");

  assert.equal(operateFinding(refused(404)).status, "pass");
  assert.equal(accountCanCreateFinding(refused(404)).status, "pass");

  const email = refused(403, "email_unverified");
  assert.equal(operateFinding(email).status, "pass");
  assert.equal(accountCanCreateFinding(email).status, "fail");
  assert.match(accountCanCreateFinding(email).fix!, /verify the email address/);

  const payment = refused(402, "owner_approval_required");
  assert.equal(operateFinding(payment).status, "pass");
  const billing = accountCanCreateFinding(payment);
  assert.equal(billing.status, "fail");
  assert.match(billing.result, /HTTP 402 owner_approval_required/);
  assert.match(billing.fix!, /owner must approve/);

  assert.equal(operateFinding(refused(503)).status, "warn");
  const created = operateFinding({ created: true, loadBalancerId: "lb-1" });
  assert.equal(created.status, "fail");
  assert.match(created.fix!, /delete load balancer lb-1/);
});

Deno.test("quota: below the limit passes with the headroom; at the limit warns", () => {
  assert.equal(quotaFinding(fetched(4)).result, "4 of 5 load balancers in use: room for 1 more");
  const full = quotaFinding(fetched(5));
  assert.equal(full.status, "warn");
  assert.match(full.result, /5 load balancers of at most 5: a new LoadBalancer Service would be refused/);
  assert.equal(quotaFinding(failedRead({ kind: "network", message: "x" })).status, "skip");
});
