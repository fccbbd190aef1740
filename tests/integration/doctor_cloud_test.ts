/**
 * `ankra-cloud-ccm doctor` end to end, its Ankra Cloud side: the real kube-apiserver, the Ankra Cloud simulator served
 * over TLS (its CA in ANKRA_CLOUD_CA_BUNDLE) and the doctor in-process. A healthy setup passes every check; the
 * configuration, the API's certificate, a refused or read-only token, the account's billing gates and its load
 * balancer quota are each seen failing (or warning), with the checks that depend on them skipped; nothing the doctor
 * does may change either side.
 *
 * Every test starts from a cluster without Nodes and without the Leases the doctor reads (test files run one after
 * another, so this touches no other test's objects).
 */
import assert from "node:assert/strict";
import { AnkraCloudClient } from "../../lib/cloud/client.ts";
import { testControlPlane, uniqueName } from "../support/control_plane.ts";
import {
  cloudEnv,
  createNode,
  doctor,
  healthyWorld,
  resetCluster,
  startCloud,
  writesOf,
} from "../support/doctor_world.ts";
import { READ_ONLY_TOKEN, TEST_TOKEN } from "../support/simulator.ts";

Deno.test("a healthy cluster: every check passes, exit code 0, and only the refused probe is not a read", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  await healthyWorld(cloud);
  const { report, by, text } = await doctor(cloudEnv(cloud));
  for (const finding of report.findings) assert.equal(finding.status, "pass", `${finding.id}: ${finding.result}`);
  assert.equal(report.ok, true);
  assert.equal(report.findings.length, 17);
  assert.match(by["api-reachable"].result, /^https:\/\/127\.0\.0\.1:\d+ answered; TLS verified$/);
  assert.match(by["nodes-matched"].result, /all 2 nodes matched \(1 by providerID, 1 by hostname\)/);
  assert.match(by["private-network"].result, /share net-1/);
  assert.equal(by["zone-capabilities"].result, "de-fsn1: HA pair");
  assert.match(by["rbac"].result, /^test-admin may do all 23 things the controller does$/);
  assert.match(text, /^ankra-cloud-ccm v[\d.]+ doctor: Ankra Cloud API https:\/\/127\.0\.0\.1:\d+, Kubernetes https:/);
  assert.match(text, /17 passed, 0 failed, 0 warnings, 0 skipped: ready\n$/);
  assert.match(by["cluster-name-unique"].result, /^no other cluster.s load balancer carries --cluster-name kubernetes/);
  const writes = writesOf(cloud);
  assert.deepEqual(writes.map((w) => [w.operation, w.status]), [["create_load_balancer", 404]]);
  assert.equal(cloud.simulator.sim.loadBalancers.items.size, 0, "the probe created nothing");
  await resetCluster();
});

Deno.test("a token the API refuses fails, and the checks that need it are skipped; the cluster checks still run", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  await healthyWorld(cloud);
  const { report, by } = await doctor(
    cloudEnv(cloud, { ANKRA_CLOUD_TOKEN: "act_bm90LWEta25vd24tdG9rZW4teHh4eHh4eHh4" }),
  );
  assert.equal(report.ok, false);
  assert.equal(by["api-reachable"].status, "pass");
  assert.equal(by["token-valid"].status, "fail");
  assert.match(by["token-valid"].result, /invalid or expired \(HTTP 401 on list_zones\)/);
  for (const id of ["token-operate", "account-can-create", "nodes-matched", "private-network", "zone-capabilities"]) {
    assert.equal(by[id].status, "skip", id);
  }
  assert.equal(by["kubelet-external"].status, "pass");
  assert.equal(by["rbac"].status, "pass");
  assert.equal(writesOf(cloud).length, 0, "no probe with a refused token");
  await resetCluster();
});

Deno.test("a read-only token fails the operate check; the account check is skipped", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  await healthyWorld(cloud);
  const { report, by } = await doctor(cloudEnv(cloud, { ANKRA_CLOUD_TOKEN: READ_ONLY_TOKEN }));
  assert.equal(report.ok, false);
  assert.equal(by["token-valid"].status, "pass");
  assert.equal(by["token-operate"].status, "fail");
  assert.match(by["token-operate"].result, /HTTP 403 on create_load_balancer/);
  assert.match(by["token-operate"].fix!, /operate permission/);
  assert.equal(by["account-can-create"].status, "skip");
  assert.equal(by["nodes-matched"].status, "pass", "reads still work");
  await resetCluster();
});

Deno.test("billing gates: an unverified email and a missing payment method fail the account check", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  const settings = cloud.simulator.sim.world.settings;
  settings.email_verified = false;
  let { by } = await doctor(cloudEnv(cloud));
  assert.equal(by["token-operate"].status, "pass");
  assert.equal(by["account-can-create"].status, "fail");
  assert.match(by["account-can-create"].result, /email_unverified/);
  settings.email_verified = true;
  settings.payment = "payment_method_required";
  ({ by } = await doctor(cloudEnv(cloud)));
  assert.equal(by["account-can-create"].status, "fail");
  assert.match(by["account-can-create"].result, /HTTP 402 payment_method_required/);
  assert.match(by["account-can-create"].fix!, /payment method/);
  assert.equal(cloud.simulator.sim.loadBalancers.items.size, 0);
});

Deno.test("an API certificate from an unknown CA fails reachability and points at ANKRA_CLOUD_CA_BUNDLE", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  const env = cloudEnv(cloud);
  delete env.ANKRA_CLOUD_CA_BUNDLE;
  const { report, by } = await doctor(env);
  assert.equal(report.ok, false);
  assert.equal(by["api-reachable"].status, "fail");
  assert.match(by["api-reachable"].result, /^TLS verification failed for https:\/\/127\.0\.0\.1:\d+: .*certificate/);
  assert.match(by["api-reachable"].fix!, /ANKRA_CLOUD_CA_BUNDLE/);
  assert.equal(by["token-valid"].status, "skip");
  assert.equal(cloud.simulator.sim.log.length, 0, "nothing reached the API");
});

Deno.test("without a token the configuration fails first; the Kubernetes checks still run", async () => {
  await resetCluster();
  await createNode(uniqueName("lonely"));
  const { report, by } = await doctor({});
  assert.equal(report.findings[0].id, "configuration");
  assert.equal(by["configuration"].status, "fail");
  assert.match(by["configuration"].result, /ANKRA_CLOUD_TOKEN is not set/);
  assert.equal(by["api-reachable"].status, "skip");
  assert.equal(by["kubernetes-api"].status, "pass");
  assert.equal(by["kubelet-external"].status, "pass");
  assert.equal(by["k3s-servicelb"].status, "pass");
  assert.equal(by["rbac"].status, "pass");
  assert.equal(by["nodes-matched"].status, "skip");
  await resetCluster();
});

Deno.test("an account at the load balancer limit warns: a new Service would be refused", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  await healthyWorld(cloud);
  const client = new AnkraCloudClient({
    apiUrl: cloud.simulator.url,
    token: TEST_TOKEN,
    caBundle: testControlPlane().caCert,
  });
  try {
    for (let i = 0; i < 5; i++) {
      await client.createLoadBalancer({ zone: "de-fsn1", name: `lb-${i}`, network_id: "net-1", public_ipv4: false });
    }
  } finally {
    client.close();
  }
  assert.equal(cloud.simulator.sim.loadBalancers.items.size, 5);
  const { by } = await doctor(cloudEnv(cloud));
  assert.equal(by["load-balancer-quota"].status, "warn");
  assert.match(by["load-balancer-quota"].result, /5 load balancers of at most 5/);
  await resetCluster();
});
