/**
 * The release bundle is one self-contained file: it runs from an empty Deno cache without fetching anything, and it
 * holds the controller only — no module of the simulator, the tests, the scripts or the benchmarks. Which modules a
 * bundle holds is read from its source map (the bundler lists every module that contributed code), so a renamed or
 * new simulator module is caught as well as the old ones.
 */
import assert from "node:assert/strict";
import { VERSION } from "../../lib/version.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** Folders of the repository whose code must never run in production. */
const NOT_FOR_PRODUCTION = ["simulator/", "tests/", "scripts/", "bench/"];

/**
 * Bundles `entry` as scripts/build.sh does (`deno bundle --minify --platform=deno`; the external source map
 * changes nothing in the program file) and returns the program and the repository-relative paths of its modules.
 */
async function bundle(entry: string, dir: string): Promise<{ program: string; modules: string[] }> {
  const program = `${dir}/${entry.replaceAll("/", "_")}.js`;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--minify", "--platform=deno", "--sourcemap=external", "-o", program, entry],
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(output.success, new TextDecoder().decode(output.stderr));
  const map = JSON.parse(await Deno.readTextFile(`${program}.map`)) as { sources: string[] };
  const modules = map.sources
    .map((source) => new URL(source, `file://${program}`).pathname)
    .filter((path) => path.startsWith(ROOT))
    .map((path) => path.slice(ROOT.length));
  return { program, modules };
}

/** The modules of `modules` that come from a folder whose code must never run in production. */
function nonProductionModules(modules: string[]): string[] {
  return modules.filter((path) => NOT_FOR_PRODUCTION.some((folder) => path.startsWith(folder)));
}

Deno.test("the bundled program runs --version from an empty cache, offline, and holds no simulator or test module", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { program, modules } = await bundle("main.ts", dir);
    assert.ok(modules.includes("main.ts") && modules.includes("lib/version.ts"), `modules read: ${modules.join(", ")}`);
    assert.deepEqual(nonProductionModules(modules), [], "the production bundle holds these non-production modules");
    const run = (args: string[]) =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-all", "--cached-only", program, ...args],
        env: { DENO_DIR: `${dir}/empty-cache` },
        cwd: dir,
        stdout: "piped",
        stderr: "piped",
      }).output();
    const version = await run(["--version"]);
    assert.equal(new TextDecoder().decode(version.stdout), `ankra-cloud-ccm ${VERSION}\n`);
    const simulator = await run(["simulator", "--help"]);
    assert.equal(simulator.code, 2, "the controller has no simulator subcommand");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the module check finds the simulator's modules in a bundle that holds them", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { modules } = await bundle("simulator/main.ts", dir);
    const found = nonProductionModules(modules);
    assert.ok(found.includes("simulator/main.ts"), `found: ${found.join(", ")}`);
    assert.ok(found.length > 5, `every simulator module is listed, not only the entry: ${found.join(", ")}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
