/**
 * The Service's `load-balancer.ankra.cloud/Ready` condition end to end (real kube-apiserver, simulator, the service
 * controller in-process): `kubectl wait --for=condition=…` returns once the load balancer serves; `False` names why
 * (an invalid annotation) with the event's words; one write per change and none at steady state; the condition goes
 * when the Service stops being a LoadBalancer. The account's quota and an API outage, over fakes, are in
 * tests/unit/controllers/service/ready_condition_test.ts.
 */
import assert from "node:assert/strict";
import type { V1Service } from "@kubernetes/client-node";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { eventually } from "../support/wait/eventually.ts";
import { kubectl } from "../support/chart/helm.ts";
import { kubeOk } from "../support/http/kube_http.ts";
import { moreReads } from "../support/cloud/cloud_passes.ts";
import { startServiceController } from "../support/controller/service_controller.ts";
import {
  createNodes,
  createService,
  deleteNodes,
  deleteService,
  getService,
  ingressIps,
  NS,
  serviceExists,
} from "../support/controller/service_fixtures.ts";
import { testSeed } from "../support/cloud/simulator.ts";

const READY = "load-balancer.ankra.cloud/Ready";

function readyOf(service: V1Service) {
  return (service.status?.conditions ?? []).find((c) => c.type === READY);
}

async function reasonIs(name: string, reason: string): Promise<boolean> {
  return readyOf(await getService(name))?.reason === reason;
}

function patchService(name: string, body: unknown): Promise<unknown> {
  return kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${name}`, { body });
}

Deno.test("Ready: kubectl wait returns once the load balancer serves; steady state writes nothing; an invalid annotation is False", async () => {
  await using env = await startServiceController({
    seed: testSeed({ settings: { load_balancer_create_delay_ms: 1_500 } }),
  });
  const nodes = await createNodes(2);
  const name = uniqueName("ready");
  await createService(name);
  try {
    // While the load balancer is created: False, Creating.
    await eventually(() => reasonIs(name, "Creating"), 10_000, "Creating");
    const waited = await kubectl(
      ["wait", `--for=condition=${READY}`, `service/${name}`, `--namespace=${NS}`, "--timeout=30s"],
    );
    assert.equal(waited.code, 0, waited.text);
    const served = await getService(name);
    const ready = readyOf(served)!;
    assert.equal(ready.status, "True");
    assert.equal(ready.reason, "Serving");
    assert.equal(ready.observedGeneration, served.metadata!.generation);
    for (const ip of ingressIps(served)) assert.match(ready.message!, new RegExp(ip.replaceAll(".", "\\.")));

    // Steady state: passes run (drift checks read the load balancer) and the Service is not written again.
    const version = served.metadata!.resourceVersion;
    await moreReads(env.cloud.simulator.sim, { operation: "get_load_balancer" }, { count: 2 });
    assert.equal((await getService(name)).metadata!.resourceVersion, version, "no write at steady state");

    // An invalid annotation: False with the event's reason and words; fixed → True again, for the new generation.
    await patchService(name, { metadata: { annotations: { "load-balancer.ankra.cloud/ipv4": "perhaps" } } });
    await eventually(() => reasonIs(name, "InvalidAnnotation"), 10_000, "InvalidAnnotation");
    const invalid = readyOf(await getService(name))!;
    assert.equal(invalid.status, "False");
    assert.match(invalid.message!, /load-balancer\.ankra\.cloud\/ipv4/);
    await patchService(name, { metadata: { annotations: { "load-balancer.ankra.cloud/ipv4": null } } });
    await eventually(() => reasonIs(name, "Serving"), 10_000, "Serving again");

    // No longer a LoadBalancer: the condition goes with the load balancer.
    await patchService(name, { spec: { type: "ClusterIP" } });
    await eventually(async () => readyOf(await getService(name)) === undefined, 15_000, "the condition removed");
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000, "the Service gone");
    await deleteNodes(nodes);
  }
});
