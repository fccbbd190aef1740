/**
 * `ankra-cloud-ccm doctor`, its Ankra Cloud side over the in-process simulator (fast tier): the account's answers as
 * the real client reads them become the token, account and quota findings. No Kubernetes API is reachable here, so
 * the cluster's checks report that and are not looked at. The healthy setup, a refused token, a missing token and an
 * unknown CA, beside a real API server, are in tests/integration/doctor_cloud_test.ts.
 */
import assert from "node:assert/strict";
import { resolveCommand } from "../../../lib/config/command.ts";
import { diagnose } from "../../../lib/doctor/doctor.ts";
import type { Finding } from "../../../lib/doctor/report.ts";
import { READ_ONLY_TOKEN, startTestCloud, TEST_TOKEN, type TestCloud } from "../../support/cloud/simulator.ts";

/** Runs the doctor in-process against `cloud` with `token`, without a reachable cluster; its findings by id. */
async function doctorOf(cloud: TestCloud, token = TEST_TOKEN): Promise<Record<string, Finding>> {
  const env = { ANKRA_CLOUD_TOKEN: token, ANKRA_CLOUD_TOKEN_FILE: "", ANKRA_CLOUD_API_URL: cloud.simulator.url };
  const args = ["doctor", "--kubeconfig=/nonexistent/kubeconfig"];
  const command = resolveCommand(args, { env });
  assert.equal(command.kind, "doctor");
  const { report } = await diagnose(command as Extract<typeof command, { kind: "doctor" }>, { args, env });
  return Object.fromEntries(report.findings.map((f) => [f.id, f]));
}

Deno.test("a read-only token fails the operate check; the account check is skipped; nothing is created", async () => {
  await using cloud = await startTestCloud();
  const by = await doctorOf(cloud, READ_ONLY_TOKEN);
  assert.equal(by["token-valid"].status, "pass");
  assert.equal(by["token-operate"].status, "fail");
  assert.match(by["token-operate"].result, /HTTP 403 on create_load_balancer/);
  assert.match(by["token-operate"].fix!, /operate permission/);
  assert.equal(by["account-can-create"].status, "skip");
  assert.equal(cloud.simulator.sim.loadBalancers.items.size, 0);
});

Deno.test("billing gates: an unverified email and a missing payment method fail the account check", async () => {
  await using cloud = await startTestCloud();
  const settings = cloud.simulator.sim.world.settings;
  settings.email_verified = false;
  let by = await doctorOf(cloud);
  assert.equal(by["token-operate"].status, "pass");
  assert.equal(by["account-can-create"].status, "fail");
  assert.match(by["account-can-create"].result, /email_unverified/);
  settings.email_verified = true;
  settings.payment = "payment_method_required";
  by = await doctorOf(cloud);
  assert.equal(by["account-can-create"].status, "fail");
  assert.match(by["account-can-create"].result, /HTTP 402 payment_method_required/);
  assert.match(by["account-can-create"].fix!, /payment method/);
  assert.equal(cloud.simulator.sim.loadBalancers.items.size, 0);
});

Deno.test("an account at the load balancer limit warns: a new Service would be refused", async () => {
  await using cloud = await startTestCloud();
  for (let i = 0; i < 5; i++) {
    await cloud.client.createLoadBalancer({
      zone: "de-fsn1",
      name: `lb-${i}`,
      network_id: "net-1",
      public_ipv4: false,
    });
  }
  assert.equal(cloud.simulator.sim.loadBalancers.items.size, 5);
  const by = await doctorOf(cloud);
  assert.equal(by["load-balancer-quota"].status, "warn");
  assert.match(by["load-balancer-quota"].result, /5 load balancers of at most 5/);
});
