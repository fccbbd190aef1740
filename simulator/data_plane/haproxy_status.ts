/**
 * What HAProxy says, read: the runtime API's `show stat` CSV and the master CLI's `show proc`, and the lines it writes
 * on standard error — a load's outcome (`Loading success.` / `Loading failure!`), a bind it could not make, a health
 * check it reports (`option log-health-checks`). Also what a server's `status` and `check_status` mean for the API's
 * `health` and `last_check`, and what a refused configuration means for its listeners. Pure functions.
 *
 * @module
 */
import { parseIp } from "../../lib/ip_address.ts";
import { listenerKey } from "./listener_plan.ts";

/**
 * One row of `show stat` by HAProxy's column names — `pxname` (the frontend or backend section), `svname`
 * (`FRONTEND`, `BACKEND`, a server's or a listener's name), `type` (0 frontend, 1 backend, 2 server, 3 listener),
 * `scur` (sessions now), `stot`, `conn_tot`, `connect`, `status`, `check_status`, `check_code`, `check_desc`,
 * `last_chk`, … (HAProxy's management guide, "CSV format").
 */
export type StatRow = Record<string, string>;

/** The rows of a `show stat` answer. */
export function parseShowStat(csv: string): StatRow[] {
  const lines = csv.split("\n").filter((line) => line.trim() !== "");
  const header = lines.findIndex((line) => line.startsWith("# pxname"));
  if (header < 0) return [];
  const columns = lines[header].slice(2).split(",");
  return lines.slice(header + 1).map((line) => {
    const fields = line.split(",");
    return Object.fromEntries(columns.map((column, i) => [column, fields[i] ?? ""]));
  });
}

/** The processes of a master, from `show proc`. */
export interface ProcessList {
  /** Reloads the master made, and how many of them failed. */
  reloads: number;
  /** Failed reloads. */
  failedReloads: number;
  /** The current worker's PID (first listed), if any. */
  current?: number;
  /** Workers of earlier configurations still finishing their connections. */
  old: number[];
}

/** The master's `show proc` answer, read. */
export function parseShowProc(text: string): ProcessList {
  const master = /^\d+\s+master\s+(\d+)\s+\[failed: (\d+)\]/m.exec(text);
  const workers = (section: string) => {
    const body = text.split(/^# /m).find((part) => part.startsWith(`${section}\n`)) ?? "";
    return [...body.matchAll(/^(\d+)\s+worker\b/gm)].map((m) => Number(m[1]));
  };
  const current = workers("workers")[0];
  return {
    reloads: Number(master?.[1] ?? 0),
    failedReloads: Number(master?.[2] ?? 0),
    ...(current ? { current } : {}),
    old: workers("old workers"),
  };
}

/** A line of HAProxy's standard error, read. */
export type HaproxyLine =
  | { kind: "loaded"; success: boolean }
  | { kind: "bind_failed"; address: string; port: number; detail: string }
  | { kind: "check"; server: string; passed: boolean }
  | { kind: "other" };

/** What a line of HAProxy's standard error says. */
export function readHaproxyLine(line: string): HaproxyLine {
  if (/Loading success\./.test(line)) return { kind: "loaded", success: true };
  if (/Loading failure!/.test(line)) return { kind: "loaded", success: false };
  const bind = /cannot bind socket \(([^)]*)\) for \[(.+):(\d+)\]/.exec(line);
  if (bind) {
    return { kind: "bind_failed", address: bind[2].replace(/^\[|\]$/g, ""), port: Number(bind[3]), detail: bind[1] };
  }
  const check = /Health check for server (\S+) (succeeded|conditionally succeeded|failed)/.exec(line);
  if (check) return { kind: "check", server: check[1], passed: check[2] !== "failed" };
  return { kind: "other" };
}

/** The words of an `[ALERT]` line (HAProxy's own error), or undefined for any other line. */
export function alertText(line: string): string | undefined {
  return /^\[ALERT\]\s+\(\d+\) : (.*)$/.exec(line)?.[1];
}

/** The API's `health` of a server by its `status`: `up` (also at weight 0 or with no check), `down` otherwise. */
export function serverHealth(status: string): "up" | "down" {
  return /^(UP|NOLB|DRAIN|no check)/.test(status) ? "up" : "down";
}

/** The result and words of a server's last check, or undefined before its first (and with no check). */
export function lastCheckOf(row: StatRow): { result: "passed" | "failed"; detail: string } | undefined {
  const status = (row.check_status ?? "").replace(/^\* /, "");
  if (!status || status === "INI" || status === "UNK") return undefined;
  const passed = /^L[4-7]OK/.test(status);
  const words = [`${status} ${row.check_desc ?? ""}`.trim()];
  if (row.check_code) words.push(`code ${row.check_code}`);
  if (row.last_chk) words.push(row.last_chk);
  return { result: passed ? "passed" : "failed", detail: words.join(", ") };
}

/**
 * What a refused configuration's alerts say, in the words a user acts on: a bind that failed (with the listener key
 * it names, `address|port`), or the alerts themselves.
 */
export function refusalOf(alerts: string[]): { error: string; key?: string } {
  for (const alert of alerts) {
    const read = readHaproxyLine(alert);
    if (read.kind !== "bind_failed") continue;
    const where = `${read.address.includes(":") ? `[${read.address}]` : read.address}:${read.port}`;
    const why = /in use/i.test(read.detail)
      ? "the address is in use; stop what listens there or free the port"
      : /permission/i.test(read.detail)
      ? "permission denied; ports below 1024 need root, CAP_NET_BIND_SERVICE or a lower " +
        "net.ipv4.ip_unprivileged_port_start"
      : /assign/i.test(read.detail)
      ? "the address is not local here; with --data-plane=netns the simulator adds local routes for it"
      : read.detail;
    return {
      error: `cannot listen on ${where}: ${why} (haproxy: ${alert})`,
      key: listenerKey(parseIp(read.address)?.text ?? read.address, read.port),
    };
  }
  return { error: `haproxy refused the configuration: ${alerts.join("; ") || "no reason given"}` };
}
