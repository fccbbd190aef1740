/**
 * The release artifacts of this checkout (`scripts/build.sh --no-compile`, about 30 s on two cores), built once per
 * test run and shared by the test files that install them: the build goes into the test control plane's directory,
 * which lives as long as the run and is removed with it; or taken from `CCM_TEST_RELEASE_DIR` when set (e.g. `dist/`
 * after `deno task release`). Read-only to its users: unpack a tarball, never change it.
 *
 * @module
 */
import { testControlPlane } from "../control_plane/control_plane.ts";
import { VERSION } from "../../../lib/version.ts";

const ROOT = new URL("../../..", import.meta.url).pathname.replace(/\/$/, "");

let building: Promise<string> | undefined;

/** The directory holding this run's release artifacts (`SHA256SUMS`, the tarballs), built on first use. */
export function suiteRelease(): Promise<string> {
  building ??= (async () => {
    const given = Deno.env.get("CCM_TEST_RELEASE_DIR");
    if (given) return given;
    const dest = `${testControlPlane().dir}/release`;
    try {
      if ((await Deno.stat(`${dest}/SHA256SUMS`)).isFile) return dest;
    } catch { /* not built yet in this run */ }
    const stage = await Deno.makeTempDir({ dir: testControlPlane().dir, prefix: "release-" });
    const out = await new Deno.Command("bash", {
      args: [`${ROOT}/scripts/build.sh`, "--no-compile", "--out", stage],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      const decoder = new TextDecoder();
      await Deno.remove(stage, { recursive: true });
      throw new Error(
        `scripts/build.sh failed (${out.code}):\n${decoder.decode(out.stdout)}${decoder.decode(out.stderr)}`,
      );
    }
    await Deno.chmod(stage, 0o755);
    try {
      await Deno.rename(stage, dest);
    } catch {
      // Another test file of this run finished the same build first: keep that one.
      await Deno.remove(stage, { recursive: true });
    }
    return dest;
  })();
  return building;
}

/** The controller's release tarball for this machine's architecture, from {@linkcode suiteRelease}. */
export async function controllerTarball(): Promise<{ path: string; directory: string }> {
  const arch = Deno.build.arch === "x86_64" ? "amd64" : "arm64";
  const directory = `ankra-cloud-ccm-${VERSION}-linux-${arch}`;
  return { path: `${await suiteRelease()}/${directory}.tar.gz`, directory };
}

let unpacking: Promise<string> | undefined;

/**
 * The release launcher (`bin/ankra-cloud-ccm`) of this machine's tarball from {@linkcode suiteRelease}, unpacked once
 * per test run into the test control plane's directory: the program users install, runtime and flags included.
 */
export function releasedLauncher(): Promise<string> {
  unpacking ??= (async () => {
    const { path, directory } = await controllerTarball();
    const root = `${testControlPlane().dir}/installed`;
    const launcher = `${root}/${directory}/bin/ankra-cloud-ccm`;
    try {
      if ((await Deno.stat(launcher)).isFile) return launcher;
    } catch { /* not unpacked yet in this run */ }
    const stage = await Deno.makeTempDir({ dir: testControlPlane().dir, prefix: "installed-" });
    const untar = await new Deno.Command("tar", { args: ["-xzf", path, "-C", stage], stderr: "piped" }).output();
    if (!untar.success) throw new Error(`tar -xzf ${path} failed: ${new TextDecoder().decode(untar.stderr)}`);
    await Deno.chmod(stage, 0o755);
    try {
      await Deno.rename(stage, root);
    } catch {
      // Another test file of this run unpacked it first: keep that one.
      await Deno.remove(stage, { recursive: true });
    }
    return launcher;
  })();
  return unpacking;
}
