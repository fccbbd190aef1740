/**
 * One version for the release: `version` in deno.json. Everything that shows a version takes it from there — the
 * binary (lib/version.ts), the chart's `version` and `appVersion` (the image tag the chart installs), the plain
 * manifest, the image's tag and the release artifacts' names — and these tests fail when one of them drifts.
 * Where a version is derived (scripts/build.sh, scripts/image/build_image.ts, the chart's image reference), the
 * derivation itself runs and its output is checked, rather than its source text matched.
 */
import assert from "node:assert/strict";
import { load as loadYaml } from "js-yaml";
import denoJson from "../../deno.json" with { type: "json" };
import { VERSION } from "../../lib/version.ts";
import { MANIFEST_PATH } from "../../scripts/render_manifest.ts";
import { helmHomes, toolPath } from "../support/chart/helm.ts";
import { imageConfig, writeImageIndex } from "../../scripts/image/build_image.ts";
import {
  createLayout,
  findReference,
  MEDIA_TYPE_CONFIG,
  MEDIA_TYPE_MANIFEST,
  readJsonBlob,
  writeJsonBlob,
} from "../../scripts/image/oci_layout.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const read = (path: string) => Deno.readTextFile(`${ROOT}${path}`);

Deno.test("deno.json's version is semantic and lib/version.ts is v + it", () => {
  assert.match(denoJson.version, /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
  assert.equal(VERSION, `v${denoJson.version}`);
});

Deno.test("the chart's version is deno.json's and its appVersion, the image tag it installs, is v + it", async () => {
  const chart = loadYaml(await read("chart/Chart.yaml")) as { version: string; appVersion: string; name: string };
  assert.equal(chart.name, "ankra-cloud-ccm");
  assert.equal(chart.version, denoJson.version, "chart/Chart.yaml version");
  assert.equal(chart.appVersion, VERSION, "chart/Chart.yaml appVersion");
  const values = loadYaml(await read("chart/values.yaml")) as { image: { tag: string } };
  assert.equal(values.image.tag, "", "no tag in values.yaml: the image tag is the chart's appVersion");
  assert.deepEqual(await renderedImages([]), [`share.ankra.cloud/library/ankra-cloud-ccm:${VERSION}`]);
  assert.deepEqual(
    await renderedImages(["--set", "image.tag=v9.9.9"]),
    ["share.ankra.cloud/library/ankra-cloud-ccm:v9.9.9"],
    "a tag the user sets wins over the appVersion",
  );
});

/** The container images of the chart as `helm template` renders it with `args` (helm from the test binaries). */
async function renderedImages(args: string[]): Promise<string[]> {
  const homes = await Deno.makeTempDir({ prefix: "version-test-helm-" });
  try {
    const output = await new Deno.Command(toolPath("helm"), {
      args: ["template", "t", `${ROOT}chart`, "--set", "api.token=x", ...args],
      env: helmHomes(homes),
      stdout: "piped",
      stderr: "piped",
    }).output().catch((cause) => {
      throw new Error(`helm is needed to render the chart (${cause}): run the tests with scripts/run_tests.ts`);
    });
    assert.ok(output.success, new TextDecoder().decode(output.stderr));
    return [...new TextDecoder().decode(output.stdout).matchAll(/^\s+image: "?([^"\s]+)"?$/gm)].map((m) => m[1]);
  } finally {
    await Deno.remove(homes, { recursive: true });
  }
}

Deno.test("the plain manifest carries the version's image, chart label and header", async () => {
  const manifest = await read(MANIFEST_PATH);
  assert.match(manifest, new RegExp(`^# ankra-cloud-ccm ${VERSION} `));
  const images = [...manifest.matchAll(/image: "([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(images, [`share.ankra.cloud/library/ankra-cloud-ccm:${VERSION}`]);
  const chartLabels = new Set([...manifest.matchAll(/helm\.sh\/chart: (\S+)/g)].map((m) => m[1]));
  assert.deepEqual([...chartLabels], [`ankra-cloud-ccm-${denoJson.version}`]);
  const versionLabels = new Set([...manifest.matchAll(/app\.kubernetes\.io\/version: "([^"]+)"/g)].map((m) => m[1]));
  assert.deepEqual([...versionLabels], [VERSION]);
});

Deno.test("the image builder tags the index it writes, and labels each image, with lib/version.ts's VERSION", async () => {
  const layout = await Deno.makeTempDir({ prefix: "version-test-layout-" });
  try {
    await createLayout(layout);
    const facts = { revision: "0123abc", sourceDateEpoch: 1_704_067_200 };
    const platform = { architecture: "amd64", os: "linux" };
    const config = imageConfig({ platform, layers: [], debianPackages: "libc6=2.36", denoVersion: "2.9.6" }, facts);
    const configBlob = await writeJsonBlob(layout, MEDIA_TYPE_CONFIG, config);
    const manifest = await writeJsonBlob(layout, MEDIA_TYPE_MANIFEST, {
      schemaVersion: 2,
      config: configBlob,
      layers: [],
    });
    const written = await writeImageIndex(layout, [{ ...manifest, platform }], facts);
    // What skopeo, the image tests and a chart install resolve: the layout's tag, read back from disk.
    const tagged = await findReference(layout, VERSION);
    assert.equal(tagged.digest, written.digest);
    const index = await readJsonBlob<{ annotations: Record<string, string> }>(layout, tagged.digest);
    assert.equal(index.annotations["org.opencontainers.image.version"], VERSION);
    const labels = (config.config as { Labels: Record<string, string> }).Labels;
    assert.equal(labels["org.opencontainers.image.version"], VERSION);
  } finally {
    await Deno.remove(layout, { recursive: true });
  }
});

Deno.test("scripts/build.sh names the release artifacts with lib/version.ts's VERSION", async () => {
  const script = await read("scripts/build.sh");
  const line = script.split("\n").find((l) => /^version="\$\(/.test(l));
  assert.ok(line, 'scripts/build.sh sets version="$(…)"');
  const output = await new Deno.Command("bash", {
    args: ["-c", `set -euo pipefail; ${line}; printf '%s' "$version"`],
    cwd: ROOT,
    env: { PATH: `${Deno.execPath().replace(/\/[^/]+$/, "")}:${Deno.env.get("PATH") ?? ""}` },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(output.success, new TextDecoder().decode(output.stderr));
  assert.equal(new TextDecoder().decode(output.stdout), VERSION, "the version build.sh computes");
  assert.match(script, /base="\$name-\$version-linux-\$arch"/, "artifacts are <name>-<version>-linux-<arch>");
  assert.match(script, /for name in ankra-cloud-ccm ankra-cloud-simulator; do/);
});
