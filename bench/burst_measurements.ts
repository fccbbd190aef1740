/**
 * What the burst benchmark measures (bench/burst_bench.ts): one {@linkcode Result} per scenario, read from the
 * simulator's request log (calls by operation and status, 429s, per-minute buckets) and the harness's watch times.
 *
 * @module
 */
import type { RunningSimulator } from "../simulator/server.ts";
import { LOG_DIR, SETTLE_MS, sleep } from "./burst_settings.ts";

/** One scenario's outcome: what was served, how fast, and what it cost in API calls. */
export interface Result {
  scenario: string;
  kind: "services" | "nodes";
  count: number;
  done: number;
  timedOut: boolean;
  /** Calls in the SETTLE_MS after the last object was served, by operation. */
  afterCalls: Map<string, number>;
  /** Per object: seconds from its creation to being served (address / initialised). */
  latencies: number[];
  /** Per Service: seconds from its load balancer turning running to the Service's address. */
  afterRunning: number[];
  totalSeconds: number;
  calls: number;
  rejected: number;
  byOperation: Map<string, Map<number, number>>;
  loadBalancers: number;
  duplicates: number;
  notRunning: number;
  rejectedPerMinute: number[];
  callsPerMinute: number[];
  servedPer30s: number[];
  limit: number;
  notes: string[];
}

/** The `p` quantile (0–1) of `sorted` (nearest rank); NaN when empty. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

/** How many of `times` fall in each `widthMs` bucket from `startMs` to `endMs` (at least one bucket). */
export function buckets(times: number[], startMs: number, widthMs: number, endMs: number): number[] {
  const out = Array.from({ length: Math.max(1, Math.ceil((endMs - startMs) / widthMs)) }, () => 0);
  for (const t of times) out[Math.min(out.length - 1, Math.max(0, Math.floor((t - startMs) / widthMs)))]++;
  return out;
}

/** The simulator's log since `afterSeq`, summarised. */
export function callsSince(sim: RunningSimulator, afterSeq: number, startMs: number, endMs: number) {
  const entries = sim.sim.log.filter((e) => e.seq > afterSeq && e.operation !== "control" && e.atMs <= endMs);
  const byOperation = new Map<string, Map<number, number>>();
  for (const e of entries) {
    const statuses = byOperation.get(e.operation) ?? new Map<number, number>();
    statuses.set(e.status, (statuses.get(e.status) ?? 0) + 1);
    byOperation.set(e.operation, statuses);
  }
  const rejected = entries.filter((e) => e.status === 429);
  return {
    calls: entries.length,
    rejected: rejected.length,
    byOperation,
    rejectedPerMinute: buckets(rejected.map((e) => e.atMs), startMs, 60_000, endMs),
    callsPerMinute: buckets(entries.map((e) => e.atMs), startMs, 60_000, endMs),
  };
}

/** Waits SETTLE_MS after the burst was served and returns the calls made in that time, by operation. */
export async function settle(sim: RunningSimulator, endMs: number): Promise<Map<string, number>> {
  await sleep(Math.max(0, endMs + SETTLE_MS - Date.now()));
  const out = new Map<string, number>();
  for (const e of sim.sim.log) {
    if (e.atMs > endMs && e.atMs <= endMs + SETTLE_MS && e.operation !== "control") {
      out.set(e.operation, (out.get(e.operation) ?? 0) + 1);
    }
  }
  return out;
}

/** Writes the simulator's request log since `afterSeq` next to the controller's log, one JSON object a line. */
export async function saveRequests(sim: RunningSimulator, afterSeq: number, label: string): Promise<void> {
  const lines = sim.sim.log.filter((e) => e.seq > afterSeq && e.operation !== "control").map((e) =>
    JSON.stringify({ atMs: e.atMs, operation: e.operation, method: e.method, path: e.path, status: e.status })
  );
  await Deno.writeTextFile(`${LOG_DIR}/requests-${label}.jsonl`, lines.join("\n") + "\n");
}

/** The sequence number of the simulator's last logged request (0 when none). */
export function lastSeq(sim: RunningSimulator): number {
  return sim.sim.log.at(-1)?.seq ?? 0;
}

/** A progress line: `done` of `count` served, seconds so far, calls and 429s since `seq`. */
export function progressLine(
  what: string,
  done: number,
  count: number,
  startMs: number,
  sim: RunningSimulator,
  seq: number,
): string {
  const since = sim.sim.log.filter((e) => e.seq > seq && e.operation !== "control");
  return `${what}: ${done}/${count} after ${((Date.now() - startMs) / 1000).toFixed(0)} s; ${since.length} calls, ${
    since.filter((e) => e.status === 429).length
  } answered 429`;
}

/** The {@linkcode Result} of a scenario that failed with `error`: nothing served, the error as its note. */
export function failed(limit: number, scenario: string, kind: Result["kind"], count: number, error: Error): Result {
  return {
    scenario: `${scenario} (FAILED)`,
    kind,
    count,
    done: 0,
    timedOut: false,
    latencies: [],
    afterRunning: [],
    totalSeconds: NaN,
    calls: 0,
    rejected: 0,
    byOperation: new Map(),
    afterCalls: new Map(),
    loadBalancers: 0,
    duplicates: 0,
    notRunning: 0,
    rejectedPerMinute: [],
    callsPerMinute: [],
    servedPer30s: [],
    limit,
    notes: [`failed: ${error.message}`],
  };
}
