/**
 * The program every benchmark measures: the release bundle (`deno bundle --minify` of main.ts, as `deno task release`
 * and the image ship it), built fresh into a temporary directory — or `BENCH_MAIN` when set.
 *
 * @module
 */

/** The path of the program to run: `BENCH_MAIN`, else a freshly built release bundle. */
export async function releaseBundle(): Promise<string> {
  const given = Deno.env.get("BENCH_MAIN");
  if (given) return given;
  const out = `${await Deno.makeTempDir()}/ankra-cloud-ccm.js`;
  const main = new URL("../main.ts", import.meta.url).pathname;
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--minify", "--platform=deno", "-o", out, main],
    stdout: "null",
    stderr: "inherit",
  }).output();
  if (!result.success) throw new Error("deno bundle failed");
  return out;
}

/**
 * The launcher of the release tarball for this machine's architecture (`bin/ankra-cloud-ccm`, which runs the bundle
 * on the pinned Deno runtime with the release's V8 flags and allocator settings): `BENCH_LAUNCHER` when set, else
 * built here with `scripts/build.sh --no-compile` into a temporary directory and unpacked.
 */
export async function releaseLauncher(): Promise<string> {
  const given = Deno.env.get("BENCH_LAUNCHER");
  if (given) return given;
  const out = await Deno.makeTempDir({ prefix: "ccm-release-" });
  const build = await new Deno.Command("bash", {
    args: [new URL("../scripts/build.sh", import.meta.url).pathname, "--no-compile", "--out", out],
    stdout: "null",
    stderr: "inherit",
  }).output();
  if (!build.success) throw new Error("scripts/build.sh failed: see its output above");
  const arch = Deno.build.arch === "aarch64" ? "arm64" : "amd64";
  const tarball = [...Deno.readDirSync(out)].map((e) => e.name).find((name) =>
    name.startsWith("ankra-cloud-ccm-") && name.endsWith(`-linux-${arch}.tar.gz`)
  );
  if (!tarball) throw new Error(`scripts/build.sh made no ankra-cloud-ccm tarball for linux-${arch} in ${out}`);
  const unpack = await new Deno.Command("tar", { args: ["-xzf", `${out}/${tarball}`, "-C", out] }).output();
  if (!unpack.success) throw new Error(`cannot unpack ${out}/${tarball}`);
  return `${out}/${tarball.replace(/\.tar\.gz$/, "")}/bin/ankra-cloud-ccm`;
}
