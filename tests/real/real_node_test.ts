/**
 * The chart's pod run by a real kubelet on a real single-node cluster with no CNI
 * (tests/support/real_node/real_node.ts): the image and the chart pulled from a local OCI registry, the pod started by
 * containerd + runc with the chart's security settings, its HTTPS probes run by the kubelet, in-cluster configuration
 * through kube-proxy, the controller initialising its own NotReady Node and serving a LoadBalancer Service from the
 * simulator; a killed container restarted by the kubelet; a rolling upgrade; the pod kept on its node when the node
 * lifecycle controller taints it `not-ready:NoExecute`; the plain manifest applied with kubectl.
 *
 * One cluster serves every step (each builds on the one before, as on a user's cluster). Needs root, overlayfs,
 * runc, iptables, skopeo, Go and gcc (`.ci/run` installs the Debian packages); without them the test is ignored and
 * says why. A failing step prints the kubelet's, containerd's and the other components' logs and the controller's.
 */
import assert from "node:assert/strict";
import denoJson from "../../deno.json" with { type: "json" };
import { VERSION } from "../../lib/version.ts";
import { helmHomes, timed } from "../support/chart/helm.ts";
import { eventsFor, kubeOk, kubeRequest, serviceIngress } from "../support/http/kube_http.ts";
import { startRealNode } from "../support/real_node/real_node.ts";
import { readHostFacts, realNodeBlockers } from "../support/real_node/real_node_host.ts";
import {
  containerId,
  listPods,
  nodeTaints,
  type PodDoc,
  podReady,
  startHeartbeatNode,
  waitFor,
} from "../support/real_node/real_node_objects.ts";
import { serverSeed, startTestCloud, TEST_TOKEN, testSeed } from "../support/cloud/simulator.ts";
import { testImageLayout } from "../support/image/test_image.ts";
import { stepsInOrder } from "../support/real_node/steps_in_order.ts";
import {
  CHART_HOST_PORT,
  CHART_NAMESPACE,
  CHART_SELECTOR,
  killedAndRestarted,
  ok,
  readyPod,
  renewingHolder,
  requireFreeHostPort,
  rolledOutPod,
  run,
} from "../support/real_node/real_node_steps.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const NODE = "ccm-real-node";
const NODE_IP = "10.99.0.2";
const PEER = "ccm-ready-peer";
const PEER_IP = "10.99.0.3";
const NS = CHART_NAMESPACE;
const SELECTOR = CHART_SELECTOR;
/** The image registry the chart and the manifest name by default: containerd pulls it from the local registry. */
const UPSTREAM_REGISTRY = "share.ankra.cloud";
const ROLLOUT_TAG = `${VERSION}-rollout`;

const blockers = realNodeBlockers(readHostFacts());
if (blockers.length > 0) console.log(`real-node test ignored: ${blockers.join("; ")}`);

Deno.test({
  name: "the chart's pod under a real kubelet on a node without CNI initialises its node and serves load balancers",
  ignore: blockers.length > 0,
}, async (t) => {
  const layout = await timed("image for the test", () => testImageLayout());
  await using cloud = await startTestCloud(testSeed({
    networks: [{ id: "net-1", name: "private", zone: "de-fsn1", cidr: "10.99.0.0/24", ula_prefix: "fd64:1:0:1::/64" }],
    servers: [
      serverSeed({ hostname: NODE, zone: "de-fsn1", interfaces: [{ network_id: "net-1", address: NODE_IP }] }),
      serverSeed({ hostname: PEER, zone: "de-fsn1", interfaces: [{ network_id: "net-1", address: PEER_IP }] }),
    ],
  }));
  const node = await timed(
    "real node start",
    () => startRealNode({ nodeName: NODE, nodeIp: NODE_IP, mirroredRegistries: [UPSTREAM_REGISTRY] }),
  );
  const work = await Deno.makeTempDir({ prefix: "ccm-real-node-test-" });
  const helmEnv = helmHomes(`${work}/helm`);
  const plane = node.plane;
  const local = `${node.registry.url}/library/ankra-cloud-ccm`;
  let leftovers: string[] = [];
  // Each step builds on the ones before: after a failure the rest are reported as ignored, not as failures of their own.
  const step = stepsInOrder(t, async () => {
    const pods = await node.kubectl(["-n", NS, "describe", "pods", "-l", SELECTOR]).catch(() => undefined);
    const log = await node.kubectl(["-n", NS, "logs", "-l", SELECTOR, "--tail=40"]).catch(() => undefined);
    console.error(`--- pods\n${pods?.text}\n--- controller log\n${log?.text}\n${await node.logs()}`);
  });

  try {
    await timed("image and chart pushed", async () => {
      // The chart names the local registry; the manifest names the upstream one, which containerd mirrors from it.
      for (const reference of [`${local}:${VERSION}`, `${local}:${ROLLOUT_TAG}`]) {
        await run("skopeo", [
          "copy",
          "--quiet",
          "--all",
          "--preserve-digests",
          "--dest-tls-verify=false",
          `oci:${layout}:${VERSION}`,
          `docker://${reference}`,
        ]);
      }
      await ok(node.helm(["package", `${ROOT}chart`, "-d", `${work}/pkg`], helmEnv), "helm package");
      const pkg = `${work}/pkg/ankra-cloud-ccm-${denoJson.version}.tgz`;
      await ok(node.helm(["push", pkg, `oci://${node.registry.url}/charts`, "--plain-http"], helmEnv), "helm push");
    });

    await step(
      "helm install from the OCI registry: the kubelet runs the pod, which initialises its own Node and gives a Service its address",
      async () => {
        requireFreeHostPort(CHART_HOST_PORT);
        await kubeOk(plane, "POST", `/api/v1/namespaces/${NS}/secrets`, {
          body: { metadata: { name: "ankra-cloud-api" }, stringData: { token: TEST_TOKEN } },
        });
        await Deno.writeTextFile(
          `${work}/values.yaml`,
          [
            "clusterName: real-node",
            "api:",
            `  url: ${cloud.simulator.url}`,
            "  existingSecret: ankra-cloud-api",
            "loadBalancer:",
            "  networkID: net-1",
            "cleanup:",
            "  onUninstall: true",
            "image:",
            `  repository: ${local}`,
            "",
          ].join("\n"),
        );
        await ok(
          node.helm([
            "install",
            "ankra-cloud-ccm",
            `oci://${node.registry.url}/charts/ankra-cloud-ccm`,
            "--version",
            denoJson.version,
            "--plain-http",
            "-n",
            NS,
            "--values",
            `${work}/values.yaml`,
          ], helmEnv),
          "helm install",
        );
        const pod = await readyPod(node, 90_000);
        assert.equal(pod.spec.nodeName, NODE);
        assert.equal(pod.status.containerStatuses?.[0].image, `${local}:${VERSION}`);
        const initialised = await waitFor("the Node initialised", 60_000, async () => {
          const doc = await kubeOk<{
            spec: { providerID?: string; taints?: { key: string }[] };
            metadata: { labels: Record<string, string>; annotations: Record<string, string> };
            status: { addresses: { type: string; address: string }[]; conditions: { type: string; status: string }[] };
          }>(plane, "GET", `/api/v1/nodes/${NODE}`);
          const tainted = doc.spec.taints?.some((taint) =>
            taint.key === "node.cloudprovider.kubernetes.io/uninitialized"
          );
          return doc.spec.providerID && !tainted ? doc : undefined;
        });
        const server = [...cloud.simulator.sim.world.servers.values()].find((s) => s.hostname === NODE);
        assert.equal(initialised.spec.providerID, `ankracloud://de-fsn1/${server?.id}`);
        assert.equal(initialised.metadata.labels["topology.kubernetes.io/zone"], "de-fsn1");
        assert.ok(initialised.metadata.labels["node.kubernetes.io/instance-type"], "instance type label");
        // The kubelet's --node-ip, recorded as k3s's kubelet records it, leads the node's addresses.
        assert.equal(initialised.metadata.annotations["alpha.kubernetes.io/provided-node-ip"], NODE_IP);
        assert.deepEqual(initialised.status.addresses.filter((a) => a.type === "InternalIP").map((a) => a.address), [
          NODE_IP,
        ]);
        assert.ok(
          initialised.status.conditions.some((c) => c.type === "Ready" && c.status !== "True"),
          "the node stays NotReady: no CNI runs",
        );
        // The process as the runtime made it from the chart's security settings, configured in-cluster through the
        // `kubernetes` Service that kube-proxy routes.
        const pid = await node.containerPid(containerId(pod));
        const status = await Deno.readTextFile(`/proc/${pid}/status`);
        const field = (name: string) => new RegExp(`^${name}:\\s+(.*)$`, "m").exec(status)?.[1].trim();
        assert.equal(field("Uid")?.split(/\s+/)[0], "65532", "runs as uid 65532");
        assert.equal(field("Seccomp"), "2", "seccomp RuntimeDefault: a filter is applied");
        assert.equal(field("NoNewPrivs"), "1", "no privilege escalation");
        assert.equal(field("CapEff"), "0000000000000000", "every capability dropped");
        const environ = (await Deno.readTextFile(`/proc/${pid}/environ`)).split("\0");
        assert.ok(environ.includes("KUBERNETES_SERVICE_HOST=10.96.0.1"), "in-cluster configuration from the kubelet");

        await kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
          body: {
            metadata: { name: "web" },
            spec: { type: "LoadBalancer", selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] },
          },
        });
        const ingress = await waitFor("the Service's ingress", 60_000, async () => {
          const ips = await serviceIngress(plane, "default", "web");
          return ips.length > 0 ? ips : undefined;
        });
        const listed = await cloud.client.listLoadBalancers();
        assert.equal(listed.items.length, 1, "one load balancer");
        const lb = await cloud.client.getLoadBalancer(listed.items[0].id);
        assert.deepEqual(lb.backends.flatMap((b) => b.members.map((m) => m.address)), [NODE_IP]);
        assert.ok(ingress.length > 0);
      },
    );

    // kube-proxy (supervised, as a DaemonSet's container) read one node IP from the kubelet's --node-ip; the
    // controller then published the server's IPv6 too, which kube-proxy 1.37 answers by exiting once.
    const exitsAtInitialisation = node.kubeProxy.exits.length;
    console.log(
      `kube-proxy exits at initialisation (--node-ip=${NODE_IP}): ${exitsAtInitialisation}` +
        node.kubeProxy.exits.map((e) => `\n  ${e.at} code ${e.code}: ${e.reason}`).join(""),
    );

    await step(
      "kill -9 of the controller's process: the kubelet restarts it, leadership resumes, no second load balancer",
      async () => {
        const before = await readyPod(node, 10_000);
        const holder = await renewingHolder(node, 30_000);
        const restarted = await killedAndRestarted(node, before, node.containerPid);
        assert.equal(restarted.status.containerStatuses?.[0].restartCount, 1, "restarted once");
        assert.notEqual(containerId(restarted), containerId(before));
        const next = await renewingHolder(node, 60_000, holder);
        assert.notEqual(next, holder, "the restarted process leads under its own identity");
        assert.equal((await cloud.client.listLoadBalancers()).items.length, 1, "still one load balancer");
      },
    );

    await step("helm upgrade to a new image tag rolls out with one controller at a time", async () => {
      const holder = await renewingHolder(node, 30_000);
      const upgradeStarted = performance.now();
      const upgrade = node.helm([
        "upgrade",
        "ankra-cloud-ccm",
        `oci://${node.registry.url}/charts/ankra-cloud-ccm`,
        "--version",
        denoJson.version,
        "--plain-http",
        "-n",
        NS,
        "--reuse-values",
        "--set",
        `image.tag=${ROLLOUT_TAG}`,
      ], helmEnv);
      const { pod, mostRunning } = await rolledOutPod(node, ROLLOUT_TAG, 90_000);
      const readyAfter = (performance.now() - upgradeStarted) / 1000;
      await ok(upgrade, "helm upgrade");
      assert.equal(pod.spec.containers[0].image, `${local}:${ROLLOUT_TAG}`);
      assert.equal(mostRunning, 1, "never two controllers running at once");
      assert.notEqual(await renewingHolder(node, 60_000, holder), holder, "the new pod leads");
      const leadsAfter = (performance.now() - upgradeStarted) / 1000;
      console.log(`upgraded pod Ready after ${readyAfter.toFixed(1)} s, leading after ${leadsAfter.toFixed(1)} s`);
      assert.equal((await cloud.client.listLoadBalancers()).items.length, 1, "still one load balancer");
    });

    await step(
      "a NotReady node tainted not-ready:NoExecute beside a Ready one keeps the controller's pod",
      async () => {
        const pod = await readyPod(node, 10_000);
        await using _peer = await startHeartbeatNode(plane, PEER, PEER_IP);
        await waitFor("the real node tainted not-ready:NoExecute", 60_000, async () => {
          return (await nodeTaints(plane, NODE)).some((x) =>
            x.key === "node.kubernetes.io/not-ready" && x.effect === "NoExecute"
          );
        });
        // A pod without the chart's tolerations on the same node: admission gives it the default 5 s, then it is evicted.
        await kubeOk(plane, "POST", "/api/v1/namespaces/default/pods", {
          body: {
            metadata: { name: "evicted-witness" },
            spec: {
              nodeName: NODE,
              hostNetwork: true,
              containers: [{ name: "pause", image: `${node.registry.url}/pause:3.10` }],
              tolerations: [{ key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoSchedule" }],
            },
          },
        });
        await waitFor("the witness pod evicted", 60_000, async () => {
          const answer = await kubeRequest<PodDoc>(plane, "GET", "/api/v1/namespaces/default/pods/evicted-witness");
          return answer.status === 404 || answer.body.metadata.deletionTimestamp !== undefined;
        });
        // The witness was evicted 5 s after it arrived; the controller's pod has had the same taint at least as long.
        const after = await kubeRequest<PodDoc>(plane, "GET", `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}`);
        assert.ok(
          after.status === 200 && !after.body.metadata.deletionTimestamp && podReady(after.body),
          `the controller's pod was evicted (tolerations ${JSON.stringify(pod.spec.tolerations)})`,
        );
        assert.equal(
          after.body.status.containerStatuses?.[0].restartCount,
          pod.status.containerStatuses?.[0].restartCount,
        );
        assert.ok(
          pod.spec.tolerations?.some((x) =>
            x.key === "node.kubernetes.io/not-ready" && x.effect === "NoExecute" && x.tolerationSeconds === undefined
          ),
          "tolerates not-ready:NoExecute without a time limit",
        );
      },
    );

    await step(
      "helm uninstall with cleanup.onUninstall: the hook's Job deletes the cluster's load balancer and frees its " +
        "Service; then kubectl apply -f deploy/ankra-cloud-ccm.yaml runs the same controller",
      async () => {
        // The Service stays: the post-delete hook, run by the kubelet once the controller is gone, cleans up.
        await ok(node.helm(["uninstall", "ankra-cloud-ccm", "-n", NS, "--wait"], helmEnv), "helm uninstall");
        await waitFor("the chart's pod gone", 60_000, async () => (await listPods(plane, NS, SELECTOR)).length === 0);
        await waitFor(
          "the cluster's load balancer deleted by the hook",
          60_000,
          async () => (await cloud.client.listLoadBalancers()).items.length === 0,
        );
        const freed = await kubeOk<{ metadata: { finalizers?: string[] } }>(
          plane,
          "GET",
          "/api/v1/namespaces/default/services/web",
        );
        assert.deepEqual(freed.metadata.finalizers ?? [], [], "the Service can be deleted without a controller");
        assert.deepEqual(await serviceIngress(plane, "default", "web"), [], "its status is cleared");
        assert.deepEqual(
          (await kubeOk<{ items: unknown[] }>(plane, "GET", `/apis/batch/v1/namespaces/${NS}/jobs`)).items,
          [],
          "the hook's Job is removed once it succeeded",
        );
        await kubeOk(plane, "DELETE", "/api/v1/namespaces/default/services/web");
        // The Secret the manifest expects (created through the API: a token never goes on a command line).
        await kubeOk(plane, "POST", `/api/v1/namespaces/${NS}/secrets`, {
          body: { metadata: { name: "ankra-cloud-ccm" }, stringData: { token: TEST_TOKEN } },
        });
        // Only the API URL differs from the shipped file: the simulator instead of https://cloud.ankra.app.
        const manifest = (await Deno.readTextFile(`${ROOT}deploy/ankra-cloud-ccm.yaml`)).replace(
          "https://cloud.ankra.app",
          cloud.simulator.url,
        );
        await Deno.writeTextFile(`${work}/manifest.yaml`, manifest);
        await ok(node.kubectl(["apply", "-f", `${work}/manifest.yaml`]), "kubectl apply");
        const pod = await readyPod(node, 90_000);
        assert.equal(pod.spec.containers[0].image, `${UPSTREAM_REGISTRY}/library/ankra-cloud-ccm:${VERSION}`);
        const pulled = (await eventsFor(plane, pod.metadata.name, NS)).filter((e) => e.reason === "Pulled");
        assert.match(
          pulled.map((e) => e.message).join("\n"),
          /Successfully pulled image "share\.ankra\.cloud\/library\/ankra-cloud-ccm:/,
          "pulled by its upstream name, through containerd's mirror of the local registry",
        );
        await kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
          body: {
            metadata: { name: "web2" },
            spec: { type: "LoadBalancer", selector: { app: "web" }, ports: [{ port: 443, targetPort: 8443 }] },
          },
        });
        await waitFor(
          "the new Service's ingress",
          60_000,
          async () => (await serviceIngress(plane, "default", "web2")).length > 0,
        );
      },
    );
    await step("kube-proxy exited at most once, at initialisation, and never after", () => {
      const exits = node.kubeProxy.exits.map((e) => `${e.at} code ${e.code}: ${e.reason}`);
      assert.ok(node.kubeProxy.exits.length <= 1, `kube-proxy exits: ${exits.join("; ")}`);
      assert.equal(node.kubeProxy.exits.length, exitsAtInitialisation, `exits after initialisation: ${exits}`);
      for (const exit of node.kubeProxy.exits) assert.match(exit.reason, /NodeIPs changed for the node/);
      return Promise.resolve();
    });
  } finally {
    leftovers = await timed("real node teardown", () => node.stop());
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
  assert.deepEqual(
    leftovers,
    [],
    "nothing left on the host: processes, mounts, netfilter rules, cgroups, the lo address",
  );
});
