/**
 * The burst benchmark's report (bench/burst_bench.ts writes it to bench/burst_report.md): a table per rate limit,
 * details per scenario, and how the run was made.
 *
 * @module
 */
import { OPTIONS } from "../lib/config/options.ts";
import { DEFAULTS } from "../lib/defaults.ts";
import {
  BASE_NODES,
  DENO_FLAGS,
  env,
  EXTRA_ARGS,
  EXTRA_ENV,
  LB_DELAY_MS,
  NETWORK,
  NODES,
  SERVICES,
  SETTLE_MS,
  STARTED,
  TIMEOUT_MS,
  ZONE,
} from "./burst_settings.ts";
import { percentile, type Result } from "./burst_measurements.ts";

const s = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "—");

function row(r: Result): string {
  const sorted = [...r.latencies].sort((a, b) => a - b);
  const admitted = r.calls - r.rejected;
  const bound = admitted / (r.limit / 60);
  const last = r.timedOut ? `> ${s(r.totalSeconds)} (${r.done}/${r.count} done)` : s(sorted.at(-1) ?? NaN);
  const maxAfter = r.afterRunning.length ? Math.max(...r.afterRunning) : NaN;
  return `| ${r.scenario} | ${s(sorted[0])} | ${s(percentile(sorted, 0.5))} | ${
    s(percentile(sorted, 0.9))
  } | ${last} | ${r.kind === "services" ? s(maxAfter) : "—"} | ${r.calls} | ${
    r.kind === "services" && r.loadBalancers ? (r.calls / r.loadBalancers).toFixed(1) : "—"
  } | ${r.rejected} | ${r.timedOut ? "> " : ""}${s(r.totalSeconds)} | ${s(bound)} | ${
    bound > 0 ? (r.totalSeconds / bound).toFixed(2) : "—"
  } |`;
}

function details(r: Result): string[] {
  const ops = [...r.byOperation].sort((a, b) =>
    [...b[1].values()].reduce((x, y) => x + y, 0) -
    [...a[1].values()].reduce((x, y) => x + y, 0)
  ).map(([op, statuses]) => {
    const total = [...statuses.values()].reduce((x, y) => x + y, 0);
    const split = [...statuses].sort((a, b) => a[0] - b[0]).map(([st, n]) => `${st}×${n}`).join(" ");
    return `${op} ${total} (${split})`;
  });
  const out = [
    `- **${r.scenario}** (limit ${r.limit}/min): ${r.done}/${r.count} ${
      r.kind === "services" ? "Services got an address" : "Nodes initialised"
    }${r.timedOut ? ` — TIMED OUT after ${s(r.totalSeconds)} s` : ""}.`,
    `  - calls by operation (status×count): ${ops.join("; ") || "none"}`,
    `  - calls in the ${SETTLE_MS / 1000} s after: ${
      [...r.afterCalls].map(([op, n]) => `${op} ${n}`).join("; ") || "none"
    }`,
    `  - calls per minute: ${r.callsPerMinute.join(", ")}; 429s per minute: ${r.rejectedPerMinute.join(", ")}`,
    `  - ${r.kind === "services" ? "Services served" : "Nodes initialised"} per 30 s: ${r.servedPer30s.join(", ")}`,
  ];
  if (r.kind === "services") {
    const after = [...r.afterRunning].sort((a, b) => a - b);
    out.push(
      `  - address after running s: median ${s(percentile(after, 0.5))}, p90 ${s(percentile(after, 0.9))}, max ${
        s(after.at(-1) ?? NaN)
      }; ${after.filter((x) => x > 3).length} of ${after.length} over the 3 s target`,
      `  - load balancers in the simulator: ${r.loadBalancers} (${r.duplicates} Services with more than one, ${r.notRunning} not running)`,
    );
  }
  for (const note of r.notes.slice(0, 10)) out.push(`  - ${note}`);
  if (r.notes.length > 10) out.push(`  - … and ${r.notes.length - 10} more`);
  return out;
}

/** The Markdown table of one rate limit's results (also printed as each limit finishes). */
export function table(limit: number, results: Result[]): string[] {
  return [
    `### ${limit} requests/min`,
    "",
    "| scenario | first s | median s | p90 s | last s | max address after running s | calls | calls per LB | 429s | total s | calls÷limit s | total ÷ (calls÷limit) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...results.map(row),
    "",
  ];
}

async function gitDescription(): Promise<string> {
  try {
    const git = (args: string[]) =>
      new Deno.Command("git", { args, cwd: new URL("..", import.meta.url).pathname, stdout: "piped", stderr: "null" })
        .output().then((o) => new TextDecoder().decode(o.stdout).trim());
    const head = await git(["rev-parse", "--short", "HEAD"]);
    const dirty = await git(["status", "--porcelain", "--", "lib", "main.ts"]);
    return head ? `${head}${dirty ? " with uncommitted changes in lib/ or main.ts" : ""}` : "unknown";
  } catch {
    return "unknown";
  }
}

function commandLine(): string {
  const given = env("BENCH_COMMAND");
  if (given) return given;
  const vars = Object.entries(Deno.env.toObject()).filter(([k]) => k.startsWith("BENCH_") && k !== "BENCH_COMMAND")
    .sort().map(([k, v]) => `${k}=${/^[\w.,:/=-]*$/.test(v) ? v : `'${v.replaceAll("'", "'\\''")}'`}`);
  return [...vars, "deno run --allow-all scripts/with_control_plane.ts -- deno run --allow-all bench/burst_bench.ts"]
    .join(" ");
}
/**
 * The controller defaults that shape a burst, read from the controller's own tables (lib/config/options.ts,
 * lib/defaults.ts), so the report names the values the measured program used.
 */
function controllerDefaults(): string {
  const flag = (option: { flag?: string; default?: string }) => `--${option.flag}=${option.default}`;
  return [
    flag(OPTIONS.concurrentServiceSyncs),
    flag(OPTIONS.concurrentNodeSyncs),
    flag(OPTIONS.kubeApiQps),
    flag(OPTIONS.kubeApiBurst),
    flag(OPTIONS.serverListPeriod),
    `node batch ${DEFAULTS.nodeBatchMs} ms`,
    `provisioning poll ${DEFAULTS.provisioningPollMs} ms`,
    `server list at most every ${DEFAULTS.serverListMinIntervalMs} ms on demand`,
  ].join(", ");
}

/** The whole report (bench/burst_report.md): how it was run, the settings, the columns, a table per limit. */
export async function reportText(all: Map<number, Result[]>): Promise<string> {
  return [
    "# Burst benchmark",
    "",
    `Run ${STARTED.toISOString()} (${
      ((Date.now() - STARTED.getTime()) / 60_000).toFixed(1)
    } min) with Deno ${Deno.version.deno}, controller from commit ${await gitDescription()}:`,
    "",
    "```sh",
    commandLine(),
    "```",
    "",
    "Settings: the release bundle with the release flags (`MALLOC_ARENA_MAX=1`, `" + DENO_FLAGS.join(" ") + "`)" +
    (env("BENCH_MAIN") ? ` — here BENCH_MAIN=${env("BENCH_MAIN")}` : "") +
    "; the release's permission flags (lib/runtime_permissions.ts); controller flags `--leader-elect=false " +
    "--secure-port=0 --cluster-name=bench --v=1" +
    (EXTRA_ARGS.length ? ` ${EXTRA_ARGS.join(" ")}` : "") + "`" +
    (Object.keys(EXTRA_ENV).length ? `, extra environment \`${JSON.stringify(EXTRA_ENV)}\`` : "") +
    `, the rest at their defaults (${controllerDefaults()})` +
    `; simulator in-process: zone ${ZONE} with 2 compute nodes (HA pairs), network ${NETWORK} 10.0.0.0/16, ` +
    `load_balancer_create_delay_ms ${LB_DELAY_MS}, quota 10,000, rate_limit_per_minute as per table. ` +
    `Scenarios: ${SERVICES.join(", ")} Services (two TCP ports each, NodePorts allocated, fresh namespace, ` +
    `${BASE_NODES} initialised Ready nodes), ${NODES.join(", ")} kubelet-shaped Nodes; timeout ${
      TIMEOUT_MS / 1000
    } s ` +
    "each. Every scenario starts with a fresh simulator, a fresh controller process and an empty rate-limit window.",
    "",
    "Columns: first/median/p90/last = per object, seconds from its creation (the apiserver's answer to the harness's",
    "POST) until the harness's watch saw the Service's address (Services) or the Node initialised — providerID set and",
    "the uninitialized taint gone (Nodes). Max address after running = seconds from the load balancer behind the",
    "Service's address turning `running` in the simulator (its creation + the create delay) until the address was seen",
    "(target ≤ 3 s). Calls = every request the simulator received from the burst's start to the last object served,",
    "429s included; calls per LB = calls ÷ load balancers in the simulator. calls÷limit = calls the limiter admitted",
    "(calls − 429s) ÷ (limit/60), the least time the limit allows for that work; the last column is total ÷ that",
    "bound. The simulator's limit is a fixed one-minute window that starts empty, so a burst of fewer than two",
    "windows' worth of calls can finish below the bound (ratio < 1). Calls made in the few seconds after the last",
    "object was served are listed separately (not in the table).",
    "",
    ...[...all].flatMap(([limit, results]) => [...table(limit, results), ...results.flatMap(details), ""]),
  ].join("\n");
}
