/**
 * Renders `deploy/ankra-cloud-ccm.yaml`, the plain manifest for `kubectl apply`: the Helm chart in `chart/` as
 *
 *     helm template ankra-cloud-ccm chart --namespace kube-system --set api.existingSecret=ankra-cloud-ccm
 *
 * (as the Go controller's repository made its manifest) after a short comment block saying what to do first.
 *
 *     deno run -A scripts/render_manifest.ts           write the file
 *     deno run -A scripts/render_manifest.ts --check   exit 1 when the checked-in file differs (blank lines ignored)
 *
 * helm is taken from `KUBEBUILDER_ASSETS`, else `PATH`, else `scripts/test_binaries.sh` (the pinned helm v4.3.1 the
 * tests use, built on first use).
 *
 * @module
 */
import { VERSION } from "../lib/version.ts";
import { isExecutable } from "../tests/support/control_plane/control_plane.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** The manifest, relative to the repository root. */
export const MANIFEST_PATH = "deploy/ankra-cloud-ccm.yaml";

/** The command that regenerates the manifest, for messages. */
export const RENDER_COMMAND = "deno run -A scripts/render_manifest.ts";

/** `helm` arguments that render the manifest's objects (run in the repository root). */
export const HELM_TEMPLATE_ARGS: readonly string[] = [
  "template",
  "ankra-cloud-ccm",
  "chart",
  "--namespace",
  "kube-system",
  "--set",
  "api.existingSecret=ankra-cloud-ccm",
];

/** The comment block above the rendered objects. */
export const MANIFEST_HEADER = [
  `# ankra-cloud-ccm ${VERSION} in kube-system, rendered from chart/ by \`${RENDER_COMMAND}\``,
  `# (helm ${HELM_TEMPLATE_ARGS.join(" ")}).`,
  "# Before applying it, create the Secret holding the Ankra Cloud API token:",
  "#   kubectl -n kube-system create secret generic ankra-cloud-ccm --from-literal=token=act_…",
  "# and run every kubelet with --cloud-provider=external (k3s: --disable-cloud-controller on the servers,",
  "# --kubelet-arg=cloud-provider=external on every node). The cluster name is kubernetes; for another one (unique",
  "# per Ankra account) install the chart with --set clusterName=<name>.",
].join("\n") + "\n";

/** Finds helm: `KUBEBUILDER_ASSETS`, then `PATH`, then the directory `scripts/test_binaries.sh` prints. */
export async function findHelm(): Promise<string> {
  const assets = Deno.env.get("KUBEBUILDER_ASSETS");
  if (assets && isExecutable(`${assets}/helm`)) return `${assets}/helm`;
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (dir && isExecutable(`${dir}/helm`)) return `${dir}/helm`;
  }
  const output = await new Deno.Command("bash", {
    args: [`${ROOT}scripts/test_binaries.sh`],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const dir = new TextDecoder().decode(output.stdout).trim().split("\n").pop();
  if (!output.success || !dir || !isExecutable(`${dir}/helm`)) {
    throw new Error("helm not found: put helm v4 on PATH or run `bash scripts/test_binaries.sh`");
  }
  return `${dir}/helm`;
}

/** What `helm` prints for `args` (run in the repository root); throws with helm's message when it fails. */
export async function helmTemplate(args: readonly string[], helm?: string): Promise<string> {
  const output = await new Deno.Command(helm ?? await findHelm(), {
    args: [...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  if (!output.success) throw new Error(`helm ${args.join(" ")} failed:\n${decoder.decode(output.stderr)}`);
  return decoder.decode(output.stdout);
}

/** The manifest's whole text: {@linkcode MANIFEST_HEADER} and what `helm template` prints. */
export async function renderManifest(helm?: string): Promise<string> {
  return MANIFEST_HEADER + (await helmTemplate(HELM_TEMPLATE_ARGS, helm)).replace(/^\n+/, "");
}

/** Whether two manifests are the same once blank lines are left out (as the Go project compared them). */
export function sameIgnoringBlankLines(a: string, b: string): boolean {
  const lines = (text: string) => text.split("\n").filter((line) => line.trim() !== "");
  const left = lines(a);
  const right = lines(b);
  return left.length === right.length && left.every((line, i) => line === right[i]);
}

/** How {@linkcode writeOrCheck} compares and what it says. */
export interface RenderedFile {
  /** The file, relative to the repository root. */
  path: string;
  /** Its rendered text. */
  rendered: string;
  /** Whether the file on disk still matches. */
  same(current: string, rendered: string): boolean;
  /** The error printed when it does not (with `--check`). */
  differs: string;
  /** What it was rendered from, for the success line. */
  source: string;
}

/** Writes a rendered file, or with `--check` in `args` exits 1 when the file on disk differs from it. */
export async function writeOrCheck(file: RenderedFile, args: readonly string[]): Promise<void> {
  const path = `${ROOT}${file.path}`;
  if (args.includes("--check")) {
    let current = "";
    try {
      current = await Deno.readTextFile(path);
    } catch { /* missing: differs */ }
    if (!file.same(current, file.rendered)) {
      console.error(file.differs);
      Deno.exit(1);
    }
    console.log(`${file.path} matches ${file.source}`);
  } else {
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, file.rendered);
    console.log(`wrote ${file.path}`);
  }
}

if (import.meta.main) {
  await writeOrCheck({
    path: MANIFEST_PATH,
    rendered: await renderManifest(),
    same: sameIgnoringBlankLines,
    differs: `${MANIFEST_PATH} differs from what the chart renders: run \`${RENDER_COMMAND}\``,
    source: "the chart",
  }, Deno.args);
}
