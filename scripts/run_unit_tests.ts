/**
 * The fast tier: every test that needs no Kubernetes API server, no process of the simulator or the controller, no
 * release build and no root — the pure rules, the clients against the in-process simulator, the controllers' pieces —
 * run in parallel, ending with `N passed, N failed` like the whole suite (`deno task test`, which runs these too).
 * The runtime keeps the promise: the tier runs with {@linkcode UNIT_TEST_PERMISSIONS} — no process may be started, no
 * native code loaded, and the network is loopback only (the in-process simulator and fake API servers).
 *
 *     deno task test:unit [extra deno test arguments, e.g. --filter]
 *
 * @module
 */
import { countJunit, describeFailures, type TestCounts } from "./junit_counts.ts";

/** Directories and files of the fast tier (relative to the repository). */
export const UNIT_TESTS: readonly string[] = ["tests/unit/"];

/**
 * The fast tier's Deno permissions: files, environment and system facts as tests need them, the network on loopback
 * alone, and neither processes nor native code (`--deny-run`, `--deny-ffi`: a test that starts one fails with
 * `NotCapable`, and belongs in tests/integration/).
 */
export const UNIT_TEST_PERMISSIONS: readonly string[] = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-sys",
  "--allow-net=127.0.0.1,localhost,[::1]",
  "--deny-run",
  "--deny-ffi",
  "--no-prompt",
];

/** The `deno test` arguments of the fast tier, writing its JUnit report to `junit`. */
export function unitTestArgs(junit: string, extra: readonly string[] = []): string[] {
  return ["test", ...UNIT_TEST_PERMISSIONS, "--parallel", `--junit-path=${junit}`, ...extra, ...UNIT_TESTS];
}

if (import.meta.main) {
  const root = new URL("../", import.meta.url).pathname;
  const started = performance.now();
  const junit = await Deno.makeTempFile({ prefix: "ccm-unit-junit-", suffix: ".xml" });
  const command = new Deno.Command(Deno.execPath(), {
    args: unitTestArgs(junit, Deno.args),
    cwd: root,
    env: { DENO_JOBS: String(navigator.hardwareConcurrency) },
  });
  const { code } = await command.spawn().status;
  let counts: TestCounts = { passed: 0, failed: 0, skipped: 0, failures: [] };
  try {
    counts = countJunit(await Deno.readTextFile(junit));
  } catch {
    console.error("no JUnit report was written: the test run did not finish");
  }
  await Deno.remove(junit).catch(() => {});
  if (code !== 0 && counts.failed === 0) counts.failed = 1;
  console.log(`unit tier wall time: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  if (counts.failures.length > 0) console.log(`failed:\n${describeFailures(counts.failures)}`);
  console.log(`${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ""}`);
  Deno.exit(code !== 0 ? code : counts.failed > 0 ? 1 : 0);
}
