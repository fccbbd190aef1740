/**
 * Burst benchmark: how fast the controller serves many new LoadBalancer Services or Nodes at once, on the release
 * bundle with the release flags, against the real test control plane and an in-process Ankra Cloud simulator:
 *
 *     source scripts/env.sh && deno task bench:burst
 *
 * Per simulator rate limit (`BENCH_LIMITS`, default 3,600 and 120 requests/min), each scenario on a clean slate
 * (fresh simulator, fresh controller process, the previous scenario's objects gone):
 *
 * - `BENCH_SERVICES` (default 50,200) new LoadBalancer Services with two TCP ports each, created at once in a fresh
 *   namespace, with `BENCH_BASE_NODES` (5) Ready, initialised nodes: per Service the time from its creation to an
 *   address in its status, and from its load balancer turning `running` in the simulator to that address (target
 *   ≤ 3 s whatever the backlog);
 * - `BENCH_NODES` (default 1000) new kubelet-shaped Nodes (uninitialized taint, matching servers already in the
 *   simulator), created at once: time until each is initialised (providerID set, taint gone).
 *
 * For each: Ankra API calls by operation and answer status, calls per new load balancer, 429 answers (per minute),
 * progress per 30 s, total time, and the lower bound the limit forces (admitted calls ÷ limit). Prints a table per
 * limit and writes bench/burst_report.md (`BENCH_REPORT` for another path).
 *
 * Other knobs: `BENCH_MAIN` (program instead of the freshly built bundle), `BENCH_ENV` (JSON, extra controller
 * environment), `BENCH_ARGS` (extra controller flags, space-separated), `BENCH_DENO_FLAGS`, `BENCH_TIMEOUT_S` (per
 * scenario, default 900), `BENCH_LB_DELAY_MS` (default 1000), `BENCH_SETTLE_S` (calls also counted after the burst
 * was served, default 5), `BENCH_BASE_NODES`, `BENCH_KUBE_CONCURRENCY` (the harness's own requests in flight,
 * default 25), `BENCH_LOG_DIR` (controller logs and the simulator's request logs; a temporary directory by
 * default), `BENCH_COMMAND` (the command
 * line quoted in the report).
 *
 * The harness watches Services and Nodes (one LIST, then a watch) instead of polling, reads the simulator's request
 * log in-process, and sends its own apiserver requests over one HTTP client with bounded concurrency.
 *
 * The parts: settings and knobs (burst_settings.ts), the harness's apiserver access (burst_kube.ts), the simulator
 * and the controller process (burst_controller.ts), the objects (burst_objects.ts), the scenarios
 * (burst_scenarios.ts), the measurements (burst_measurements.ts) and the report (burst_report_text.ts).
 *
 * @module
 */
import { LIMITS, LOG_DIR, NODES, progress, REPORT, SERVICES } from "./burst_settings.ts";
import { http } from "./burst_kube.ts";
import { MAIN, running } from "./burst_controller.ts";
import { failed, type Result } from "./burst_measurements.ts";
import { nodesScenario, servicesScenario } from "./burst_scenarios.ts";
import { reportText, table } from "./burst_report_text.ts";

progress(`program ${MAIN}; controller logs in ${LOG_DIR}`);
const all = new Map<number, Result[]>();
for (const limit of LIMITS) {
  const results: Result[] = [];
  all.set(limit, results);
  const scenarios: (readonly [string, Result["kind"], number, () => Promise<Result>])[] = [
    ...SERVICES.map((n) => [`${n} Services`, "services", n, () => servicesScenario(limit, n)] as const),
    ...NODES.map((n) => [`${n} Nodes`, "nodes", n, () => nodesScenario(limit, n)] as const),
  ];
  for (const [scenario, kind, count, run] of scenarios) {
    try {
      results.push(await run());
    } catch (error) {
      progress(`limit ${limit}/min, ${scenario} FAILED: ${(error as Error).stack ?? error}`);
      results.push(failed(limit, scenario, kind, count, error as Error));
    }
  }
  console.log(table(limit, results).join("\n"));
}
http.close();
for (const child of running) child.kill("SIGKILL");

await Deno.writeTextFile(REPORT, await reportText(all));
progress(`report written to ${REPORT}`);
