/**
 * Runs the whole test suite — the fast tier under its restricted permissions (scripts/run_unit_tests.ts), then the
 * integration and real tiers — against one test control plane of scripts/versions.sh's
 * `KUBERNETES_VERSION`, then the old-version tier (scripts/old_version_tier.ts) against a control plane of
 * `KUBERNETES_OLDEST_VERSION`, and prints the closing line `N passed, N failed` (with `, N skipped` when tests were
 * ignored) from Deno's JUnit reports, both tiers counted.
 *
 *     deno run -A scripts/run_tests.ts [extra deno test arguments, e.g. a file or --filter]
 *
 * The whole suite first builds (or finds cached) every binary its tests run (scripts/prepare_tests.ts), so no test's
 * clock counts a build. With arguments, only they run (against the current version); `OLD_VERSION_TIER=only` runs the
 * old-version tier alone.
 *
 * @module
 */
import { runWithControlPlane } from "./control_plane_session.ts";
import { OLD_VERSION_TESTS } from "./old_version_tier.ts";
import { kubernetesVersions } from "../tests/support/control_plane/versions.ts";
import { prepareTests } from "./prepare_tests.ts";
import { unitTestArgs } from "./run_unit_tests.ts";
import { countJunit, describeFailures, type TestCounts } from "./junit_counts.ts";

/**
 * Runs `deno test` over `paths` against a control plane of `kubernetesVersion` (default the current one), or the fast
 * tier (`"unit"`: no control plane, its own restricted permissions, in parallel).
 */
async function tier(
  paths: string[] | "unit",
  kubernetesVersion?: string,
): Promise<{ code: number; counts: TestCounts }> {
  const junit = await Deno.makeTempFile({ prefix: "ccm-junit-", suffix: ".xml" });
  const code = paths === "unit"
    ? (await new Deno.Command(Deno.execPath(), {
      args: unitTestArgs(junit),
      env: { DENO_JOBS: String(navigator.hardwareConcurrency) },
    }).spawn().status).code
    : await runWithControlPlane(
      [Deno.execPath(), "test", "--allow-all", `--junit-path=${junit}`, ...paths],
      { kubernetesVersion },
    );
  let counts: TestCounts = { passed: 0, failed: 0, skipped: 0, failures: [] };
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
  if (Deno.args.length === 0 && !oldOnly) {
    const t0 = performance.now();
    try {
      await prepareTests();
    } catch (error) {
      console.error(error instanceof Error ? error.message : error);
      console.log("0 passed, 1 failed");
      Deno.exit(1);
    }
    console.log(`prepared the test binaries in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  if (Deno.args.length === 0 && !oldOnly) {
    const t0 = performance.now();
    const unit = await tier("unit");
    runs.push({ name: "fast tier", ...unit, seconds: (performance.now() - t0) / 1000 });
  }
  if (!oldOnly) {
    const t0 = performance.now();
    const main = await tier(Deno.args.length > 0 ? Deno.args : ["tests/integration/", "tests/real/"]);
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
  const failures = runs.flatMap((r) => r.counts.failures);
  if (failures.length > 0) console.log(`failed:\n${describeFailures(failures)}`);
  console.log(`test suite wall time: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  console.log(`${total.passed} passed, ${total.failed} failed${total.skipped ? `, ${total.skipped} skipped` : ""}`);
  const failedCode = runs.find((r) => r.code !== 0)?.code;
  Deno.exit(failedCode ?? (total.failed > 0 ? 1 : 0));
}
