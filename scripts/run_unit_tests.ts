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
export const UNIT_TESTS: readonly string[] = [
  "tests/cloud/",
  "tests/controllers/",
  "tests/doctor/",
  "tests/kube/",
  "tests/provider/",
  "tests/runtime/",
  "tests/server/",
  "tests/simulator/",
  "tests/config_test.ts",
  "tests/defaults_test.ts",
  "tests/go_syntax_test.ts",
  "tests/ip_address_test.ts",
  "tests/load_balancer_drift_flag_test.ts",
  "tests/runtime_permissions_test.ts",
  "tests/upstream_flags_test.ts",
];

/**
 * Test files under {@linkcode UNIT_TESTS} that belong to the slower tiers, each with why: they start a process of the
 * simulator (its command line is what they test).
 */
export const NOT_UNIT: Readonly<Record<string, string>> = {
  "tests/simulator/command_test.ts": "starts the simulator's process",
  "tests/simulator/data_plane_command_test.ts": "starts the simulator's process with a data plane",
};

if (import.meta.main) {
  const root = new URL("../", import.meta.url).pathname;
  const started = performance.now();
  const junit = await Deno.makeTempFile({ prefix: "ccm-unit-junit-", suffix: ".xml" });
  const ignore = `--ignore=${Object.keys(NOT_UNIT).join(",")}`;
  const command = new Deno.Command(Deno.execPath(), {
    args: ["test", "--allow-all", "--parallel", ignore, `--junit-path=${junit}`, ...Deno.args, ...UNIT_TESTS],
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
