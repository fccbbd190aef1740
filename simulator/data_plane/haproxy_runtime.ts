/**
 * HAProxy's runtime API, reached through a master's CLI socket (`haproxy -S <socket>`): a connection per command, the
 * socket waited for while the master re-executes itself on a reload; `@!<pid> <command>` reaches a worker. Read here
 * for `/_simulator/state` (`readRuntimeStats`): the master's `show proc` and its workers' `show stat`. Parsers pure.
 *
 * @module
 */

/**
 * One row of `show stat` by HAProxy's column names — `pxname` (the section), `svname` (`FRONTEND`, `BACKEND`, a
 * server's or a listener's name), `type` (0 frontend, 1 backend, 2 server, 3 listener), `scur` (sessions now), `stot`,
 * `conn_tot`, `connect`, `status`, `check_status`, … (HAProxy's management guide, "CSV format").
 */
export type StatRow = Record<string, string>;

/**
 * A master's `show proc`: its reloads and failed ones, the current worker's PID (first listed, if any), and the
 * workers of earlier configurations still finishing their connections.
 */
export interface ProcessList {
  reloads: number;
  failedReloads: number;
  current?: number;
  old: number[];
}

/**
 * One HAProxy's figures at one moment: the current worker's `show stat` rows, and `scur` by `proxy/name` summed over
 * it and the old workers.
 */
export interface RuntimeStats {
  rows: StatRow[];
  active: Map<string, number>;
}

const COMMAND_TIMEOUT_MS = 2_000;

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

/** A connection to the master CLI at `socket`, tried for 2 s while the master re-executes itself, unless `gone`. */
export async function connectMaster(socket: string, gone: () => boolean = () => false): Promise<Deno.UnixConn> {
  for (let attempt = 1;; attempt++) {
    try {
      return await Deno.connect({ transport: "unix", path: socket });
    } catch (cause) {
      if (attempt >= 20 || gone()) throw cause;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Sends one command to the master CLI at `socket`; its answer (cut off after 2 s). */
async function masterCommand(socket: string, text: string, gone?: () => boolean): Promise<string> {
  const conn = await connectMaster(socket, gone);
  const timer = setTimeout(() => conn.close(), COMMAND_TIMEOUT_MS);
  try {
    await conn.write(new TextEncoder().encode(`${text}\n`));
    await conn.closeWrite();
    return await new Response(conn.readable).text();
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed by reading to the end */ }
  }
}

/** Sends `text` to the runtime API of the current worker of the master at `socket`; its answer. */
export async function workerCommand(socket: string, text: string, gone?: () => boolean): Promise<string> {
  const current = parseShowProc(await masterCommand(socket, "show proc", gone)).current;
  if (current === undefined) throw new Error("haproxy has no current worker");
  return await masterCommand(socket, `@!${current} ${text}`, gone);
}

/** The figures of the HAProxy whose master CLI is at `socket`, or undefined while it has no current worker. */
export async function readRuntimeStats(socket: string, gone?: () => boolean): Promise<RuntimeStats | undefined> {
  const procs = parseShowProc(await masterCommand(socket, "show proc", gone));
  if (procs.current === undefined) return undefined;
  const rows = parseShowStat(await masterCommand(socket, `@!${procs.current} show stat`, gone));
  const active = new Map<string, number>();
  const add = (list: StatRow[]) => {
    for (const row of list) {
      active.set(
        `${row.pxname}/${row.svname}`,
        (active.get(`${row.pxname}/${row.svname}`) ?? 0) + Number(row.scur || 0),
      );
    }
  };
  add(rows);
  for (const pid of procs.old) {
    add(parseShowStat(await masterCommand(socket, `@!${pid} show stat`, gone).catch(() => "")));
  }
  return { rows, active };
}
