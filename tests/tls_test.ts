import assert from "node:assert/strict";
import { kubeTrustedCertificates } from "../lib/tls.ts";

const CLUSTER_CA = "-----BEGIN CERTIFICATE-----\nCLUSTER\n-----END CERTIFICATE-----\n";
const SYSTEM_CA = "-----BEGIN CERTIFICATE-----\nSYSTEM\n-----END CERTIFICATE-----\n";

Deno.test("a Kubernetes client with the cluster's CA trusts that CA alone, not the system store", () => {
  let systemRead = false;
  const trusted = kubeTrustedCertificates([CLUSTER_CA], () => {
    systemRead = true;
    return [SYSTEM_CA];
  });
  assert.deepEqual(trusted, [CLUSTER_CA]);
  assert.equal(systemRead, false, "the system store is not even read");
});

Deno.test("a Kubernetes client without a cluster CA trusts the system store", () => {
  assert.deepEqual(kubeTrustedCertificates([], () => [SYSTEM_CA]), [SYSTEM_CA]);
});
