/**
 * One load balancer across namespaces (`load-balancer.ankra.cloud/share-namespaces`), against the real kube-apiserver
 * and the simulator (the service controller in-process): a Service of another namespace is refused while the group's
 * namespace has not allowed it — a Warning naming that side, the Ready condition `ShareNotAllowed`, no second load
 * balancer; with consent on both sides the group's existing load balancer is relabelled for the group across
 * namespaces (whichever Service passes first) and both Services' statuses carry its address; a third namespace
 * allowed by the group but not allowing it back is refused naming its own side, nothing of it applied; deleting one
 * keeps the load balancer for the other, deleting the last deletes it. The same rules
 * over fakes: tests/unit/controllers/service/shared_across_namespaces_test.ts.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { eventually } from "../support/wait/eventually.ts";
import { eventsFor, kubeOk, kubeRequest, serviceIngress } from "../support/http/kube_http.ts";
import { startServiceController } from "../support/controller/service_controller.ts";
import { createNodes, deleteNodes } from "../support/controller/service_fixtures.ts";

const SHARE = "load-balancer.ankra.cloud/share";
const ALLOW = "load-balancer.ankra.cloud/share-namespaces";
const READY = "load-balancer.ankra.cloud/Ready";

async function createService(namespace: string, name: string, port: number, annotations: Record<string, string>) {
  await kubeOk(testControlPlane(), "POST", `/api/v1/namespaces/${namespace}/services`, {
    body: {
      metadata: { name, annotations },
      spec: { type: "LoadBalancer", selector: { app: name }, ports: [{ name: "p", port }] },
    },
  });
}

async function annotate(namespace: string, name: string, annotations: Record<string, string>) {
  await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${namespace}/services/${name}`, {
    patch: "merge",
    body: { metadata: { annotations } },
  });
}

async function readyReason(namespace: string, name: string): Promise<string | undefined> {
  const service = await kubeOk<{ status?: { conditions?: { type: string; reason: string }[] } }>(
    testControlPlane(),
    "GET",
    `/api/v1/namespaces/${namespace}/services/${name}`,
  );
  return service.status?.conditions?.find((c) => c.type === READY)?.reason;
}

async function serviceExists(namespace: string, name: string): Promise<boolean> {
  const answer = await kubeRequest(testControlPlane(), "GET", `/api/v1/namespaces/${namespace}/services/${name}`);
  return answer.status === 200;
}

Deno.test("a share across namespaces: refused without consent on either side, formed with it; the last Service deletes it", async () => {
  await using env = await startServiceController();
  const sim = env.cloud.simulator.sim;
  const plane = testControlPlane();
  const nodes = await createNodes(1);
  const [a, b, c] = [uniqueName("team-a"), uniqueName("team-b"), uniqueName("team-c")];
  for (const namespace of [a, b, c]) {
    await kubeOk(plane, "POST", "/api/v1/namespaces", { body: { metadata: { name: namespace } } });
  }
  const key = "front";
  const warningsOf = async (namespace: string, name: string) =>
    (await eventsFor(plane, name, namespace)).filter((e) => e.type === "Warning");
  try {
    // team-a shares within itself: today's load balancer.
    await createService(a, "api", 8080, { [SHARE]: key });
    const address = await eventually(async () => (await serviceIngress(plane, a, "api"))[0], {
      timeoutMs: 20_000,
      what: "team-a's address",
    });
    const [lb] = [...sim.loadBalancers.items.values()];
    assert.equal(lb.name, `k8s-test-${a}-shared-${key}`);

    // team-b asks for team-a, which has not allowed it: refused, naming team-a's side.
    await createService(b, "web", 8443, { [SHARE]: key, [ALLOW]: a });
    const otherSide = await eventually(async () => (await warningsOf(b, "web"))[0], { what: "the refusal" });
    assert.equal(otherSide.reason, "SyncLoadBalancerFailed");
    assert.match(
      otherSide.message!,
      new RegExp(
        `namespace ${a}, named in ${
          ALLOW.replaceAll(".", "\\.")
        }, shares ${key} within itself \\(${a}/api\\) and does not allow namespace ${b}`,
      ),
    );
    assert.equal(await readyReason(b, "web"), "ShareNotAllowed");
    assert.deepEqual(await serviceIngress(plane, b, "web"), []);

    // team-a allows team-b (and team-c): the same load balancer becomes the group's across namespaces, whichever
    // of the two passes first; one load balancer, both statuses carry its address.
    await annotate(a, "api", { [ALLOW]: `${b},${c}` });
    await eventually(async () => (await serviceIngress(plane, b, "web"))[0] === address, {
      timeoutMs: 20_000,
      what: "team-b on the group's address",
    });
    assert.equal((await serviceIngress(plane, a, "api"))[0], address, "team-a's address kept");
    assert.equal(lb.name, `k8s-test-shared-${key}`, "relabelled and renamed, not made again");
    assert.equal(lb.labels["ccm.ankra.cloud/shared"], `*.${key}`);
    assert.equal(sim.loadBalancers.items.size, 1, "no second load balancer");
    assert.equal(sim.count("create_load_balancer"), 1);
    assert.equal(sim.count("delete_load_balancer"), 0);
    await eventually(() => lb.frontends.length === 2, { what: "both Services' listeners" });
    assert.deepEqual(lb.frontends.map((f) => f.port).sort(), [8080, 8443]);
    await eventually(() => lb.labels["ccm.ankra.cloud/shared-namespaces"] === `${a},${b}`, {
      what: "the namespaces on it, labelled",
    });
    await eventually(async () => (await readyReason(b, "web")) === "Serving", { what: "team-b Ready" });

    // team-c is allowed by team-a but does not allow team-a itself: refused, naming its own side; nothing made.
    await createService(c, "metrics", 9100, { [SHARE]: key, [ALLOW]: b });
    const thisSide = await eventually(async () => (await warningsOf(c, "metrics"))[0], { what: "team-c refused" });
    assert.match(thisSide.message!, new RegExp(`this Service does not allow namespace ${a}, where Service ${a}/api`));
    assert.equal(await readyReason(c, "metrics"), "ShareNotAllowed");
    assert.deepEqual(await serviceIngress(plane, c, "metrics"), []);
    assert.equal(sim.loadBalancers.items.size, 1);
    assert.ok(!lb.frontends.some((f) => f.port === 9100), "nothing of it applied");
    await kubeRequest(plane, "DELETE", `/api/v1/namespaces/${c}/services/metrics`);
    await eventually(async () => !(await serviceExists(c, "metrics")), { what: "team-c's gone" });

    // One goes: the load balancer stays for the other.
    await kubeRequest(plane, "DELETE", `/api/v1/namespaces/${b}/services/web`);
    await eventually(async () => !(await serviceExists(b, "web")), { timeoutMs: 15_000, what: "team-b's gone" });
    assert.equal(sim.loadBalancers.items.size, 1);
    assert.equal(sim.count("delete_load_balancer"), 0);
    assert.deepEqual(lb.frontends.map((f) => f.port), [8080]);
    assert.equal((await serviceIngress(plane, a, "api"))[0], address);

    // The last goes: the load balancer goes.
    await kubeRequest(plane, "DELETE", `/api/v1/namespaces/${a}/services/api`);
    await eventually(async () => !(await serviceExists(a, "api")), { timeoutMs: 15_000, what: "team-a's gone" });
    await eventually(() => sim.count("delete_load_balancer") === 1, { what: "the load balancer deleted" });
  } finally {
    for (const namespace of [a, b, c]) await kubeRequest(plane, "DELETE", `/api/v1/namespaces/${namespace}`);
    await deleteNodes(nodes);
  }
});
