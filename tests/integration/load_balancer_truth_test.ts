/**
 * Truth before cache, end to end (the real kube-apiserver, the simulator, the service controller in-process): the
 * controller caches where a Service's load balancer is, never whether it exists when that matters. A load balancer
 * deleted behind its back (through the simulator's API, as the console or support would) is made again and its new
 * address published — on the next change of the Service, or at the latest after one drift-check period. A request the
 * API refuses as invalid is a Warning and waits for the user instead of being retried with backoff.
 *
 * The drift check with no change at all, and the 404 a member update meets, are tested over fakes (fast tier,
 * tests/unit/controllers/service/service_controller_test.ts).
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { eventually } from "../support/wait/eventually.ts";
import { kubeOk } from "../support/http/kube_http.ts";
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
import { type RunningServiceController, startServiceController } from "../support/controller/service_controller.ts";
import { isNotFound } from "../../lib/cloud/errors.ts";
import { MetricsRegistry } from "../../lib/runtime/metrics.ts";

/** The load balancers in the simulator labelled for the Service. */
function loadBalancersOf(env: RunningServiceController, name: string) {
  return [...env.cloud.simulator.sim.loadBalancers.items.values()].filter((l) =>
    l.labels["ccm.ankra.cloud/service"] === `${NS}/${name}`
  );
}

/** The Service's load balancer in the simulator, once it serves the Service's status. */
async function servedLoadBalancer(env: RunningServiceController, name: string) {
  const sim = env.cloud.simulator.sim;
  let id = "";
  await eventually(
    async () => {
      const lb = loadBalancersOf(env, name)[0];
      if (!lb || lb.state !== "running") return false;
      const ips = ingressIps(await getService(name));
      id = lb.id;
      return ips.length > 0 && ips.every((ip) => lb.public_ipv6_addresses.includes(ip) || ip === lb.public_ipv4);
    },
    15_000,
    `the load balancer of ${name} serving its status`,
  );
  return sim.loadBalancers.items.get(id)!;
}

/** Deletes the load balancer through the API, as someone outside the cluster would, and waits until the API says 404. */
async function deleteBehindTheControllersBack(env: RunningServiceController, id: string): Promise<void> {
  await env.cloud.client.deleteLoadBalancer(id);
  await eventually(
    async () => {
      try {
        await env.cloud.client.getLoadBalancer(id);
        return false;
      } catch (cause) {
        if (isNotFound(cause)) return true;
        throw cause;
      }
    },
    5_000,
    "the load balancer gone",
  );
}

const BALANCE = "load-balancer.ankra.cloud/balance";

/** Sets the Service's balance annotation (a change of the Service the user makes). */
async function setBalance(name: string, balance: string): Promise<void> {
  await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${name}`, {
    body: { metadata: { annotations: { [BALANCE]: balance } } },
  });
}

Deno.test("a load balancer deleted in the account is made again within 10 s of a change to its Service", async () => {
  // A drift period far beyond the test: only the change can make the controller look.
  await using env = await startServiceController({ driftCheckMs: 600_000 });
  const nodes = await createNodes(1);
  const name = uniqueName("lost");
  await createService(name);
  try {
    const old = await servedLoadBalancer(env, name);
    const oldIps = ingressIps(await getService(name));
    await deleteBehindTheControllersBack(env, old.id);
    const changed = performance.now();
    // A change that needs no call on the load balancer the cache remembers: only a read finds it gone.
    await kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${name}`, {
      body: { metadata: { annotations: { "load-balancer.ankra.cloud/ipv4": "true" } } },
    });
    const fresh = await servedLoadBalancer(env, name);
    const seconds = (performance.now() - changed) / 1000;
    assert.notEqual(fresh.id, old.id, "a new load balancer");
    assert.ok(seconds < 10, `recreated and published ${seconds.toFixed(1)} s after the change`);
    const ips = ingressIps(await getService(name));
    assert.notDeepEqual(ips, oldIps, "the dead address is no longer published");
    assert.ok(fresh.public_ipv4 && ips.includes(fresh.public_ipv4), "the change is honoured: the new one has IPv4");
    assert.equal(fresh.backends[0].members.length, 1);
  } finally {
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000, "service gone");
    await deleteNodes(nodes);
  }
});

Deno.test("a request the API refuses as invalid is a Warning naming the API's reason and waits for the user", async () => {
  const metrics = new MetricsRegistry();
  await using env = await startServiceController({ metrics });
  const sim = env.cloud.simulator.sim;
  const nodes = await createNodes(1);
  const name = uniqueName("refused");
  await createService(name);
  try {
    const lb = await servedLoadBalancer(env, name);
    sim.faults.add({
      operation: "update_load_balancer_backend",
      status: 422,
      reason: "invalid_backend",
      detail: "balance leastconn is not offered in zone de-fsn1",
      times: 0,
    });
    const updatesBefore = sim.count("update_load_balancer_backend");
    await setBalance(name, "leastconn");
    await eventually(
      async () => (await eventsFor(name)).some((e) => e.type === "Warning" && e.reason === "SyncLoadBalancerFailed"),
      10_000,
      "a Warning event",
    );
    const warning = (await eventsFor(name)).find((e) => e.reason === "SyncLoadBalancerFailed")!;
    assert.match(warning.message, /HTTP 422, invalid_backend\) - balance leastconn is not offered in zone de-fsn1/);
    assert.equal(
      metrics.counter("workqueue_retries_total", "").get({ name: "service" }),
      0,
      "not retried with backoff: sending an invalid request again changes nothing",
    );
    assert.equal(sim.count("update_load_balancer_backend") - updatesBefore, 1, "sent once");
    // The user changes the Service: the change is looked at at once.
    sim.faults.clear();
    await setBalance(name, "source");
    await eventually(() => lb.backends[0].balance === "source", 10_000, "the next change served");
    assert.equal(metrics.counter("workqueue_retries_total", "").get({ name: "service" }), 0);
  } finally {
    sim.faults.clear();
    await deleteService(name);
    await eventually(async () => !(await serviceExists(name)), 15_000, "service gone");
    await deleteNodes(nodes);
  }
});
