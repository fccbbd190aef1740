/**
 * The controller's image for tests that run pods as a kubelet would: built once per test module from this checkout
 * (`scripts/build.sh --no-compile`, then `scripts/image/build_image.ts`, about 30 s on two cores) into a temporary
 * OCI layout, or taken from `CCM_TEST_IMAGE_LAYOUT` (e.g. `dist/image` after `deno task image`) when set. An image
 * reference from a pod spec is resolved by its tag in that layout, unpacked for this machine's architecture and run
 * with runc, crun or the chroot fallback (tests/support/image/image_runtime.ts).
 *
 * Needs root (unpacking keeps owners; the runtimes make namespaces) and runc, crun or unshare+chroot.
 *
 * @module
 */
import { findReference } from "../../../scripts/image/oci_layout.ts";
import { type ImageConfig, unpackImage } from "../../../scripts/image/unpack_image.ts";
import { pickRuntime, type RuntimeKind } from "./image_runtime.ts";
import { VERSION } from "../../../lib/version.ts";
import { testControlPlane } from "../control_plane/control_plane.ts";
import { suiteRelease } from "./release_build.ts";

const ROOT = new URL("../../..", import.meta.url).pathname;

/** An image unpacked into a runtime bundle, ready for `startInImage`. */
export interface UnpackedTestImage {
  /** The image reference it was resolved from. */
  reference: string;
  /** The runtime bundle (config.json is rewritten per run). */
  bundle: string;
  /** The image configuration (entrypoint, env, user). */
  config: ImageConfig;
  /** How it is run here. */
  runtime: RuntimeKind;
}

let layoutPromise: Promise<string> | undefined;
const unpacked = new Map<string, Promise<UnpackedTestImage>>();
let workDir: string | undefined;

function tempRoot(): string {
  if (!workDir) {
    const dir = Deno.makeTempDirSync({ prefix: "ccm-test-image-" });
    Deno.chmodSync(dir, 0o755);
    workDir = dir;
    globalThis.addEventListener("unload", () => {
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch { /* already gone */ }
    });
  }
  return workDir;
}

async function run(command: string, args: string[]): Promise<void> {
  const output = await new Deno.Command(command, { args, cwd: ROOT, stdout: "piped", stderr: "piped" }).output();
  if (!output.success) {
    const decoder = new TextDecoder();
    throw new Error(
      `${command} ${args.join(" ")} failed (${output.code}):\n${decoder.decode(output.stdout)}` +
        decoder.decode(output.stderr),
    );
  }
}

/** Throws, saying what to do, unless this process can unpack and run images. */
export function requireImageRuntime(): void {
  if (Deno.uid() !== 0) {
    throw new Error("running the image as a kubelet would needs root (as CI runs the tests): run this test as root");
  }
}

/**
 * The OCI layout holding the image tagged {@linkcode VERSION}: `CCM_TEST_IMAGE_LAYOUT`, else built once per test run
 * from the run's release ({@linkcode suiteRelease}) into the test control plane's directory, shared by every test
 * file that runs the image.
 */
export function testImageLayout(): Promise<string> {
  layoutPromise ??= (async () => {
    const given = Deno.env.get("CCM_TEST_IMAGE_LAYOUT");
    if (given) return given;
    const dest = `${testControlPlane().dir}/image`;
    try {
      if ((await Deno.stat(`${dest}/index.json`)).isFile) return dest;
    } catch { /* not built yet in this run */ }
    const release = await suiteRelease();
    const stage = await Deno.makeTempDir({ dir: testControlPlane().dir, prefix: "image-" });
    const started = performance.now();
    await run(Deno.execPath(), [
      "run",
      "--allow-all",
      "scripts/image/build_image.ts",
      `--dist=${release}`,
      `--out=${stage}/image`,
    ]);
    try {
      await Deno.rename(`${stage}/image`, dest);
    } catch {
      // Another test file of this run finished the same build first: keep that one.
    }
    await Deno.remove(stage, { recursive: true });
    console.log(`image ${VERSION} built for the test run: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return dest;
  })();
  return layoutPromise;
}

/** The tag of an image reference (`repository:tag`, or `repository:tag@digest`); throws without one. */
export function imageTag(reference: string): string {
  const withoutDigest = reference.split("@")[0];
  const slash = withoutDigest.lastIndexOf("/");
  const colon = withoutDigest.lastIndexOf(":");
  if (colon <= slash) throw new Error(`image ${reference} has no tag: the chart always renders one`);
  return withoutDigest.slice(colon + 1);
}

/** The repository of an image reference (without tag or digest). */
export function imageRepository(reference: string): string {
  const withoutDigest = reference.split("@")[0];
  return withoutDigest.slice(0, withoutDigest.length - imageTag(reference).length - 1);
}

/**
 * Resolves `reference` by its tag in the test layout — as a kubelet pulls it — and unpacks this machine's
 * architecture (once per tag).
 *
 * @throws when the layout has no such tag (the pod spec names an image this checkout does not build).
 */
export function imageFor(reference: string): Promise<UnpackedTestImage> {
  const tag = imageTag(reference);
  let found = unpacked.get(tag);
  if (!found) {
    found = (async () => {
      const layout = await testImageLayout();
      await findReference(layout, tag).catch((cause) => {
        throw new Error(`the image ${reference} is not built here: ${layout} has no tag ${tag} (${cause})`);
      });
      const bundle = `${tempRoot()}/bundle-${tag}`;
      const architecture = Deno.build.arch === "aarch64" ? "arm64" : "amd64";
      const image = await unpackImage(layout, bundle, { ref: tag, architecture });
      const runtime = await pickRuntime(bundle, image.config, `ankra-cloud-ccm ${tag}`);
      console.log(
        `image runtime: ${runtime.kind}` + (runtime.notes.length ? ` (not used: ${runtime.notes.join("; ")})` : ""),
      );
      return { reference, bundle, config: image.config, runtime: runtime.kind };
    })();
    unpacked.set(tag, found);
  }
  return found;
}
