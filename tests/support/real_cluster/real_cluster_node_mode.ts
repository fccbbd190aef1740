/**
 * The real cluster's node-address mode steps (tests/real/real_cluster_test.ts): Services of class
 * `ankra.cloud/node-addresses`, published on the nodes' public IPv4 (each server's, on its node's `eth0`, routed to
 * it by the cloud namespace), answered by kube-proxy on the node the request reaches — with no Ankra load balancer.
 * Requests go from the host (10.98.0.1) and from a pod.
 *
 * @module
 */
import assert from "node:assert/strict";
import { kubeOk, serviceIngress } from "../http/kube_http.ts";
import type { RealCluster } from "./real_cluster.ts";
import { listPods, podReady, waitFor } from "../real_node/real_node_objects.ts";
import { loadBalancerOf, requestHostname, urlOf } from "./real_cluster_traffic.ts";
import { echoService } from "./real_cluster_workloads.ts";

const NS = "default";
const CLASS = "ankra.cloud/node-addresses";
/** agnhost netexec's UDP port (its default `--udp-port`): `hostname` answers the pod's name. */
const NETEXEC_UDP_PORT = 8081;

/** A node-address Service `name` in front of Deployment `app`'s pods on `port`, with `spec` over the rest. */
function nodeService(name: string, app: string, port: number, spec: Record<string, unknown> = {}) {
  return echoService(name, { app, port, spec: { loadBalancerClass: CLASS, ...spec } });
}

/** Waits until Service `name`'s ingress is exactly `expected` (any order). */
async function ingressOf(cluster: RealCluster, name: string, expected: string[], timeoutMs = 60_000) {
  const want = [...expected].sort().join();
  return await waitFor(`Service ${name} published on ${want}`, timeoutMs, async (saw) => {
    const ingress = await serviceIngress(cluster.plane, NS, name);
    saw(ingress.join());
    return [...ingress].sort().join() === want ? ingress : undefined;
  });
}

/**
 * A Cluster Service in node-address mode: published on both nodes' public IPv4, each address answered by the pods on
 * both nodes (kube-proxy forwards across nodes), and no load balancer in the simulator's account.
 */
export async function servesOnBothNodes(cluster: RealCluster, app: string): Promise<void> {
  const [a, b] = cluster.topology.nodes;
  await kubeOk(cluster.plane, "POST", `/api/v1/namespaces/${NS}/services`, { body: nodeService("onnodes", app, 80) });
  const ingress = await ingressOf(cluster, "onnodes", [a.publicIp4, b.publicIp4]);
  const pods = new Set((await listPods(cluster.plane, NS, `app=${app}`)).filter(podReady).map((p) => p.metadata.name));
  assert.equal(pods.size, 2, "two echo pods");
  for (const address of ingress) {
    const answered = new Set<string>();
    await waitFor(`${address} answered by both pods`, 30_000, async (saw) => {
      for (let i = 0; i < 10; i++) {
        const name = await requestHostname(address, 80, 2_000);
        if (name) answered.add(name);
      }
      saw([...answered].join());
      return answered.size === 2 || undefined;
    });
    assert.deepEqual([...answered].sort(), [...pods].sort(), `${address} answered by the pods on both nodes`);
  }
  const state = await cluster.simulatorState() as Parameters<typeof loadBalancerOf>[0];
  assert.equal(loadBalancerOf(state, NS, "onnodes"), undefined, "no Ankra load balancer for a node-address Service");
}

/**
 * `externalTrafficPolicy: Local` in node-address mode: published only on the node holding the pod, and the pod sees
 * the host's own address as the client (kube-proxy neither proxies nor masquerades Local traffic).
 */
export async function localKeepsClientAddress(cluster: RealCluster, app: string): Promise<void> {
  const [pod] = (await listPods(cluster.plane, NS, `app=${app}`)).filter(podReady);
  const node = cluster.topology.nodes.find((n) => n.name === pod.spec.nodeName)!;
  await kubeOk(cluster.plane, "POST", `/api/v1/namespaces/${NS}/services`, {
    body: nodeService("onnodes-local", app, 81, { externalTrafficPolicy: "Local" }),
  });
  const [address] = await ingressOf(cluster, "onnodes-local", [node.publicIp4]);
  const client = await waitFor("the client address the pod saw", 30_000, async () => {
    try {
      const response = await fetch(urlOf(address, 81, "/clientip"), { signal: AbortSignal.timeout(3_000) });
      return response.ok ? (await response.text()).trim() : undefined;
    } catch {
      return undefined;
    }
  });
  assert.equal(client.replace(/:\d+$/, ""), cluster.topology.hostIp, `the pod saw ${client}, not the host`);
}

/** A UDP Service in node-address mode answers a datagram from the host (`nc -u`). */
export async function udpAnswers(cluster: RealCluster, app: string): Promise<void> {
  const [a, b] = cluster.topology.nodes;
  await kubeOk(cluster.plane, "POST", `/api/v1/namespaces/${NS}/services`, {
    body: {
      metadata: { name: "onnodes-udp", namespace: NS },
      spec: {
        type: "LoadBalancer",
        loadBalancerClass: CLASS,
        selector: { app },
        ports: [{ port: 5353, protocol: "UDP", targetPort: NETEXEC_UDP_PORT }],
      },
    },
  });
  const [address] = await ingressOf(cluster, "onnodes-udp", [a.publicIp4, b.publicIp4]);
  const pods = new Set((await listPods(cluster.plane, NS, `app=${app}`)).map((p) => p.metadata.name));
  const answer = await waitFor(`a UDP answer from ${address}:5353`, 30_000, async () => {
    const out = await new Deno.Command("sh", {
      args: ["-c", `printf hostname | nc.openbsd -u -w 2 ${address} 5353`],
      stdout: "piped",
      stderr: "null",
    }).output();
    const text = new TextDecoder().decode(out.stdout).trim();
    return pods.has(text) ? text : undefined;
  });
  assert.ok(pods.has(answer));
}

/**
 * `loadBalancerSourceRanges` in node-address mode: kube-proxy admits the host's address and drops a pod's, which the
 * range does not hold.
 */
export async function sourceRangesEnforced(cluster: RealCluster, app: string): Promise<void> {
  const [a, b] = cluster.topology.nodes;
  await kubeOk(cluster.plane, "POST", `/api/v1/namespaces/${NS}/services`, {
    body: nodeService("onnodes-ranges", app, 82, { loadBalancerSourceRanges: [`${cluster.topology.hostIp}/32`] }),
  });
  const [address] = await ingressOf(cluster, "onnodes-ranges", [a.publicIp4, b.publicIp4]);
  assert.ok(await waitFor("the host admitted", 30_000, () => requestHostname(address, 82, 2_000)));
  const [pod] = (await listPods(cluster.plane, NS, `app=${app}`)).filter(podReady);
  const fromPod = await cluster.kubectl([
    "exec",
    "-n",
    NS,
    pod.metadata.name,
    "--",
    "curl",
    "-sS",
    "--max-time",
    "4",
    `http://${address}:82/hostname`,
  ]);
  assert.notEqual(fromPod.code, 0, `a pod outside the source range was answered: ${fromPod.text}`);
}

/**
 * A node excluded from load balancers (`node.kubernetes.io/exclude-from-external-load-balancers`) leaves the ingress
 * (after the drain period) while the other keeps answering; without the label it is published again.
 */
export async function excludedNodeLeaves(cluster: RealCluster): Promise<void> {
  const [a, b] = cluster.topology.nodes;
  const label = (value: string | null) =>
    kubeOk(cluster.plane, "PATCH", `/api/v1/nodes/${b.name}`, {
      patch: "merge",
      body: { metadata: { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": value } } },
    });
  await label("true");
  // The controller's default drain keeps the leaving node published for 30 s.
  await ingressOf(cluster, "onnodes", [a.publicIp4], 90_000);
  assert.ok(await requestHostname(a.publicIp4, 80, 3_000), "the remaining node answers");
  await label(null);
  await ingressOf(cluster, "onnodes", [a.publicIp4, b.publicIp4]);
}
