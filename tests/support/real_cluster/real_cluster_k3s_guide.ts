/**
 * The real cluster's step that does what docs/k3s.md's "a single server, nothing to pay" says, as far as this cluster
 * allows (tests/real/real_cluster_test.ts): nothing is installed again — the controller keeps running as started, with
 * the default mode `load-balancer`, so the Traefik-shaped Service says `load-balancer.ankra.cloud/mode: node-addresses`
 * itself, which the guide's `loadBalancer.defaultMode=node-addresses` decides for a class-less Service (the same
 * function: `servingModeOf`). In one step:
 *
 * - a Deployment of the echo image and a Service shaped as k3s's Traefik (ports 80 `web` and 443 `websecure`,
 *   `PreferDualStack`) in node-address mode, published on both nodes' public IPv4 and answered on both ports from the
 *   host. This cluster is IPv4 only (service range, pod ranges, no IPv6 route to the nodes' public IPv6): the Service
 *   gets no IPv6 family, so no IPv6 address is published or tried — said in the output;
 * - `ankra-cloud-ccm doctor` run as the guide runs it (`main.ts doctor` with the release launcher's permissions, the
 *   admin kubeconfig, `--default-load-balancer-mode=node-addresses`, the controller's `--cluster-name`) with a
 *   read-only token minted through the simulator's control API: exit 0, the load-balancer checks and the operate check
 *   skipped;
 * - the first node's server's public IPv4 changed through the simulator's control API (the address given to the node's
 *   `eth0` and routed to it by the cloud namespace first, as Ankra Cloud would for a new IPv4 add-on): the Service's
 *   ingress follows within the server list period (60 s here) with a Normal `NodeAddressesChanged`, and a request to the
 *   new address answers; then the address is changed back for the steps after this one;
 * - over the whole step, the simulator's request log holds no write (no POST, PUT, PATCH or DELETE outside its own
 *   `/_simulator` control API): neither the controller nor the doctor wrote anything to Ankra Cloud.
 *
 * The Service and the Deployment are deleted at the end, so later node-address Services may take ports 80 and 443.
 *
 * @module
 */
import assert from "node:assert/strict";
import { runMain } from "../doctor/doctor_command.ts";
import { eventsFor, kubeOk, kubeRequest, serviceIngress } from "../http/kube_http.ts";
import type { RealCluster } from "./real_cluster.ts";
import { listPods, podReady, waitFor } from "../real_node/real_node_objects.ts";
import { requestHostname } from "./real_cluster_traffic.ts";
import { echoDeployment, echoService } from "./real_cluster_workloads.ts";

const NS = "default";
const NAME = "traefik";
/** The controller's `--cluster-name` in the real cluster (tests/support/real_cluster/real_cluster_commands.ts). */
const CLUSTER_NAME = "real-cluster";
/** The controller's server list period here (its default). */
const SERVER_LIST_PERIOD_MS = 60_000;

/** Runs `ip -n <netns> args…` (as root); throws with its output when it fails. */
async function ip(netns: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("ip", { args: ["-n", netns, ...args], stdout: "piped", stderr: "piped" }).output();
  if (!out.success) {
    throw new Error(`ip -n ${netns} ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
}

/** The simulator's requests after `seq` that are writes to the Ankra Cloud API (its control API aside). */
async function writesSince(cluster: RealCluster, seq: number): Promise<string[]> {
  return (await cluster.simulatorRequests())
    .filter((r) => r.seq > seq && r.method !== "GET" && r.method !== "HEAD" && !r.path.startsWith("/_simulator"))
    .map((r) => `${r.method} ${r.path} (${r.operation}, ${r.status})`);
}

/** Waits until the Service's ingress is `expected` (any order); the milliseconds it took from `since`. */
async function ingressBecomes(cluster: RealCluster, expected: string[], since: number, timeoutMs: number) {
  const want = [...expected].sort().join();
  await waitFor(`Service ${NAME} published on ${want}`, timeoutMs, async (saw) => {
    const ingress = await serviceIngress(cluster.plane, NS, NAME);
    saw(ingress.join());
    return [...ingress].sort().join() === want || undefined;
  });
  return performance.now() - since;
}

/** Both ports of the Service answer from the host at `address`, each from the echo pod. */
async function answersOnBothPorts(address: string, pods: ReadonlySet<string>): Promise<void> {
  for (const port of [80, 443]) {
    const name = await waitFor(`${address}:${port} answered`, 30_000, () => requestHostname(address, port, 2_000));
    assert.ok(pods.has(name), `${address}:${port} answered "${name}", not the echo pod`);
  }
}

/** The step (see the module documentation). */
export async function followsTheK3sGuide(cluster: RealCluster): Promise<void> {
  const { plane, topology } = cluster;
  const [a, b] = topology.nodes;
  const before = (await cluster.simulatorRequests()).reduce((max, r) => Math.max(max, r.seq), 0);
  const newIpv4 = "198.18.0.100";
  let moved = false;
  try {
    await kubeOk(plane, "POST", `/apis/apps/v1/namespaces/${NS}/deployments`, { body: echoDeployment(NAME, 1) });
    const traefik = echoService(NAME, {
      annotations: { "load-balancer.ankra.cloud/mode": "node-addresses" },
      spec: {
        ipFamilyPolicy: "PreferDualStack",
        ports: [{ name: "web", port: 80, targetPort: 8080 }, { name: "websecure", port: 443, targetPort: 8080 }],
      },
    });
    await kubeOk(plane, "POST", `/api/v1/namespaces/${NS}/services`, { body: traefik });
    const pods = await waitFor("the Traefik-shaped pod Ready", 60_000, async () => {
      const ready = (await listPods(plane, NS, `app=${NAME}`)).filter(podReady);
      return ready.length === 1 ? new Set(ready.map((p) => p.metadata.name)) : undefined;
    });
    await ingressBecomes(cluster, [a.publicIp4, b.publicIp4], performance.now(), 60_000);
    const families = (await kubeOk<{ spec: { ipFamilies: string[] } }>(
      plane,
      "GET",
      `/api/v1/namespaces/${NS}/services/${NAME}`,
    )).spec.ipFamilies;
    assert.deepEqual(families, ["IPv4"], "this cluster is IPv4 only");
    console.log(
      "IPv6 not tried: this cluster is IPv4 only (service range 10.96.0.0/16, IPv4 pod ranges, no route to the " +
        "nodes' public IPv6), so the Service has no IPv6 family and node-address mode publishes no IPv6 address",
    );
    for (const address of [a.publicIp4, b.publicIp4]) await answersOnBothPorts(address, pods);

    // The doctor as the guide runs it, with a read-only token minted by the simulator.
    const token = `act_${crypto.randomUUID().replaceAll("-", "")}`;
    await cluster.simulatorControl("POST", "/tokens", { token, scope: "read" });
    const doctor = await runMain([
      "doctor",
      `--kubeconfig=${plane.kubeconfigPath}`,
      `--cluster-name=${CLUSTER_NAME}`,
      "--default-load-balancer-mode=node-addresses",
    ], {
      ANKRA_CLOUD_TOKEN: token,
      ANKRA_CLOUD_API_URL: cluster.simulatorUrl,
      ANKRA_CLOUD_CA_BUNDLE: plane.caFile,
    });
    console.log(`doctor (read-only token, node-address mode):\n${doctor.stdout}${doctor.stderr}`);
    assert.equal(doctor.code, 0, `the doctor exited ${doctor.code}`);
    assert.match(doctor.stdout, /\n− API token may make changes \(operate\): skipped: the token need not make changes/);
    assert.match(
      doctor.stdout,
      /\n− One private network for load balancers: skipped: no Ankra load balancer is needed/,
    );
    assert.match(doctor.stdout, new RegExp(`\\n✓ Node-address Services: .*default/${NAME}`));
    assert.ok(!doctor.stdout.includes(token) && !doctor.stderr.includes(token), "the token is printed nowhere");

    // The first node's server gets another public IPv4 (the add-on released and another bought).
    await ip(a.netns, "addr", "add", `${newIpv4}/32`, "dev", "eth0");
    await ip(topology.cloudNetns, "route", "add", `${newIpv4}/32`, "via", a.ip);
    moved = true;
    const servers = ((await cluster.simulatorState()) as { servers: { id: string; hostname: string }[] }).servers;
    const serverId = servers.find((s) => s.hostname === a.name)!.id;
    const changedAt = performance.now();
    await cluster.simulatorControl("PATCH", `/servers/${serverId}`, { public_ipv4: newIpv4 });
    const followedMs = await ingressBecomes(cluster, [newIpv4, b.publicIp4], changedAt, SERVER_LIST_PERIOD_MS + 30_000);
    console.log(`the ingress followed the server's new IPv4 after ${(followedMs / 1000).toFixed(1)} s`);
    const event = await waitFor(
      "the NodeAddressesChanged event",
      30_000,
      async () => (await eventsFor(plane, NAME, NS)).find((e) => e.reason === "NodeAddressesChanged"),
    );
    assert.equal(event.type, "Normal");
    assert.match(
      event.message,
      new RegExp(`IPv4 ${a.publicIp4.replaceAll(".", "\\.")} → 198\\.18\\.0\\.100 \\(node ${a.name}\\)`),
    );
    await answersOnBothPorts(newIpv4, pods);

    // Back to the planned address, for the steps after this one.
    await cluster.simulatorControl("PATCH", `/servers/${serverId}`, { public_ipv4: a.publicIp4 });
    await ingressBecomes(cluster, [a.publicIp4, b.publicIp4], performance.now(), SERVER_LIST_PERIOD_MS + 30_000);
    assert.deepEqual(await writesSince(cluster, before), [], "no write to the Ankra Cloud API during the step");
  } finally {
    if (moved) {
      await ip(topology.cloudNetns, "route", "del", `${newIpv4}/32`, "via", a.ip).catch(() => {});
      await ip(a.netns, "addr", "del", `${newIpv4}/32`, "dev", "eth0").catch(() => {});
    }
    await kubeRequest(plane, "DELETE", `/api/v1/namespaces/${NS}/services/${NAME}`);
    await kubeRequest(plane, "DELETE", `/apis/apps/v1/namespaces/${NS}/deployments/${NAME}`);
    await waitFor(
      `Service ${NAME} gone (its finalizer removed)`,
      60_000,
      async () =>
        (await kubeRequest(plane, "GET", `/api/v1/namespaces/${NS}/services/${NAME}`)).status === 404 || undefined,
    );
  }
}
