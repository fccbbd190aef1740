/**
 * The Service's `load-balancer.ankra.cloud/Ready` condition over fakes (fast tier): the account's quota and an outage
 * of the Ankra Cloud API each say so as `False` with their reason, and the Service serves once they pass.
 * `kubectl wait` on the condition, steady state writing nothing and an invalid annotation's `False`, against a real
 * API server, are in tests/integration/ready_condition_test.ts.
 */
import assert from "node:assert/strict";
import { eventually } from "../../../support/wait/eventually.ts";
import { startFakeServiceController } from "../../../support/fakes/fake_service_controller.ts";
import { testSeed } from "../../../support/cloud/simulator.ts";

Deno.test("Ready: the account's quota and an API outage say so; the Service serves once they pass", async () => {
  await using env = await startFakeServiceController({
    seed: testSeed({ settings: { load_balancer_quota: 1, load_balancer_create_delay_ms: 100 } }),
  });
  const { sim } = env.cloud.simulator;
  const ready = (name: string) => env.services.store.get(`default/${name}`)?.readyCondition;
  const reasonIs = (name: string, reason: string) => ready(name)?.reason === reason;
  env.addNode("a", "10.0.0.5");
  env.addService("quota-a");
  await eventually(() => reasonIs("quota-a", "Serving"), { what: "the first Service serving" });
  env.addService("quota-b");
  await eventually(() => reasonIs("quota-b", "QuotaExceeded"), { what: "QuotaExceeded" });
  assert.equal(ready("quota-b")!.status, "False");
  assert.match(ready("quota-b")!.message ?? "", /at most 1 load balancer/);

  // The first Service goes; the second waits out an outage of the API, then serves.
  sim.faults.add({ operation: "*", status: 503, reason: "outage", times: 0 });
  env.services.update("default/quota-a", (s) => (s.deletionTimestamp = new Date().toISOString()));
  await eventually(() => reasonIs("quota-b", "WaitingForAPI"), { what: "WaitingForAPI", timeoutMs: 20_000 });
  assert.equal(ready("quota-b")!.status, "False");
  sim.faults.clear();
  await eventually(() => reasonIs("quota-b", "Serving"), { what: "serving after the outage", timeoutMs: 30_000 });
  assert.ok(env.services.store.get("default/quota-b")!.ingress.length > 0);
  await eventually(() => env.services.store.get("default/quota-a") === undefined, {
    what: "the first Service gone once the API was back",
  });
});
