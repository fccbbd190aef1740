/**
 * Runs the whole test suite (unit and integration) against one test control plane of scripts/versions.sh's
 * `KUBERNETES_VERSION`, then the old-version tier (scripts/old_version_tier.ts) against a control plane of
 * `KUBERNETES_OLDEST_VERSION`, and prints the closing line `N passed, N failed` (with `, N skipped` when tests were
 * ignored) from Deno's JUnit reports, both tiers counted.
 *
 *     deno run -A scripts/run_tests.ts [extra deno test arguments, e.g. a file or --filter]
 *
 * With arguments, only they run (against the current version); `OLD_VERSION_TIER=only` runs the old-version tier alone.
 *
 * @module
 */
import { runWithControlPlane } from "./control_plane_session.ts";
import { OLD_VERSION_TESTS } from "./old_version_tier.ts";
import { kubernetesVersions } from "../tests/support/versions.ts";

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

/** Runs `deno test` over `paths` against a control plane of `kubernetesVersion` (default the current one). */
async function tier(paths: string[], kubernetesVersion?: string): Promise<{ code: number; counts: TestCounts }> {
  const junit = await Deno.makeTempFile({ prefix: "ccm-junit-", suffix: ".xml" });
  const code = await runWithControlPlane(
    [Deno.execPath(), "test", "--allow-all", `--junit-path=${junit}`, ...paths],
    { kubernetesVersion },
  );
  let counts: TestCounts = { passed: 0, failed: 0, skipped: 0 };
  try {
    counts = countJunit(await Deno.readTextFile(junit));
  } catch {
    console.error("no JUnit report was written: the test run did not finish");
  }
  await Deno.remove(junit).catch(() => {});
  if (code !== 0 && counts.failed === 0) counts.failed = 1;
  return { code, counts };
}

if (import.meta.main) {
  const started = performance.now();
  const oldOnly = Deno.env.get("OLD_VERSION_TIER") === "only";
  const runs: { name: string; code: number; counts: TestCounts; seconds: number }[] = [];
  if (!oldOnly) {
    const t0 = performance.now();
    const main = await tier(Deno.args.length > 0 ? Deno.args : ["tests/"]);
    runs.push({ name: "current Kubernetes", ...main, seconds: (performance.now() - t0) / 1000 });
  }
  if (oldOnly || Deno.args.length === 0) {
    const t0 = performance.now();
    const version = (await kubernetesVersions()).oldest;
    console.error(`old-version tier: ${OLD_VERSION_TESTS.length} files against kube-apiserver ${version}`);
    const old = await tier([...OLD_VERSION_TESTS], version);
    runs.push({ name: `old-version tier (${version})`, ...old, seconds: (performance.now() - t0) / 1000 });
  }
  const total = runs.reduce((sum, r) => ({
    passed: sum.passed + r.counts.passed,
    failed: sum.failed + r.counts.failed,
    skipped: sum.skipped + r.counts.skipped,
  }), { passed: 0, failed: 0, skipped: 0 });
  for (const r of runs) {
    console.log(
      `${r.name}: ${r.counts.passed} passed, ${r.counts.failed} failed` +
        `${r.counts.skipped ? `, ${r.counts.skipped} skipped` : ""} in ${r.seconds.toFixed(1)} s`,
    );
  }
  console.log(`test suite wall time: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  console.log(`${total.passed} passed, ${total.failed} failed${total.skipped ? `, ${total.skipped} skipped` : ""}`);
  const failedCode = runs.find((r) => r.code !== 0)?.code;
  Deno.exit(failedCode ?? (total.failed > 0 ? 1 : 0));
}
