/**
 * What HAProxy says, read: the runtime API's `show stat` CSV and the master CLI's `show proc`, and the lines it writes
 * on standard error — a load's outcome (`Loading success.` / `Loading failure!`), a bind it could not make, a health
 * check it reports (`option log-health-checks`). Also what a server's `status` and `check_status` mean for the API's
 * `health` and `last_check`. Pure functions.
 *
 * @module
 */

/** One row of `show stat` (the fields the data plane reads). */
export interface StatRow {
  /** Proxy (frontend or backend section). */
  proxy: string;
  /** `FRONTEND`, `BACKEND`, a server's or a listener's name. */
  name: string;
  /** 0 frontend, 1 backend, 2 server, 3 listener. */
  type: number;
  /** `scur`: sessions now (tcp: connections; http: requests in progress). */
  current: number;
  /** `stot`: sessions so far. */
  total: number;
  /** `conn_tot` (frontends): connections accepted. */
  connectionsAccepted: number;
  /** `connect` (servers): connections HAProxy opened (or tried) to it. */
  connects: number;
  /** `status`, e.g. `UP`, `UP 1/3`, `DOWN`, `MAINT`, `no check`. */
  status: string;
  /** `check_status`, e.g. `L4OK`, `L7STS`, `* L4OK` while a check runs; empty before the first. */
  checkStatus: string;
  /** `check_code`: the HTTP status of an http check. */
  checkCode: string;
  /** `check_desc`, e.g. `Layer7 wrong status`. */
  checkDescription: string;
  /** `last_chk`: the check's own words, e.g. `Connection refused`. */
  lastCheck: string;
}

/** The rows of a `show stat` answer. */
export function parseShowStat(csv: string): StatRow[] {
  const lines = csv.split("\n").filter((line) => line.trim() !== "");
  const header = lines.findIndex((line) => line.startsWith("# pxname"));
  if (header < 0) return [];
  const columns = lines[header].slice(2).split(",");
  const at = (name: string) => columns.indexOf(name);
  const index = {
    pxname: at("pxname"),
    svname: at("svname"),
    type: at("type"),
    scur: at("scur"),
    stot: at("stot"),
    conn_tot: at("conn_tot"),
    connect: at("connect"),
    status: at("status"),
    check_status: at("check_status"),
    check_code: at("check_code"),
    check_desc: at("check_desc"),
    last_chk: at("last_chk"),
  };
  return lines.slice(header + 1).map((line) => {
    const fields = line.split(",");
    const text = (i: number) => (i >= 0 ? fields[i] ?? "" : "");
    const count = (i: number) => Number(text(i)) || 0;
    return {
      proxy: text(index.pxname),
      name: text(index.svname),
      type: count(index.type),
      current: count(index.scur),
      total: count(index.stot),
      connectionsAccepted: count(index.conn_tot),
      connects: count(index.connect),
      status: text(index.status),
      checkStatus: text(index.check_status),
      checkCode: text(index.check_code),
      checkDescription: text(index.check_desc),
      lastCheck: text(index.last_chk),
    };
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
  const status = row.checkStatus.replace(/^\* /, "");
  if (!status || status === "INI" || status === "UNK") return undefined;
  const passed = /^L[4-7]OK/.test(status);
  const words = [`${status} ${row.checkDescription}`.trim()];
  if (row.checkCode) words.push(`code ${row.checkCode}`);
  if (row.lastCheck) words.push(row.lastCheck);
  return { result: passed ? "passed" : "failed", detail: words.join(", ") };
}
