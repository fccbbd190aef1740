/**
 * The release bundle is one self-contained file: it runs from an empty Deno cache without fetching anything, and it
 * holds the controller only — none of the simulator's code.
 */
import assert from "node:assert/strict";
import { VERSION } from "../lib/version.ts";

Deno.test("the bundled program runs --version from an empty cache, offline, and holds no simulator code", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const bundle = await new Deno.Command(Deno.execPath(), {
      args: ["bundle", "--minify", "--platform=deno", "-o", `${dir}/ankra-cloud-ccm.js`, "main.ts"],
      cwd: new URL("..", import.meta.url).pathname,
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.ok(bundle.success, new TextDecoder().decode(bundle.stderr));
    const run = (args: string[]) =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-all", "--cached-only", `${dir}/ankra-cloud-ccm.js`, ...args],
        env: { DENO_DIR: `${dir}/empty-cache` },
        cwd: dir,
        stdout: "piped",
        stderr: "piped",
      }).output();
    const version = await run(["--version"]);
    assert.equal(new TextDecoder().decode(version.stdout), `ankra-cloud-ccm ${VERSION}\n`);
    const simulator = await run(["simulator", "--help"]);
    assert.equal(simulator.code, 2, "the controller has no simulator subcommand");
    const text = await Deno.readTextFile(`${dir}/ankra-cloud-ccm.js`);
    // Strings only the simulator carries: its control API, its fault names, its program name.
    for (const marker of ["/_simulator", "forget_answer", "ankra-cloud-simulator"]) {
      assert.ok(!text.includes(marker), `the production bundle contains simulator code (${JSON.stringify(marker)})`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
