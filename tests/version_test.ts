/**
 * One version for the release: `version` in deno.json. Everything that shows a version takes it from there — the
 * binary (lib/version.ts), the chart's `version` and `appVersion` (the image tag the chart installs), the plain
 * manifest, the image's tag and the release artifacts' names — and these tests fail when one of them drifts.
 * Where a version is derived (scripts/build.sh, scripts/image/build_image.ts, the chart's image reference), the
 * derivation itself is checked rather than re-implemented.
 */
import assert from "node:assert/strict";
import { load as loadYaml } from "js-yaml";
import denoJson from "../deno.json" with { type: "json" };
import { VERSION } from "../lib/version.ts";
import { MANIFEST_PATH } from "../scripts/render_manifest.ts";

const ROOT = new URL("..", import.meta.url).pathname;
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
  assert.match(
    await read("chart/templates/deployment.yaml"),
    /image: "\{\{ \.Values\.image\.repository \}\}:\{\{ \.Values\.image\.tag \| default \.Chart\.AppVersion \}\}"/,
  );
});

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

Deno.test("the image is tagged with lib/version.ts's VERSION", async () => {
  const source = await read("scripts/image/build_image.ts");
  assert.match(source, /import \{ VERSION \} from "\.\.\/\.\.\/lib\/version\.ts";/);
  assert.match(
    source,
    /annotations: \{ \[ANNOTATION_REF_NAME\]: VERSION \}/,
    "build_image.ts names the index by VERSION (tests/integration/deploy_test.ts resolves the chart's tag in a build)",
  );
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
