/**
 * The fast tier: every test that needs no Kubernetes API server, no process of the simulator or the controller, no
 * release build and no root — the pure rules, the clients against the in-process simulator, the controllers' pieces —
 * run in parallel, ending with `N passed, N failed` like the whole suite (`deno task test`, which runs these too).
 *
 *     deno task test:unit [extra deno test arguments, e.g. --filter]
 *
 * @module
 */
import { countJunit, type TestCounts } from "./run_tests.ts";

/** Directories and files of the fast tier (relative to the repository). */
export const UNIT_TESTS: readonly string[] = ["tests/unit/"];

if (import.meta.main) {
  const root = new URL("../", import.meta.url).pathname;
  const started = performance.now();
  const junit = await Deno.makeTempFile({ prefix: "ccm-unit-junit-", suffix: ".xml" });
  const command = new Deno.Command(Deno.execPath(), {
    args: ["test", "--allow-all", "--parallel", `--junit-path=${junit}`, ...Deno.args, ...UNIT_TESTS],
    cwd: root,
    env: { DENO_JOBS: String(navigator.hardwareConcurrency) },
  });
  const { code } = await command.spawn().status;
  let counts: TestCounts = { passed: 0, failed: 0, skipped: 0 };
  try {
    counts = countJunit(await Deno.readTextFile(junit));
  } catch {
    console.error("no JUnit report was written: the test run did not finish");
  }
  await Deno.remove(junit).catch(() => {});
  if (code !== 0 && counts.failed === 0) counts.failed = 1;
  console.log(`unit tier wall time: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  console.log(`${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ""}`);
  Deno.exit(code !== 0 ? code : counts.failed > 0 ? 1 : 0);
}
