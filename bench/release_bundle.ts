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
