/**
 * `externalTrafficPolicy: Local` end to end: the real kube-apiserver, the Ankra Cloud simulator and the service
 * controller in-process. No endpointslice controller runs in the test control plane, so the test writes the
 * EndpointSlices as that controller would during a rolling update, step by step.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { kubeOk } from "../support/http/kube_http.ts";
import { eventually } from "../support/wait/eventually.ts";
import {
  createNodes,
  deleteNodes,
  deleteService,
  getService,
  ingressIps,
  NS,
} from "../support/controller/service_fixtures.ts";
import { startServiceController } from "../support/controller/service_controller.ts";
import type { AnkraCloudClient } from "../../lib/cloud/client.ts";

const plane = () => testControlPlane();

/** One pod's endpoint: where it runs and its conditions. */
interface Pod {
  name: string;
  node: string;
  ip: string;
  ready: boolean;
  terminating?: boolean;
}

/** Writes the Service's one EndpointSlice as the endpointslice controller would (created on first use). */
async function writeSlice(service: string, pods: Pod[], created: Set<string>): Promise<void> {
  const name = `${service}-x7k2p`;
  const body = {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name,
      namespace: NS,
      labels: {
        "kubernetes.io/service-name": service,
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
      },
    },
    addressType: "IPv4",
    ports: [{ name: "", port: 8080, protocol: "TCP" }],
    endpoints: pods.map((pod) => ({
      addresses: [pod.ip],
      nodeName: pod.node,
      targetRef: { kind: "Pod", namespace: NS, name: pod.name },
      conditions: { ready: pod.ready, serving: pod.ready || !!pod.terminating, terminating: !!pod.terminating },
    })),
  };
  const path = `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`;
  if (!created.has(name)) {
    await kubeOk(plane(), "POST", path, { body });
    created.add(name);
  } else {
    await kubeOk(plane(), "PATCH", `${path}/${name}`, { body: { endpoints: body.endpoints } });
  }
}

async function createLoadBalancerService(name: string, policy: "Local" | "Cluster"): Promise<void> {
  await kubeOk(plane(), "POST", `/api/v1/namespaces/${NS}/services`, {
    body: {
      metadata: { name },
      spec: { type: "LoadBalancer", externalTrafficPolicy: policy, ports: [{ port: 80, targetPort: 8080 }] },
    },
  });
}

async function internalIPv4(node: string): Promise<string> {
  const doc = await kubeOk<{ status: { addresses: { type: string; address: string }[] } }>(
    plane(),
    "GET",
    `/api/v1/nodes/${node}`,
  );
  return doc.status.addresses.find((a) => a.type === "InternalIP" && a.address.includes("."))!.address;
}

/** Records every member replacement the controller sends: when it was answered and the addresses it set. */
function recordReplacements(client: AnkraCloudClient) {
  const calls: { atMs: number; loadBalancer: string; addresses: string[] }[] = [];
  const original = client.replaceMembers.bind(client);
  client.replaceMembers = async (loadBalancerId, backendId, members, signal) => {
    const answer = await original(loadBalancerId, backendId, members, signal);
    calls.push({ atMs: performance.now(), loadBalancer: loadBalancerId, addresses: members.map((m) => m.address) });
    return answer;
  };
  return calls;
}

const sorted = (values: Iterable<string>) => [...values].sort();

Deno.test("a Local Service follows its ready endpoints through a 10-pod rolling update with a handful of calls", async () => {
  await using env = await startServiceController();
  const sim = env.cloud.simulator.sim;
  const replacements = recordReplacements(env.cloud.client);
  const nodes = await createNodes(4);
  const ip = Object.fromEntries(await Promise.all(nodes.map(async (n) => [n, await internalIPv4(n)])));
  const name = uniqueName("local");
  const cluster = uniqueName("cluster");
  const slices = new Set<string>();
  // Ten ready pods: five on the first node, five on the second.
  let pods: Pod[] = Array.from({ length: 10 }, (_, i) => ({
    name: `old-${i}`,
    node: nodes[i < 5 ? 0 : 1],
    ip: `10.244.0.${i + 10}`,
    ready: true,
  }));
  await writeSlice(name, pods, slices);
  await writeSlice(cluster, pods, slices);
  await createLoadBalancerService(name, "Local");
  await createLoadBalancerService(cluster, "Cluster");
  try {
    await eventually(async () => ingressIps(await getService(name)).length > 0, 15_000, "the Local Service served");
    await eventually(async () => ingressIps(await getService(cluster)).length > 0, 15_000, "the Cluster one served");
    const lbOf = (service: string) =>
      [...sim.loadBalancers.items.values()].find((lb) => lb.labels["ccm.ankra.cloud/service"] === `${NS}/${service}`)!;
    const members = (service: string) => sorted(lbOf(service).backends[0].members.map((m) => m.address));
    assert.deepEqual(members(name), sorted([ip[nodes[0]], ip[nodes[1]]]), "only the nodes with ready endpoints");
    assert.deepEqual(members(cluster), sorted(nodes.map((n) => ip[n])), "Cluster policy: every node, as before");
    const events = await kubeOk<{ items: { reason: string }[] }>(
      plane(),
      "GET",
      `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name=${name}`,
    );
    assert.ok(!events.items.some((e) => e.reason === "UnsupportedSetting"), "Local is no longer refused");

    // The rolling update (surge 1, unavailable 0): a new pod on the third or fourth node starts, becomes ready,
    // then an old pod terminates and goes. Pods take 150 ms to start in this simulated rollout.
    const lbId = lbOf(name).id;
    const before = replacements.filter((c) => c.loadBalancer === lbId).length;
    const replaceCountBefore = sim.count("replace_load_balancer_members");
    const firstReady = new Map<string, number>();
    const started = performance.now();
    for (let i = 0; i < 10; i++) {
      const node = nodes[2 + (i % 2)];
      const fresh: Pod = { name: `new-${i}`, node, ip: `10.244.1.${i + 10}`, ready: false };
      pods = [...pods, fresh];
      await writeSlice(name, pods, slices);
      // Not a wait for anything: the simulated rollout's pacing (the new pod's start-up time), so the controller sees
      // it not ready for a while, as a kubelet would report it. Waiting for a signal here would change the scenario.
      await new Promise((resolve) => setTimeout(resolve, 150));
      pods = pods.map((p) => p === fresh ? { ...p, ready: true } : p);
      await writeSlice(name, pods, slices);
      if (!firstReady.has(node)) firstReady.set(node, performance.now());
      const old = pods.find((p) => p.name === `old-${i}`)!;
      pods = pods.map((p) => p === old ? { ...p, ready: false, terminating: true } : p);
      await writeSlice(name, pods, slices);
      pods = pods.filter((p) => p.name !== old.name);
      await writeSlice(name, pods, slices);
    }
    const rolledAt = performance.now();
    const wanted = sorted([ip[nodes[2]], ip[nodes[3]]]);
    await eventually(() => JSON.stringify(members(name)) === JSON.stringify(wanted), 5_000, "members on the new nodes");
    const settledMs = performance.now() - rolledAt;
    const calls = replacements.filter((c) => c.loadBalancer === lbId).slice(before);
    assert.ok(calls.every((c) => c.addresses.length > 0), "never an empty backend while an endpoint is ready");
    const latencies = [...firstReady].map(([node, at]) => {
      const call = calls.find((c) => c.atMs >= at && c.addresses.includes(ip[node]));
      assert.ok(call, `a replacement adding ${node}`);
      return call.atMs - at;
    });
    assert.ok(latencies.every((ms) => ms < 2_000), `endpoint ready → member: ${latencies.map(Math.round)} ms`);
    assert.ok(calls.length <= 5, `${calls.length} member replacements for 40 EndpointSlice writes`);
    assert.equal(sim.count("replace_load_balancer_members") - replaceCountBefore, calls.length, "one per backend");
    assert.deepEqual(members(cluster), sorted(nodes.map((n) => ip[n])), "the Cluster Service did not move");
    console.log(
      `rolling update of 10 pods over ${((rolledAt - started) / 1000).toFixed(1)} s: 40 slice writes, ` +
        `${calls.length} member replacements (1 backend); endpoint ready → member ` +
        `${latencies.map((ms) => `${Math.round(ms)} ms`).join(", ")}; last move settled ${Math.round(settledMs)} ms ` +
        "after the last write",
    );

    // No endpoint ready at all: the members are every node, never an empty backend.
    pods = pods.map((p) => ({ ...p, ready: false }));
    await writeSlice(name, pods, slices);
    await eventually(
      () => JSON.stringify(members(name)) === JSON.stringify(sorted(nodes.map((n) => ip[n]))),
      5_000,
      "every node while no endpoint is ready",
    );
  } finally {
    for (const service of [name, cluster]) {
      await deleteService(service);
      await kubeOk(plane(), "DELETE", `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices/${service}-x7k2p`)
        .catch(() => {});
    }
    await eventually(() => sim.loadBalancers.items.size === 0, 15_000, "load balancers gone");
    await deleteNodes(nodes);
  }
});
