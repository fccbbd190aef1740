/**
 * The burst benchmark's settings (bench/burst_bench.ts): its `BENCH_*` knobs with their defaults, the simulator's
 * account (token, zone, network), and the progress log on standard error.
 *
 * @module
 */
import { V8_FLAGS_ARGUMENT } from "../lib/runtime_permissions.ts";

/** A `BENCH_*` variable, or undefined. */
export function env(name: string): string | undefined {
  return Deno.env.get(name);
}

function list(text: string): number[] {
  return text.split(",").map((s) => s.trim()).filter(Boolean).map(Number);
}

/** Service counts of the Services scenarios (`BENCH_SERVICES`, default 50,200). */
export const SERVICES = list(env("BENCH_SERVICES") ?? "50,200");
/** Node counts of the Nodes scenarios (`BENCH_NODES`, default 1000). */
export const NODES = list(env("BENCH_NODES") ?? "1000");
/** The simulator's rate limits, requests per minute, each a run of every scenario (`BENCH_LIMITS`, default 3600,120). */
export const LIMITS = list(env("BENCH_LIMITS") ?? "3600,120");
/** Ready, initialised nodes beside a Services burst (`BENCH_BASE_NODES`, default 5). */
export const BASE_NODES = Number(env("BENCH_BASE_NODES") ?? 5);
/** Longest a scenario may take (`BENCH_TIMEOUT_S`, default 900 s). */
export const TIMEOUT_MS = Number(env("BENCH_TIMEOUT_S") ?? 900) * 1000;
/** Calls are also counted this long after the burst was served (`BENCH_SETTLE_S`, default 5 s). */
export const SETTLE_MS = Number(env("BENCH_SETTLE_S") ?? 5) * 1000;
/** The simulator's load balancer create delay (`BENCH_LB_DELAY_MS`, default 1000). */
export const LB_DELAY_MS = Number(env("BENCH_LB_DELAY_MS") ?? 1000);
/** The harness's own apiserver requests in flight (`BENCH_KUBE_CONCURRENCY`, default 25). */
export const KUBE_CONCURRENCY = Number(env("BENCH_KUBE_CONCURRENCY") ?? 25);
/**
 * Deno flags of the controller process (`BENCH_DENO_FLAGS`, space-separated): by default the release's V8 flags
 * (lib/runtime_permissions.ts, which scripts/build.sh writes into the launcher).
 */
export const DENO_FLAGS = (env("BENCH_DENO_FLAGS") ?? V8_FLAGS_ARGUMENT).split(" ").filter(Boolean);
/** Extra controller environment (`BENCH_ENV`, JSON). */
export const EXTRA_ENV: Record<string, string> = JSON.parse(env("BENCH_ENV") ?? "{}");
/** Extra controller flags (`BENCH_ARGS`, space-separated). */
export const EXTRA_ARGS = (env("BENCH_ARGS") ?? "").split(" ").filter(Boolean);
/** Where the report goes (`BENCH_REPORT`, default bench/burst_report.md). */
export const REPORT = env("BENCH_REPORT") ?? new URL("./burst_report.md", import.meta.url).pathname;
/** Controller logs and the simulator's request logs (`BENCH_LOG_DIR`, default a new temporary directory). */
export const LOG_DIR = env("BENCH_LOG_DIR") ?? await Deno.makeTempDir({ prefix: "burst-bench-" });
await Deno.mkdir(LOG_DIR, { recursive: true });
/** The simulator account's read-write token (a made-up one: the simulator is in-process). */
export const TOKEN = "act_YnVyc3QtYmVuY2gtdG9rZW4tcmVhZC13cml0ZQ";
/** The simulator's zone. */
export const ZONE = "de-fsn1";
/** The simulator's private network, the controller's `ANKRA_CLOUD_NETWORK_ID`. */
export const NETWORK = "net-1";
/** This run's tag in object names and labels, so runs never meet. */
export const RUN = crypto.getRandomValues(new Uint32Array(1))[0].toString(36);
/** When the benchmark started. */
export const STARTED = new Date();

/** Prints `message` to standard error with the seconds since the start. */
export function progress(message: string): void {
  console.error(`[burst ${((Date.now() - STARTED.getTime()) / 1000).toFixed(0).padStart(5)} s] ${message}`);
}

/** Resolves after `ms` (the harness's own pacing: retries after a 429, progress ticks). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
