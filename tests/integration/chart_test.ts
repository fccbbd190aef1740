/**
 * The Helm chart: lints, refuses bad values, installs into the real apiserver, and its RBAC is exactly enough for
 * the controller — proven by running the controller with the chart's ServiceAccount token.
 */
import assert from "node:assert/strict";
import { kubeconfigText, testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { kubeletNode, kubeOk, kubeRequest, serviceIngress } from "../support/http/kube_http.ts";
import { helm } from "../support/chart/helm.ts";
import { eventually } from "../support/controller/node_controllers.ts";
import { serverSeed, startTestCloud, TEST_TOKEN, testSeed } from "../support/cloud/simulator.ts";

const CHART = new URL("../../chart", import.meta.url).pathname;
const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const GO_CHART = new URL("../fixtures/go-chart-0.1.1", import.meta.url).pathname;
const GO_VALUES = `${GO_CHART}/values.yaml`;
const SCHEMA_REFUSAL = /values don't meet the specifications of the schema/;

Deno.test("the chart passes helm lint --strict with a token and with an existing Secret", async () => {
  for (const values of [["--set", "api.token=lint-placeholder"], ["--set", "api.existingSecret=ankra-cloud-ccm"]]) {
    const result = await helm(["lint", "--strict", CHART, ...values]);
    assert.equal(result.code, 0, result.text);
  }
});

Deno.test("the chart refuses a missing token and a bad HA mode with a message saying what to set", async () => {
  const noToken = await helm(["template", "t", CHART]);
  assert.notEqual(noToken.code, 0);
  assert.match(noToken.text, /set api\.token, or api\.existingSecret/);
  const badHa = await helm([
    "template",
    "t",
    CHART,
    "--set",
    "api.token=x",
    "--set",
    "loadBalancer.highAvailability=maybe",
  ]);
  assert.notEqual(badHa.code, 0);
  assert.match(badHa.text, SCHEMA_REFUSAL);
  assert.match(badHa.text, /at '\/loadBalancer\/highAvailability': value must be one of 'auto', 'true', 'false'/);
  const rendered = await helm(["template", "t", CHART, "--set", "api.token=secret-value-xyz"]);
  assert.equal(rendered.code, 0);
  assert.ok(
    !/ANKRA_CLOUD_TOKEN\b[^_]/.test(rendered.text),
    "the token is mounted as a file, not put in the environment",
  );
  assert.match(rendered.text, /readinessProbe:/);
});

Deno.test("the values schema refuses a wrong type, an unknown mode and a misspelt key with Helm's message", async () => {
  const cases: [set: string, message: RegExp][] = [
    ["replicas=two", /at '\/replicas': got string, want integer/],
    ["replicas=0", /at '\/replicas': minimum: got 0, want 1/],
    ["metricsAuthorization=open", /at '\/metricsAuthorization': value must be one of 'delegated', 'none'/],
    ["loadBalancer.networkId=net-1", /at '\/loadBalancer': additional properties 'networkId' not allowed/],
    ["clusterName=-prod", /at '\/clusterName': '-prod' does not match pattern/],
    ["logVerbosity=11", /at '\/logVerbosity': maximum: got 11, want 10/],
    ["image.pullPolicy=Sometimes", /at '\/image\/pullPolicy': value must be one of 'Always', 'IfNotPresent', 'Never'/],
    [
      "admissionPolicy.validationActions={Refuse}",
      /at '\/admissionPolicy\/validationActions\/0': value must be one of/,
    ],
    ["admissionPolicy.validationActions={Deny,Warn}", /at '\/admissionPolicy\/validationActions': 'not' failed/],
    ["admissionPolicy.enable=true", /at '\/admissionPolicy': additional properties 'enable' not allowed/],
  ];
  for (const [set, message] of cases) {
    for (const command of ["template", "lint"]) {
      const args = command === "lint" ? ["lint", "--strict", CHART] : ["template", "t", CHART];
      const result = await helm([...args, "--set", "api.token=x", "--set", set]);
      assert.notEqual(result.code, 0, `helm ${command} --set ${set} must fail`);
      assert.match(result.text, SCHEMA_REFUSAL, `helm ${command} --set ${set}`);
      assert.match(result.text, message, `helm ${command} --set ${set}`);
    }
  }
});

Deno.test("the values schema accepts every value the Go chart 0.1.1 had, HA modes as strings and YAML booleans", async () => {
  const goValues = await helm(["lint", "--strict", CHART, "-f", GO_VALUES, "--set", "api.token=x"]);
  assert.equal(goValues.code, 0, goValues.text);
  for (
    const ha of [["--set", "loadBalancer.highAvailability=true"], [
      "--set-string",
      "loadBalancer.highAvailability=false",
    ]]
  ) {
    const result = await helm(["template", "t", CHART, "--set", "api.token=x", ...ha]);
    assert.equal(result.code, 0, result.text);
    assert.match(
      result.text,
      new RegExp(`ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY\\n\\s+value: "${ha[1].split("=")[1]}"`),
    );
  }
  const full = await helm([
    "template",
    "t",
    CHART,
    "--set",
    "api.existingSecret=my-token",
    "--set",
    "api.existingSecretHasCABundle=true",
    "--set",
    "clusterName=prod.eu-1",
    "--set",
    "replicas=2",
    "--set",
    "imagePullSecrets[0].name=registry",
    "--set",
    "extraArgs[0]=--concurrent-service-syncs=4",
    "--set",
    "nodeSelector.kubernetes\\.io/os=linux",
    "--set",
    "metricsAuthorization=none",
  ]);
  assert.equal(full.code, 0, full.text);
  assert.match(full.text, /- "--concurrent-service-syncs=4"/);
  assert.match(full.text, /- --metrics-authorization=none/);
});

Deno.test("installed with helm, the controller runs on the chart's ServiceAccount and RBAC alone", async () => {
  const plane = testControlPlane();
  const namespace = uniqueName("ccm-chart");
  await kubeOk(plane, "POST", "/api/v1/namespaces", { body: { metadata: { name: namespace } } });
  const install = await helm([
    "install",
    "ankra-cloud-ccm",
    CHART,
    "--namespace",
    namespace,
    "--set",
    `api.token=${TEST_TOKEN}`,
    "--set",
    "clusterName=chart",
  ]);
  assert.equal(install.code, 0, install.text);
  await using cloud = await startTestCloud(testSeed());
  const node = uniqueName("chart-node");
  const service = uniqueName("chart-svc");
  let controller: Deno.ChildProcess | undefined;
  try {
    const deployment = await kubeOk<{ spec: { template: { spec: { serviceAccountName: string } } } }>(
      plane,
      "GET",
      `/apis/apps/v1/namespaces/${namespace}/deployments/ankra-cloud-ccm`,
    );
    assert.equal(deployment.spec.template.spec.serviceAccountName, "ankra-cloud-ccm");
    const token = (await kubeOk<{ status: { token: string } }>(
      plane,
      "POST",
      `/api/v1/namespaces/${namespace}/serviceaccounts/ankra-cloud-ccm/token`,
      { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } } },
    )).status.token;
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/kubeconfig`, kubeconfigText(plane.url, plane.caCert, token));
    cloud.simulator.sim.world.addServer(
      serverSeed({ hostname: node, zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }),
    );
    controller = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-all",
        MAIN,
        `--kubeconfig=${dir}/kubeconfig`,
        "--cluster-name=chart",
        `--leader-elect-resource-namespace=${namespace}`,
        "--secure-port=0",
        "--server-list-period=2s",
      ],
      env: { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_API_URL: cloud.simulator.url, ANKRA_CLOUD_NETWORK_ID: "net-1" },
      stdout: "null",
      stderr: "null",
    }).spawn();
    await kubeOk(plane, "POST", "/api/v1/nodes", { body: kubeletNode(node) });
    await kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
      body: { metadata: { name: service }, spec: { type: "LoadBalancer", ports: [{ port: 80 }] } },
    });
    await eventually(
      async () => {
        const n = await kubeOk<{ spec: { providerID?: string } }>(plane, "GET", `/api/v1/nodes/${node}`);
        return Boolean(n.spec.providerID);
      },
      20_000,
      "node initialised under the chart's RBAC",
    );
    await eventually(
      async () => (await serviceIngress(plane, "default", service)).length > 0,
      20_000,
      "service address under the chart's RBAC",
    );
    const lease = await kubeRequest(
      plane,
      "GET",
      `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/ankra-cloud-ccm`,
    );
    assert.equal(lease.status, 200, "the Lease lives in the release namespace");
    await Deno.remove(dir, { recursive: true });
  } finally {
    await kubeRequest(plane, "DELETE", `/api/v1/namespaces/default/services/${service}`);
    await eventually(
      async () => (await kubeRequest(plane, "GET", `/api/v1/namespaces/default/services/${service}`)).status === 404,
      20_000,
    ).catch(() => {});
    controller?.kill("SIGTERM");
    await controller?.status;
    await kubeRequest(plane, "DELETE", `/api/v1/nodes/${node}`);
    const uninstall = await helm(["uninstall", "ankra-cloud-ccm", "--namespace", namespace]);
    assert.equal(uninstall.code, 0, uninstall.text);
  }
});

Deno.test("a Go chart 0.1.1 release with a pinned image.tag upgraded with --reuse-values is refused, naming --set image.tag=", async () => {
  const template = await helm(["template", "t", CHART, "--set", "api.token=x", "--set", "image.tag=v0.1.1"]);
  assert.notEqual(template.code, 0, "the Go controller's image with this chart's arguments must not render");
  assert.match(template.text, /image\.tag v0\.1\.1 is an image of the Go controller .*--set image\.tag= /);
  const own = await helm(["template", "t", CHART, "--set", "api.token=x", "--set", "image.tag=v0.2.0"]);
  assert.equal(own.code, 0, own.text);

  const plane = testControlPlane();
  const namespace = uniqueName("ccm-pinned");
  await kubeOk(plane, "POST", "/api/v1/namespaces", { body: { metadata: { name: namespace } } });
  try {
    const install = await helm([
      "install",
      "ankra-cloud-ccm",
      GO_CHART,
      "--namespace",
      namespace,
      "-f",
      GO_VALUES,
      "--set",
      "api.token=x",
      "--set",
      "image.tag=v0.1.1",
    ]);
    assert.equal(install.code, 0, install.text);
    const upgrade = ["upgrade", "ankra-cloud-ccm", CHART, "--namespace", namespace, "--reuse-values"];
    const refused = await helm(upgrade);
    assert.notEqual(refused.code, 0, "the upgrade that would crash-loop is refused");
    assert.match(refused.text, /--set image\.tag= to use this chart's image/);
    const image = async () =>
      (await kubeOk<{ spec: { template: { spec: { containers: { image: string }[] } } } }>(
        plane,
        "GET",
        `/apis/apps/v1/namespaces/${namespace}/deployments/ankra-cloud-ccm`,
      )).spec.template.spec.containers[0].image;
    assert.match(await image(), /:v0\.1\.1$/, "the refused upgrade left the Go release running");
    const fixed = await helm([...upgrade, "--set", "image.tag="]);
    assert.equal(fixed.code, 0, fixed.text);
    const appVersion = (await Deno.readTextFile(`${CHART}/Chart.yaml`)).match(/^appVersion: "?([^"\n]+)"?$/m)![1];
    assert.match(await image(), new RegExp(`:${appVersion.replaceAll(".", "\\.")}$`), "this chart's own image");
  } finally {
    await helm(["uninstall", "ankra-cloud-ccm", "--namespace", namespace]);
    await kubeRequest(plane, "DELETE", `/api/v1/namespaces/${namespace}`);
  }
});
