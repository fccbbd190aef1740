/**
 * The release bundle is one self-contained file: it runs from an empty Deno cache without fetching anything.
 */
import assert from "node:assert/strict";
import { VERSION } from "../lib/version.ts";

Deno.test("the bundled program runs --version and the simulator's --help from an empty cache, offline", async () => {
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
    assert.match(new TextDecoder().decode(simulator.stdout), /local Ankra Cloud API/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
