/**
 * Runs the whole test suite (unit and integration) against one test control plane and prints the closing line
 * `N passed, N failed` (with `, N skipped` when tests were ignored) from Deno's JUnit report.
 *
 *     deno run -A scripts/run_tests.ts [extra deno test arguments, e.g. a file or --filter]
 *
 * @module
 */
import { runWithControlPlane } from "./control_plane_session.ts";

/** Counts from a Deno JUnit report. */
export interface TestCounts {
  /** Tests that passed. */
  passed: number;
  /** Tests that failed or errored. */
  failed: number;
  /** Tests that were ignored. */
  skipped: number;
}

/** Reads the totals of a Deno JUnit report (every test case, steps included). */
export function countJunit(xml: string): TestCounts {
  const cases = xml.match(/<testcase\b[\s\S]*?(?:\/>|<\/testcase>)/g) ?? [];
  let failed = 0;
  let skipped = 0;
  for (const testCase of cases) {
    if (/<failure\b|<error\b/.test(testCase)) failed++;
    else if (/<skipped\b/.test(testCase)) skipped++;
  }
  return { passed: cases.length - failed - skipped, failed, skipped };
}

if (import.meta.main) {
  const started = performance.now();
  const junit = await Deno.makeTempFile({ prefix: "ccm-junit-", suffix: ".xml" });
  const extra = Deno.args.length > 0 ? Deno.args : ["tests/"];
  const code = await runWithControlPlane([
    Deno.execPath(),
    "test",
    "--allow-all",
    `--junit-path=${junit}`,
    ...extra,
  ]);
  let counts: TestCounts = { passed: 0, failed: 0, skipped: 0 };
  try {
    counts = countJunit(await Deno.readTextFile(junit));
  } catch {
    console.error("no JUnit report was written: the test run did not finish");
  }
  await Deno.remove(junit).catch(() => {});
  if (code !== 0 && counts.failed === 0) counts.failed = 1;
  console.log(`test suite wall time: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  console.log(
    `${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ""}`,
  );
  Deno.exit(code !== 0 ? code : counts.failed > 0 ? 1 : 0);
}
