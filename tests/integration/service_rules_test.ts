/**
 * The framework's Service events end to end (real kube-apiserver, simulator, service controller in-process): every
 * EnsuredLoadBalancer follows its EnsuringLoadBalancer, as the API server counts them, and a failure carries the
 * framework's wording and source. The other Service rules (nodes of no server, ports without TCP, past 256 addresses,
 * k3s ServiceLB, a failure after the create) run over fakes in tests/unit/controllers/service/service_rules_test.ts.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { kubeOk } from "../support/http/kube_http.ts";
import { eventually } from "../support/wait/eventually.ts";
import { startServiceController } from "../support/controller/service_controller.ts";
import {
  createNodes,
  createService,
  deleteNodes,
  deleteService,
  eventsFor,
  getService,
  ingressIps,
  NS,
  serviceExists,
} from "../support/controller/service_fixtures.ts";
import { testSeed } from "../support/cloud/simulator.ts";

Deno.test("every EnsuredLoadBalancer follows its EnsuringLoadBalancer, and failures carry the framework's wording", async () => {
  await using _env = await startServiceController({
    seed: testSeed({ settings: { load_balancer_create_delay_ms: 1500 } }),
  });
  const nodes = await createNodes(1);
  const good = uniqueName("paired");
  const bad = uniqueName("noport");
  await createService(good);
  try {
    await eventually(async () => ingressIps(await getService(good)).length > 0, 15_000);
    // A change after the address: one more Ensuring/Ensured pair.
    await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${good}`, {
      body: { metadata: { annotations: { "load-balancer.ankra.cloud/health-check-interval": "7" } } },
    });
    await eventually(async () =>
      ((await eventsFor(good)).find((e) => e.reason === "EnsuredLoadBalancer")?.count ?? 0) >= 2
    );
    const events = await eventsFor(good);
    const count = (reason: string) => events.filter((e) => e.reason === reason).reduce((n, e) => n + e.count, 0);
    assert.equal(count("EnsuringLoadBalancer"), count("EnsuredLoadBalancer"), "paired");
    assert.equal(count("EnsuredLoadBalancer"), 2);
    // Without NodePorts the framework's message: "Error syncing load balancer: failed to ensure load balancer: …".
    await kubeOk(testControlPlane(), "POST", `/api/v1/namespaces/${NS}/services`, {
      body: {
        metadata: { name: bad },
        spec: { type: "LoadBalancer", allocateLoadBalancerNodePorts: false, ports: [{ name: "p", port: 80 }] },
      },
    });
    await eventually(async () => (await eventsFor(bad)).some((e) => e.reason === "SyncLoadBalancerFailed"));
    const failed = (await eventsFor(bad)).find((e) => e.reason === "SyncLoadBalancerFailed")!;
    assert.match(
      failed.message,
      /^Error syncing load balancer: failed to ensure load balancer: port 80 has no NodePort/,
    );
    assert.equal(failed.source.component, "service-controller");
  } finally {
    await deleteService(good);
    await deleteService(bad);
    await eventually(async () => !(await serviceExists(good)) && !(await serviceExists(bad)), 15_000);
    await deleteNodes(nodes);
  }
});
