/**
 * Memory benchmark of the release artifact: what the kernel charges the controller process once its caches synced,
 * with Nodes shaped as a kubelet writes them and LoadBalancer Services in a real kube-apiserver — and where that
 * memory is: the cost of one more Node and one more Service, and the controller's structures by size.
 *
 *     source scripts/env.sh && deno task bench:memory
 *
 * The program measured is the release tarball's launcher (`scripts/build.sh --no-compile`, built here and unpacked;
 * `BENCH_LAUNCHER=<path to bin/ankra-cloud-ccm>` measures another build), so the V8 flags and allocator settings are
 * the ones that ship. Stages (cumulative, `BENCH_STAGES`, default `0:0,1:3,1000:1000,5000:1000`): an empty cluster, a
 * k3s single node with 3 Services, 1,000 Nodes + 1,000 Services, 5,000 Nodes. For each it reports, from
 * `/proc/<pid>/status`: VmRSS, RssAnon (private memory: what a memory cgroup is charged), RssFile (the mapped runtime,
 * shared and reclaimable) and VmHWM (the most the process ever held, its first lists included).
 *
 * Then, at each stage, a second run of the same runtime, flags and permissions on a bundle of this tree that keeps
 * its class names, with an inspector (bench/memory_runs.ts `measureHeap`; `BENCH_HEAP=0` skips it,
 * `BENCH_HEAP_BUNDLE` names another bundle): the JavaScript heap after a forced full collection and a heap snapshot,
 * from which the tables give the cost of one more Node and one more Service (from the stages' slopes) and the
 * retained size of each of the controller's structures (stores, indexes, work queues, event recorders, the service
 * pass's drains, the reporter's and the Ready condition's memory per Service, the cloud view, …).
 *
 * The tables are printed and written into bench/memory_report.md between the markers named by `BENCH_TABLE`
 * (default `release-<version>`, e.g. `release-v0.2.0`: one block per release, added at the end the first time; `none`
 * writes nothing), so the report's text and its other tables stay.
 *
 * @module
 */
import { testControlPlane } from "../tests/support/control_plane/control_plane.ts";
import { ensureObjects } from "./memory_objects.ts";
import { measureHeap, measureRelease, namedBundle } from "./memory_runs.ts";
import { kindsTable, objectCostTable, type StageResult, stagesTable, structuresTable } from "./memory_tables.ts";
import { releaseLauncher } from "./release_bundle.ts";
import { VERSION } from "../lib/version.ts";

const LAUNCHER = await releaseLauncher();
const HEAP_BUNDLE = Deno.env.get("BENCH_HEAP") === "0" ? undefined : await namedBundle();
const plane = testControlPlane();

const stages = (Deno.env.get("BENCH_STAGES") ?? "0:0,1:3,1000:1000,5000:1000").split(",").map((s) =>
  s.split(":").map(Number) as [number, number]
);
const results: StageResult[] = [];
const mib = (kib: number) => (kib / 1024).toFixed(1);
for (const [nodes, services] of stages) {
  console.error(`stage: ${nodes} nodes, ${services} services: creating objects`);
  await ensureObjects(plane, nodes, services);
  console.error(`stage: ${nodes} nodes, ${services} services: measuring the release`);
  const release = await measureRelease(LAUNCHER, plane);
  const synced = /nodes=(\d+) services=(\d+) seconds=([\d.]+)/.exec(release.syncLine);
  const result: StageResult = { nodes, services, syncSeconds: synced ? Number(synced[3]) : undefined, release };
  console.error(
    `stage: ${nodes} + ${services}: RssAnon ${mib(release.RssAnon)} MiB, VmRSS ${mib(release.VmRSS)} MiB ` +
      `(${release.syncLine})`,
  );
  if (HEAP_BUNDLE) {
    console.error(`stage: ${nodes} nodes, ${services} services: heap snapshot`);
    result.heap = await measureHeap(LAUNCHER, HEAP_BUNDLE, plane);
    console.error(
      `stage: ${nodes} + ${services}: heap after GC ${(result.heap.heapUsed / 1048576).toFixed(2)} MiB, ` +
        `inspected process RssAnon ${mib(result.heap.process.RssAnon)} MiB`,
    );
  }
  results.push(result);
}

/** The commit measured when the launcher was built here from this checkout (`+` when files differ from it). */
async function checkoutCommit(): Promise<string | undefined> {
  if (Deno.env.get("BENCH_LAUNCHER")) return undefined;
  const git = (...args: string[]) =>
    new Deno.Command("git", { args, stdout: "piped", stderr: "null" }).output().then((o) =>
      o.success ? new TextDecoder().decode(o.stdout).trim() : undefined
    );
  const commit = await git("rev-parse", "--short", "HEAD");
  const changed = await git("status", "--porcelain", "--", "lib", "main.ts", "deno.json");
  return commit && `${commit}${changed ? "+" : ""}`;
}
const COMMIT = await checkoutCommit();

const table = Deno.env.get("BENCH_TABLE") ?? `release-${VERSION}`;
const heapNote = HEAP_BUNDLE
  ? "Heap columns and tables: the same runtime and flags on a bundle that keeps class names, with an inspector, " +
    "after a forced full collection (bench/memory_runs.ts)."
  : "No heap run (`BENCH_HEAP=0`).";
const block = [
  `<!-- bench:memory:${table}:begin -->`,
  `Run ${new Date().toISOString()}, Deno ${Deno.version.deno}, program \`${
    LAUNCHER.replace(/^.*\/(ankra-cloud-ccm-[^/]+)\//, "$1/")
  }\`${COMMIT ? ` of commit ${COMMIT}` : ""}. ${heapNote}`,
  "",
  ...stagesTable(results),
  "",
  "One more object, from the stages' slopes:",
  "",
  ...objectCostTable(results),
  ...(HEAP_BUNDLE
    ? [
      "",
      "The controller's structures, retained KiB (what collecting each would free: a structure another one holds is " +
      "counted in both; a row after · is one field of its structure; a store's objects are counted in the store " +
      "alone, whoever else refers to them), those of 4 KiB or more at some stage:",
      "",
      ...structuresTable(results),
      "",
      "The heap by kind (own sizes), the largest at the last stage:",
      "",
      ...kindsTable(results),
    ]
    : []),
  `<!-- bench:memory:${table}:end -->`,
].join("\n");
console.log(block);
if (table === "none") Deno.exit(0);
const reportUrl = new URL("./memory_report.md", import.meta.url);
let report = "";
try {
  report = await Deno.readTextFile(reportUrl);
} catch (cause) {
  if (!(cause instanceof Deno.errors.NotFound)) throw cause;
}
const marked = new RegExp(`<!-- bench:memory:${table}:begin -->[\\s\\S]*?<!-- bench:memory:${table}:end -->`);
report = marked.test(report) ? report.replace(marked, () => block) : `${report}\n${block}\n`;
await Deno.writeTextFile(reportUrl, report);
