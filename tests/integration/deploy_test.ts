/**
 * Deploying the controller as users do, with the pod run as a kubelet would run it (the test control plane has no
 * kubelet): the Deployment is read back from the API server, its Secrets and a ServiceAccount token (TokenRequest)
 * are laid out as the volumes it mounts, and its command line and environment run in the image built from this
 * checkout — resolved by the Deployment's image tag — with runc (or the chroot fallback), read-only, as 65532, in
 * the host's network (`hostNetwork: true`), with in-cluster configuration. The one change for the test: the
 * environment's ANKRA_CLOUD_API_URL points at the in-process simulator instead of https://cloud.ankra.app.
 *
 * - `deploy/ankra-cloud-ccm.yaml` is exactly what `helm template` renders from the chart, and works when applied
 *   with kubectl after creating the Secret as its header says.
 * - A release of the Go controller's chart 0.1.1 (tests/fixtures/go-chart-0.1.1) upgrades in place to this chart:
 *   with `--reuse-values` (Helm then renders with the old chart's values, so everything added since is absent) from a
 *   release applied client-side as Helm 3 made it, and the upgraded pod runs; and with a plain `helm upgrade` (the
 *   release's own values over this chart's defaults) from a release Helm 4 applied server-side. Either way the
 *   controller's own parser reads the upgraded Deployment's command line, environment and mounted files as the Go
 *   chart's values meant them.
 *
 * Needs root and runc/crun or unshare+chroot (as image_test.ts); the image is built once for the file (about 30 s)
 * unless CCM_TEST_IMAGE_LAYOUT names a built layout. The pods listen on port 10258 of the host, as the chart says.
 */
import assert from "node:assert/strict";
import { load as loadYaml } from "js-yaml";
import { resolveCommand } from "../../lib/config/command.ts";
import type { Config } from "../../lib/config/config.ts";
import { VERSION } from "../../lib/version.ts";
import { ENV as IMAGE_ENV } from "../../scripts/image/ccm_image.ts";
import {
  MANIFEST_PATH,
  RENDER_COMMAND,
  renderManifest,
  sameIgnoringBlankLines,
} from "../../scripts/render_manifest.ts";
import { type SharedControlPlane, testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { helmOk, kubectlOk, timed, toolPath } from "../support/chart/helm.ts";
import type { RunningContainer } from "../support/image/image_runtime.ts";
import { kubeletNode, kubeOk, kubeRequest, serviceIngress } from "../support/http/kube_http.ts";
import { containerEnv, type DeploymentDoc, getDeployment, preparePod, runPod } from "../support/kubelet/kubelet.ts";
import { eventually } from "../support/controller/node_controllers.ts";
import { serverSeed, startTestCloud, TEST_TOKEN, type TestCloud, testSeed } from "../support/cloud/simulator.ts";
import { imageFor, imageRepository, imageTag, requireImageRuntime } from "../support/image/test_image.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const CHART = `${ROOT}chart`;
const GO_CHART = `${ROOT}tests/fixtures/go-chart-0.1.1`;
const SECURE_PORT = 10258;

const chartValues = loadYaml(await Deno.readTextFile(`${CHART}/values.yaml`)) as { image: { repository: string } };

/** Throws, saying why, when the pod's host port is taken (it runs in the host's network, as the chart says). */
function requireFreeSecurePort(): void {
  try {
    Deno.listen({ hostname: "0.0.0.0", port: SECURE_PORT }).close();
  } catch {
    throw new Error(
      `port ${SECURE_PORT} is in use on this machine: the pod runs with hostNetwork and --secure-port=${SECURE_PORT} ` +
        "as the chart renders it; stop what holds the port",
    );
  }
}

async function curl(url: string): Promise<string> {
  const output = await new Deno.Command("curl", { args: ["-ksS", "--max-time", "5", url], stdout: "piped" }).output();
  return new TextDecoder().decode(output.stdout);
}

/**
 * Resolves the pod's command line and environment with the controller's own parser, reading files through the
 * pod's mounts, as the process in the container will.
 */
function parseAsController(
  pod: Awaited<ReturnType<typeof preparePod>>,
  env: Record<string, string>,
): Config {
  const command = resolveCommand(pod.container.args ?? [], {
    env,
    readFile(path) {
      const host = pod.hostPath(path);
      if (!host) throw new Deno.errors.NotFound(`${path} is on no mount of the pod`);
      return Deno.readTextFileSync(host);
    },
  });
  assert.equal(command.kind, "run");
  return (command as { kind: "run"; config: Config }).config;
}

function addServer(cloud: TestCloud, hostname: string): void {
  cloud.simulator.sim.world.addServer(serverSeed({ hostname, zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }));
}

/**
 * Runs the Deployment's pod in the image against the simulator until it has initialised a Node and given a
 * LoadBalancer Service an address, probed /readyz and /healthz as the kubelet would, then deletes the Service (the
 * controller releases its load balancer) and stops the pod.
 */
async function runPodUntilServing(
  plane: SharedControlPlane,
  deployment: DeploymentDoc,
  cloud: TestCloud,
  label: string,
): Promise<void> {
  const image = await timed("image ready", () => imageFor(deployment.spec.template.spec.containers[0].image));
  const dir = await Deno.makeTempDir({ prefix: `ccm-pod-${label}-` });
  const node = uniqueName(`${label}-node`);
  const service = uniqueName(`${label}-svc`);
  let container: RunningContainer | undefined;
  try {
    const pod = await preparePod(plane, deployment, dir);
    addServer(cloud, node);
    requireFreeSecurePort();
    container = await runPod(image, pod, { ANKRA_CLOUD_API_URL: cloud.simulator.url });
    let exited: number | undefined;
    container.status.then((code) => (exited = code));
    const running = container;
    const alive = () => {
      if (exited !== undefined) throw new Error(`the pod's process exited (${exited}):\n${running.output()}`);
    };
    await kubeOk(plane, "POST", "/api/v1/nodes", { body: kubeletNode(node) });
    await kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
      body: { metadata: { name: service }, spec: { type: "LoadBalancer", ports: [{ port: 80 }] } },
    });
    try {
      await timed(`${label}: node initialised`, () =>
        eventually(
          async () => {
            alive();
            const n = await kubeOk<{ spec: { providerID?: string } }>(plane, "GET", `/api/v1/nodes/${node}`);
            return Boolean(n.spec.providerID);
          },
          40_000,
          "spec.providerID set by the pod",
        ));
      await timed(`${label}: service address`, () =>
        eventually(
          async () => {
            alive();
            return (await serviceIngress(plane, "default", service)).length > 0;
          },
          30_000,
          "LoadBalancer address set by the pod",
        ));
      assert.equal(await curl(`https://127.0.0.1:${SECURE_PORT}/readyz`), "ok", "readinessProbe /readyz");
      assert.equal(await curl(`https://127.0.0.1:${SECURE_PORT}/healthz`), "ok", "livenessProbe /healthz");
      await kubeOk(plane, "DELETE", `/api/v1/namespaces/default/services/${service}`);
      await eventually(
        async () => {
          alive();
          return (await kubeRequest(plane, "GET", `/api/v1/namespaces/default/services/${service}`)).status === 404;
        },
        30_000,
        "Service deleted once the pod released its load balancer",
      );
    } catch (error) {
      console.log(`pod output:\n${running.output()}`);
      throw error;
    }
    const output = running.output();
    assert.ok(!output.includes(TEST_TOKEN), "the token is never logged");
    assert.ok(!/read-only file system|EROFS/i.test(output), `no write attempts:\n${output}`);
  } finally {
    await container?.stop();
    const leftover = await kubeRequest(plane, "GET", `/api/v1/namespaces/default/services/${service}`);
    if (leftover.status === 200) {
      await kubeRequest(plane, "PATCH", `/api/v1/namespaces/default/services/${service}`, {
        body: { metadata: { finalizers: null } },
      });
      await kubeRequest(plane, "DELETE", `/api/v1/namespaces/default/services/${service}`);
    }
    await kubeRequest(plane, "DELETE", `/api/v1/nodes/${node}`);
    await Deno.remove(dir, { recursive: true });
  }
}

/** Removes the leader election Lease a pod left behind (it was killed, not stopped). */
async function deleteLease(plane: SharedControlPlane, namespace: string): Promise<void> {
  await kubeRequest(plane, "DELETE", `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/ankra-cloud-ccm`);
}

function envNames(deployment: DeploymentDoc): string[] {
  return (deployment.spec.template.spec.containers[0].env ?? []).map((e) => e.name);
}

Deno.test(`${MANIFEST_PATH} is what helm template renders from the chart`, async () => {
  const rendered = await renderManifest(toolPath("helm"));
  const current = await Deno.readTextFile(`${ROOT}${MANIFEST_PATH}`);
  assert.ok(
    sameIgnoringBlankLines(current, rendered),
    `${MANIFEST_PATH} differs from the chart (blank lines ignored): run \`${RENDER_COMMAND}\` and commit the result`,
  );
  assert.match(current, /kubectl -n kube-system create secret generic ankra-cloud-ccm --from-literal=token=/);
  assert.match(current, /--cloud-provider=external/);
  assert.doesNotMatch(current, /^kind: Secret$/m, "the manifest uses the Secret the user creates");
  assert.match(current, new RegExp(`image: "${chartValues.image.repository}:${VERSION}"`));
});

Deno.test("kubectl apply of deploy/ankra-cloud-ccm.yaml runs: its pod initialises a Node and serves a LoadBalancer", async () => {
  requireImageRuntime();
  const plane = testControlPlane();
  await using cloud = await startTestCloud(testSeed());
  try {
    await kubectlOk([
      "-n",
      "kube-system",
      "create",
      "secret",
      "generic",
      "ankra-cloud-ccm",
      `--from-literal=token=${TEST_TOKEN}`,
    ]);
    const applied = await kubectlOk(["apply", "-f", `${ROOT}${MANIFEST_PATH}`]);
    assert.match(applied, /deployment\.apps\/ankra-cloud-ccm created/);
    const deployment = await getDeployment(plane, "kube-system", "ankra-cloud-ccm");
    assert.equal(deployment.spec.template.spec.containers[0].image, `${chartValues.image.repository}:${VERSION}`);
    assert.equal(deployment.spec.template.spec.hostNetwork, true);
    await runPodUntilServing(plane, deployment, cloud, "manifest");
  } finally {
    await kubectlOk(["delete", "--ignore-not-found", "-f", `${ROOT}${MANIFEST_PATH}`]);
    await kubectlOk(["-n", "kube-system", "delete", "secret", "ankra-cloud-ccm", "--ignore-not-found"]);
    await deleteLease(plane, "kube-system");
  }
});

/** The values a Go chart 0.1.1 user had: a token, a cluster name, a CA bundle, network, zone, HA as a YAML boolean. */
function goChartValues(plane: SharedControlPlane): string {
  const indented = plane.caCert.trimEnd().split("\n").map((line) => `    ${line}`).join("\n");
  return [
    "clusterName: prod",
    "api:",
    `  token: ${TEST_TOKEN}`,
    "  caBundle: |",
    indented,
    "loadBalancer:",
    "  networkID: net-1",
    "  zone: de-fsn1",
    "  highAvailability: false",
    "logVerbosity: 3",
    "extraArgs:",
    "  - --concurrent-service-syncs=2",
    "",
  ].join("\n");
}

/**
 * Installs the Go chart fixture. `serverSide: false` applies as Helm 3 did (its releases then upgrade with a
 * client-side three-way merge); Helm 4's default is server-side apply.
 */
async function installGoChart(
  plane: SharedControlPlane,
  namespace: string,
  valuesFile: string,
  serverSide: boolean,
): Promise<void> {
  await kubeOk(plane, "POST", "/api/v1/namespaces", { body: { metadata: { name: namespace } } });
  await helmOk([
    "install",
    "ankra-cloud-ccm",
    GO_CHART,
    "--namespace",
    namespace,
    "-f",
    valuesFile,
    `--server-side=${serverSide}`,
  ]);
  const before = await getDeployment(plane, namespace, "ankra-cloud-ccm");
  assert.equal(before.spec.template.spec.containers[0].image, `${chartValues.image.repository}:v0.1.1`);
  assert.ok(envNames(before).includes("ANKRA_CLOUD_TOKEN"), "the Go chart passes the token in the environment");
}

/** What the Go chart's values must become in the controller's configuration. */
function assertGoValuesCarriedOver(config: Config, plane: SharedControlPlane, namespace: string): void {
  assert.equal(config.clusterName, "prod");
  assert.equal(config.cloud.token, TEST_TOKEN);
  assert.equal(config.cloud.apiUrl, "https://cloud.ankra.app");
  assert.equal(config.cloud.caBundle?.trim(), plane.caCert.trim());
  assert.equal(config.cloud.networkId, "net-1");
  assert.equal(config.cloud.zone, "de-fsn1");
  assert.equal(config.cloud.loadBalancerHighAvailability, "false");
  assert.equal(config.verbosity, 3);
  assert.equal(config.concurrentServiceSyncs, 2);
  assert.equal(config.leaderElect, true);
  assert.equal(config.leaderElectResourceNamespace, namespace);
  assert.equal(config.metricsAuthorization, "delegated");
  assert.equal(config.securePort, SECURE_PORT);
  assert.equal(config.kubeconfig, undefined, "in-cluster configuration");
}

Deno.test("helm upgrade --reuse-values from the Go chart 0.1.1 renders and runs", async () => {
  requireImageRuntime();
  const plane = testControlPlane();
  const namespace = uniqueName("ccm-upgrade");
  const dir = await Deno.makeTempDir({ prefix: "ccm-upgrade-" });
  await using cloud = await startTestCloud(testSeed());
  try {
    await Deno.writeTextFile(`${dir}/values.yaml`, goChartValues(plane));
    await installGoChart(plane, namespace, `${dir}/values.yaml`, false);
    await timed(
      "helm upgrade --reuse-values",
      () => helmOk(["upgrade", "ankra-cloud-ccm", CHART, "--namespace", namespace, "--reuse-values"]),
    );

    const deployment = await getDeployment(plane, namespace, "ankra-cloud-ccm");
    const container = deployment.spec.template.spec.containers[0];
    assert.equal(imageRepository(container.image), chartValues.image.repository);
    assert.equal(imageTag(container.image), VERSION, "the chart's appVersion, not the Go controller's v0.1.1");
    assert.ok(!envNames(deployment).includes("ANKRA_CLOUD_TOKEN"), "the Go chart's token variable is gone");
    assert.ok(container.args?.includes("--metrics-authorization=delegated"), String(container.args));
    const reader = await kubeRequest(
      plane,
      "GET",
      "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings/" +
        "ankra-cloud-ccm:extension-apiserver-authentication-reader",
    );
    assert.equal(reader.status, 404, "the RoleBinding this controller does not need is removed by the upgrade");

    const podDir = await Deno.makeTempDir({ prefix: "ccm-upgrade-pod-" });
    try {
      const pod = await preparePod(plane, deployment, podDir);
      assertGoValuesCarriedOver(parseAsController(pod, containerEnv(IMAGE_ENV, pod)), plane, namespace);
    } finally {
      await Deno.remove(podDir, { recursive: true });
    }
    await runPodUntilServing(plane, deployment, cloud, "upgraded");
    const balancers = await cloud.client.listLoadBalancers({ labels: { "ccm.ankra.cloud/cluster": "prod" } });
    assert.equal(balancers.items.length, 0, "the Service's load balancer, named for cluster prod, was released");
  } finally {
    await helmOk(["uninstall", "ankra-cloud-ccm", "--namespace", namespace]).catch((e) => console.log(e.message));
    await deleteLease(plane, namespace);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("helm upgrade from the Go chart 0.1.1 without --reuse-values keeps the release's values", async () => {
  const plane = testControlPlane();
  const namespace = uniqueName("ccm-upgrade-plain");
  const dir = await Deno.makeTempDir({ prefix: "ccm-upgrade-plain-" });
  try {
    await Deno.writeTextFile(`${dir}/values.yaml`, goChartValues(plane));
    await installGoChart(plane, namespace, `${dir}/values.yaml`, true);
    await helmOk(["upgrade", "ankra-cloud-ccm", CHART, "--namespace", namespace]);
    const deployment = await getDeployment(plane, namespace, "ankra-cloud-ccm");
    const container = deployment.spec.template.spec.containers[0];
    assert.equal(container.image, `${chartValues.image.repository}:${VERSION}`);
    assert.ok(!envNames(deployment).includes("ANKRA_CLOUD_TOKEN"));
    const resources = (container as { resources?: { requests?: { memory?: string } } }).resources;
    assert.equal(resources?.requests?.memory, "96Mi", "the chart's own defaults apply to what the user did not set");
    const pod = await preparePod(plane, deployment, dir);
    assertGoValuesCarriedOver(parseAsController(pod, containerEnv(IMAGE_ENV, pod)), plane, namespace);
  } finally {
    await helmOk(["uninstall", "ankra-cloud-ccm", "--namespace", namespace]).catch((e) => console.log(e.message));
    await Deno.remove(dir, { recursive: true });
  }
});
