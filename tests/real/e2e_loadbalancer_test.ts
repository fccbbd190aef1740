/**
 * Kubernetes' own LoadBalancer e2e tests (`e2e.test --provider=skeleton --ginkgo.focus='\[Feature:LoadBalancer\]'`,
 * built by scripts/e2e_binaries.sh from k8s.io/kubernetes at scripts/versions.sh's KUBERNETES_VERSION) against the real
 * two-node cluster (tests/support/real_cluster/real_cluster.ts), run from the host, which reaches the published
 * addresses. Skipped are only the tests the Ankra API cannot pass, each named with its reason and source line
 * (tests/support/real_cluster/real_cluster_e2e.ts); the closing line is `N ran, N passed, N failed, N skipped`, and the
 * JUnit report is kept (its path is printed).
 *
 * A test failing because of the product today is a strict expected failure with the product change that would fix it
 * (`KNOWN_PRODUCT_GAPS`, printed as such); any other failure, or a known gap that passes, fails the run. The README's
 * test command leaves the two rolling-update tests (about 10 minutes each) to `deno task e2e` (`E2E_ALL=1`), reporting
 * them as skipped with that reason; `E2E_FOCUS=<regex>` narrows a run to the tests whose
 * names match.
 *
 * The suite runs twice, each time on a fresh cluster: with the Services on Ankra load balancers (the default mode), and
 * with the controller started with `--default-load-balancer-mode=node-addresses` (the Services on the nodes' own
 * addresses: there nothing is skipped for want of UDP, source ranges or NodePorts). `E2E_MODES=load-balancer` (or
 * `node-addresses`) runs one. Needs what the real cluster needs; without it the test is ignored and says why.
 */
import assert from "node:assert/strict";
import { startProcess } from "../support/control_plane/control_plane.ts";
import { timed } from "../support/chart/helm.ts";
import { startRealCluster } from "../support/real_cluster/real_cluster.ts";
import {
  e2eArgs,
  type E2eMode,
  e2eSummary,
  knownGap,
  readJunit,
  skipReason,
  suiteChanges,
  unexpectedOutcomes,
} from "../support/real_cluster/real_cluster_e2e.ts";
import { readClusterFacts, realClusterBlockers } from "../support/real_cluster/real_cluster_host.ts";
import { readHostFacts } from "../support/real_node/real_node_host.ts";

const blockers = realClusterBlockers(await readClusterFacts(readHostFacts()));
if (blockers.length > 0) console.log(`LoadBalancer e2e test ignored: ${blockers.join("; ")}`);

/** Where the reports are kept: `E2E_REPORT_DIR`, else beside the other caches. */
const REPORTS = Deno.env.get("E2E_REPORT_DIR") ??
  `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/ankra-cloud-ccm/e2e-reports`;

/**
 * One run of the LoadBalancer e2e tests against a fresh real cluster whose controller serves the tests' Services in
 * `mode`.
 */
async function e2eRun(mode: E2eMode): Promise<void> {
  const controllerArgs = mode === "node-addresses" ? ["--default-load-balancer-mode=node-addresses"] : [];
  const cluster = await timed(`real cluster start (${mode})`, () => startRealCluster({ controllerArgs }));
  const reportDir = `${REPORTS}/${new Date().toISOString().replace(/[:.]/g, "-")}-${mode}`;
  let leftovers: string[] = [];
  let cases: ReturnType<typeof readJunit> = [];
  try {
    await Deno.mkdir(reportDir, { recursive: true });
    const args = e2eArgs({
      kubeconfig: cluster.plane.kubeconfigPath,
      kubectlPath: cluster.kubectlPath,
      reportDir,
      narrow: Deno.env.get("E2E_FOCUS") || undefined,
      all: Deno.env.get("E2E_ALL") === "1",
      mode,
    });
    const log = `${reportDir}/e2e.log`;
    const started = performance.now();
    const run = startProcess(`${cluster.e2eBinaries}/e2e.test`, args, log);
    const status = await run.status;
    console.log(
      `e2e.test (${mode}) exited ${status.code} after ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
    cases = readJunit(await Deno.readTextFile(`${reportDir}/junit_loadbalancer.xml`));
    for (const c of cases) {
      const mark = c.status === "passed" ? "✓" : c.status === "failed" ? "✗" : "-";
      console.log(`${mark} ${c.name} (${c.seconds.toFixed(0)} s)${c.status === "failed" ? `\n    ${c.message}` : ""}`);
      if (c.status === "skipped") console.log(`    skipped: ${skipReason(c, mode)}`);
      if (knownGap(c, mode)) console.log(`    ${knownGap(c, mode)}`);
    }
    console.log(`LoadBalancer e2e (${mode} mode): ${e2eSummary(cases)} (JUnit report and log in ${reportDir})`);
    if (unexpectedOutcomes(cases, mode).length > 0) {
      console.error(`--- e2e.test log (end)\n${(await Deno.readTextFile(log)).split("\n").slice(-80).join("\n")}`);
      console.error(await cluster.logs(30));
    }
  } finally {
    leftovers = await cluster.stop();
  }
  assert.ok(cases.length > 0, `the e2e run reported no LoadBalancer test: see ${reportDir}/e2e.log`);
  assert.deepEqual(suiteChanges(cases.map((c) => c.name)), [], "the LoadBalancer e2e suite changed upstream");
  assert.deepEqual(unexpectedOutcomes(cases, mode), [], `LoadBalancer e2e (${mode} mode): unexpected outcomes`);
  assert.deepEqual(leftovers, [], "the real cluster left things behind on the host");
}

/** `E2E_MODES`: the modes to run (comma-separated; default both). */
const MODES = (Deno.env.get("E2E_MODES") ?? "load-balancer,node-addresses").split(",").map((m) => m.trim());

Deno.test({
  name: "Kubernetes' LoadBalancer e2e tests pass against the controller on a real two-node cluster",
  ignore: blockers.length > 0 || !MODES.includes("load-balancer"),
  sanitizeResources: false,
  sanitizeOps: false,
}, () => e2eRun("load-balancer"));

Deno.test({
  name: "Kubernetes' LoadBalancer e2e tests pass again with the Services served on the nodes' own addresses",
  ignore: blockers.length > 0 || !MODES.includes("node-addresses"),
  sanitizeResources: false,
  sanitizeOps: false,
}, () => e2eRun("node-addresses"));
