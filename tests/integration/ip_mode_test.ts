/**
 * The ingress `ipMode` end to end (real kube-apiserver, simulator, the service controller in-process): a plain
 * TCP Service is published with `VIP`, an http one with `Proxy` (in-cluster clients then go through the load balancer,
 * so its http mode and redirect apply to them too); the `ip-mode` annotation changes it on the running Service.
 */
import assert from "node:assert/strict";
import type { V1Service } from "@kubernetes/client-node";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { eventually } from "../support/wait/eventually.ts";
import { kubeOk } from "../support/http/kube_http.ts";
import { startServiceController } from "../support/controller/service_controller.ts";
import {
  createNodes,
  createService,
  deleteNodes,
  deleteService,
  getService,
  NS,
  serviceExists,
} from "../support/controller/service_fixtures.ts";

function ipModes(service: V1Service): (string | undefined)[] {
  return (service.status?.loadBalancer?.ingress ?? []).map((i) => i.ipMode);
}

Deno.test("ipMode: VIP for a TCP Service, Proxy for an http one; the annotation changes it in place", async () => {
  await using _env = await startServiceController();
  const nodes = await createNodes(1);
  const plain = uniqueName("vip");
  const http = uniqueName("proxy");
  await createService(plain);
  await createService(http, { annotations: { "load-balancer.ankra.cloud/protocol": "http" } });
  try {
    await eventually(async () => ipModes(await getService(plain)).length > 0, 15_000, "the TCP Service's address");
    await eventually(async () => ipModes(await getService(http)).length > 0, 15_000, "the http Service's address");
    assert.ok(ipModes(await getService(plain)).every((mode) => mode === "VIP"), "VIP");
    assert.ok(ipModes(await getService(http)).every((mode) => mode === "Proxy"), "Proxy");
    const addresses = (await getService(http)).status!.loadBalancer!.ingress!.map((i) => i.ip);

    await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${http}`, {
      body: { metadata: { annotations: { "load-balancer.ankra.cloud/ip-mode": "vip" } } },
    });
    await eventually(
      async () => ipModes(await getService(http)).every((mode) => mode === "VIP"),
      10_000,
      "VIP by annotation",
    );
    assert.deepEqual((await getService(http)).status!.loadBalancer!.ingress!.map((i) => i.ip), addresses);
  } finally {
    for (const name of [plain, http]) await deleteService(name);
    for (const name of [plain, http]) {
      await eventually(async () => !(await serviceExists(name)), 15_000, "the Service gone");
    }
    await deleteNodes(nodes);
  }
});
