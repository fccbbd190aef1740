/**
 * The chart published and installed as the install documentation says: packaged, pushed to an OCI registry and
 * installed from there by version, and served as a classic Helm repository (index.yaml + package over HTTP) and
 * installed with exactly the three documented commands — `helm repo add`, `helm repo update`, `helm install` — with
 * only the repository URL changed to a loopback server. Helm's configuration, cache and data live in a temporary
 * directory.
 *
 * The OCI install goes into a fresh namespace; the repository install into kube-system, as documented (each is
 * uninstalled before the next: the ClusterRole `system:ankra-cloud-ccm` can belong to one release at a time).
 *
 * Needs the test registry (scripts/image_tools.sh builds it from the Go module proxy on first use).
 */
import assert from "node:assert/strict";
import { load as loadYaml } from "js-yaml";
import denoJson from "../../deno.json" with { type: "json" };
import { VERSION } from "../../lib/version.ts";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { helm, helmHomes, helmOk, timed, type ToolOptions } from "../support/chart/helm.ts";
import { kubeOk } from "../support/http/kube_http.ts";
import type { DeploymentDoc } from "../support/kubelet/kubelet.ts";
import { startRegistry } from "../support/image/registry.ts";
import { TEST_TOKEN } from "../support/cloud/simulator.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const CHART = `${ROOT}chart`;
const PACKAGE = `ankra-cloud-ccm-${denoJson.version}.tgz`;

const chartValues = loadYaml(await Deno.readTextFile(`${CHART}/values.yaml`)) as { image: { repository: string } };

/** The installed release as `helm list` shows it, and its Deployment's image. */
async function installed(namespace: string, options: ToolOptions): Promise<{ chart: string; appVersion: string }> {
  const listed = JSON.parse(await helmOk(["list", "--namespace", namespace, "--output", "json"], options)) as {
    name: string;
    chart: string;
    app_version: string;
  }[];
  const release = listed.find((r) => r.name === "ankra-cloud-ccm");
  assert.ok(release, `release ankra-cloud-ccm in ${namespace}: ${JSON.stringify(listed)}`);
  const deployment = await kubeOk<DeploymentDoc>(
    testControlPlane(),
    "GET",
    `/apis/apps/v1/namespaces/${namespace}/deployments/ankra-cloud-ccm`,
  );
  assert.equal(
    deployment.spec.template.spec.containers[0].image,
    `${chartValues.image.repository}:${VERSION}`,
    "the image is the chart's appVersion, the release's version",
  );
  return { chart: release.chart, appVersion: release.app_version };
}

/** Serves `dir` under `/charts/` on a loopback port; records the paths asked for. */
function serveCharts(dir: string): { url: string; requested: string[]; server: Deno.HttpServer } {
  const requested: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const path = new URL(request.url).pathname;
    requested.push(path);
    const name = path.startsWith("/charts/") ? path.slice("/charts/".length) : "";
    if (!/^[A-Za-z0-9._-]+$/.test(name)) return new Response("not found", { status: 404 });
    try {
      const body = await Deno.readFile(`${dir}/${name}`);
      const type = name.endsWith(".yaml") ? "application/x-yaml" : "application/gzip";
      return new Response(body, { headers: { "content-type": type } });
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  return { url: `http://127.0.0.1:${server.addr.port}/charts`, requested, server };
}

Deno.test("the chart pushed to an OCI registry installs by version with --plain-http", async () => {
  const plane = testControlPlane();
  const dir = await Deno.makeTempDir({ prefix: "ccm-chart-oci-" });
  const options: ToolOptions = { env: helmHomes(`${dir}/helm`) };
  const namespace = uniqueName("ccm-oci");
  await using registry = await timed("registry start", () => startRegistry());
  try {
    const packaged = await helmOk(["package", CHART, "-d", `${dir}/pkg`], options);
    assert.match(packaged, new RegExp(`${PACKAGE.replaceAll(".", "\\.")}`));
    await timed(
      "helm push",
      () => helmOk(["push", `${dir}/pkg/${PACKAGE}`, `oci://${registry.url}/charts`, "--plain-http"], options),
    );
    await kubeOk(plane, "POST", "/api/v1/namespaces", { body: { metadata: { name: namespace } } });
    await timed("helm install from OCI", () =>
      helmOk([
        "install",
        "ankra-cloud-ccm",
        `oci://${registry.url}/charts/ankra-cloud-ccm`,
        "--version",
        denoJson.version,
        "--plain-http",
        "-n",
        namespace,
        "--set",
        `api.token=${TEST_TOKEN}`,
      ], options));
    assert.deepEqual(await installed(namespace, options), {
      chart: `ankra-cloud-ccm-${denoJson.version}`,
      appVersion: VERSION,
    });
  } finally {
    const uninstall = await helm(["uninstall", "ankra-cloud-ccm", "-n", namespace], options);
    if (uninstall.code !== 0 && !/not found/.test(uninstall.text)) console.log(uninstall.text);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the chart served as a Helm repository installs with the documented repo add, repo update, install", async () => {
  const plane = testControlPlane();
  const dir = await Deno.makeTempDir({ prefix: "ccm-chart-repo-" });
  const charts = `${dir}/site/charts`;
  await Deno.mkdir(charts, { recursive: true });
  const kubeconfig = { KUBECONFIG: plane.kubeconfigPath };
  // As a user's shell: KUBECONFIG in the environment, no --kubeconfig on the command lines.
  const user: ToolOptions = { env: { ...helmHomes(`${dir}/helm`), ...kubeconfig }, noKubeconfigFlag: true };
  const site = serveCharts(charts);
  try {
    await helmOk(["package", CHART, "-d", charts], user);
    await helmOk(["repo", "index", charts, "--url", site.url], user);
    const index = loadYaml(await Deno.readTextFile(`${charts}/index.yaml`)) as {
      entries: Record<string, { version: string; appVersion: string; urls: string[] }[]>;
    };
    assert.deepEqual(
      index.entries["ankra-cloud-ccm"].map((e) => [e.version, e.appVersion, e.urls]),
      [[denoJson.version, VERSION, [`${site.url}/${PACKAGE}`]]],
    );

    // The documentation's three commands, the repository URL being the only change.
    await helmOk(["repo", "add", "ankra", site.url], user);
    await helmOk(["repo", "update"], user);
    await timed("helm install from the repository", () =>
      helmOk([
        "install",
        "ankra-cloud-ccm",
        "ankra/ankra-cloud-ccm",
        "-n",
        "kube-system",
        "--set",
        `api.token=${TEST_TOKEN}`,
      ], user));

    assert.deepEqual(await installed("kube-system", user), {
      chart: `ankra-cloud-ccm-${denoJson.version}`,
      appVersion: VERSION,
    });
    assert.ok(site.requested.includes("/charts/index.yaml"), site.requested.join(", "));
    assert.ok(site.requested.includes(`/charts/${PACKAGE}`), "the package came from the repository");
    const secret = await kubeOk<{ data: { token: string } }>(
      plane,
      "GET",
      "/api/v1/namespaces/kube-system/secrets/ankra-cloud-ccm",
    );
    assert.equal(atob(secret.data.token), TEST_TOKEN);
  } finally {
    const uninstall = await helm(["uninstall", "ankra-cloud-ccm", "-n", "kube-system"], user);
    if (uninstall.code !== 0 && !/not found/.test(uninstall.text)) console.log(uninstall.text);
    await site.server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
