/**
 * One HAProxy in master-worker mode (`haproxy -W -S <dir>/master.sock -f <dir>/haproxy.cfg`), owned by this process:
 * started through `setpriv --pdeathsig KILL` (util-linux), so the master dies with the simulator however it dies, and
 * its workers with their master; stopped with its owner and with the data plane; reloaded through the master CLI
 * after it dumps its servers' state into `<dir>/server-state`, which the configuration loads (members keep their
 * health). A start's or reload's outcome is HAProxy's own, read from its standard error with what it means for the
 * listeners; every line also goes to `onLine`.
 *
 * @module
 */
import { parseIp } from "../../lib/ip_address.ts";
import { listenerKey } from "./haproxy_plan.ts";
import { connectMaster, workerCommand } from "./haproxy_runtime.ts";

/** The programs the data plane runs: the `haproxy` binary, and util-linux's `setpriv` for `--pdeathsig`. */
export interface HaproxyTools {
  haproxy: string;
  setpriv: string;
}

/** The outcome of a start or reload: HAProxy loaded the configuration, or refused it with its alerts. */
export type LoadOutcome = { loaded: true } | { loaded: false; alerts: string[] };

/** A line of HAProxy's standard error, read. */
export type HaproxyLine =
  | { kind: "loaded"; success: boolean }
  | { kind: "bind_failed"; address: string; port: number; detail: string }
  | { kind: "check"; server: string; passed: boolean }
  | { kind: "other" };

/** The owner's folder, and where HAProxy's standard error goes, line by line. */
type StartOptions = { dir: string; onLine: (line: string) => void };

const LOAD_TIMEOUT_MS = 15_000;

/** What a line of HAProxy's standard error says: a load's outcome, a bind refused, a check it reports. */
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

/**
 * Finds `haproxy` and `setpriv` in `dirs` (default: PATH, then the sbin and bin folders); an error naming the Debian
 * package when one is missing.
 */
export function locateHaproxyTools(dirs?: string[]): HaproxyTools {
  const search = dirs ??
    [...(Deno.env.get("PATH") ?? "").split(":").filter(Boolean), "/usr/sbin", "/usr/local/sbin", "/usr/bin", "/bin"];
  const isFile = (path: string) => {
    try {
      return Deno.statSync(path).isFile;
    } catch {
      return false;
    }
  };
  const find = (name: string) => search.map((dir) => `${dir}/${name}`).find(isFile);
  const haproxy = find("haproxy");
  if (!haproxy) {
    throw new Error(
      "the data plane runs HAProxy, and haproxy is not installed (not in PATH, /usr/sbin or /usr/local/sbin): " +
        "install Debian's package haproxy (apt-get install haproxy), or run without --data-plane",
    );
  }
  const setpriv = find("setpriv");
  if (!setpriv) {
    throw new Error("the data plane starts HAProxy through setpriv, which is missing: install Debian's util-linux");
  }
  return { haproxy, setpriv };
}

/** A running HAProxy master and its workers. */
export class HaproxyProcess {
  /** The master CLI's socket, `<dir>/master.sock`. */
  readonly masterSocket: string;
  /** The configuration file, `<dir>/haproxy.cfg`. */
  readonly configPath: string;
  readonly #dir: string;
  readonly #child: Deno.ChildProcess;
  readonly #onLine: (line: string) => void;
  #exited = false;
  #waiter?: { alerts: string[]; done: (outcome: LoadOutcome) => void };

  private constructor(child: Deno.ChildProcess, options: StartOptions) {
    this.#child = child;
    this.#onLine = options.onLine;
    this.#dir = options.dir;
    this.masterSocket = `${options.dir}/master.sock`;
    this.configPath = `${options.dir}/haproxy.cfg`;
    const reading = this.#read(child.stderr).catch(() => {});
    child.status.then(async () => {
      this.#exited = true;
      // The last alerts may still be in the pipe (a worker holding it open is not waited for long).
      await Promise.race([reading, new Promise((resolve) => setTimeout(resolve, 500))]);
      this.#waiter?.done({ loaded: false, alerts: this.#waiter.alerts });
    });
  }

  /** Starts HAProxy on `<dir>/haproxy.cfg`; the process once it loaded it, or HAProxy's alerts. */
  static async start(
    tools: HaproxyTools,
    options: StartOptions,
  ): Promise<{ process?: HaproxyProcess; outcome: LoadOutcome }> {
    const [socket, config] = [`${options.dir}/master.sock`, `${options.dir}/haproxy.cfg`];
    const child = new Deno.Command(tools.setpriv, {
      args: ["--pdeathsig", "KILL", "--", tools.haproxy, "-W", "-S", socket, "-f", config],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const process = new HaproxyProcess(child, options);
    const outcome = await process.#load();
    if (outcome.loaded) return { process, outcome };
    await process.stop();
    return { outcome };
  }

  /** The master's PID. */
  get pid(): number {
    return this.#child.pid;
  }

  /** False once the master has exited. */
  get alive(): boolean {
    return !this.#exited;
  }

  /** Dumps the servers' state, then reloads the configuration file through the master CLI; what HAProxy made of it. */
  async reload(): Promise<LoadOutcome> {
    const state = await workerCommand(this.masterSocket, "show servers state", () => this.#exited).catch(() => "");
    await Deno.writeTextFile(`${this.#dir}/server-state`, state.replace(/^\s*\n/, ""));
    const outcome = this.#load();
    // The master re-executes itself on it: nothing to wait for on the connection.
    try {
      const conn = await connectMaster(this.masterSocket, () => this.#exited);
      await conn.write(new TextEncoder().encode("reload\n")).finally(() => conn.close());
    } catch (cause) {
      this.#waiter?.done({ loaded: false, alerts: [`the master CLI refused reload: ${(cause as Error).message}`] });
    }
    return await outcome;
  }

  /** Ends the master, its workers and their connections (SIGTERM, SIGKILL after 3 s). */
  async stop(): Promise<void> {
    if (this.#exited) return;
    const kill = (signal: Deno.Signal) => {
      try {
        this.#child.kill(signal);
      } catch { /* gone */ }
    };
    kill("SIGTERM");
    const timer = setTimeout(() => kill("SIGKILL"), 3_000);
    await this.#child.status;
    clearTimeout(timer);
  }

  #load(): Promise<LoadOutcome> {
    const { promise, resolve } = Promise.withResolvers<LoadOutcome>();
    const waiter = {
      alerts: [] as string[],
      done: (outcome: LoadOutcome) => {
        clearTimeout(timer);
        if (this.#waiter === waiter) this.#waiter = undefined;
        resolve(outcome);
      },
    };
    const timer = setTimeout(
      () => waiter.done({ loaded: false, alerts: [...waiter.alerts, `no answer within ${LOAD_TIMEOUT_MS} ms`] }),
      LOAD_TIMEOUT_MS,
    );
    this.#waiter = waiter;
    if (this.#exited) waiter.done({ loaded: false, alerts: ["haproxy exited"] });
    return promise;
  }

  async #read(stream: ReadableStream<Uint8Array>): Promise<void> {
    let rest = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      const lines = (rest + chunk).split("\n");
      rest = lines.pop()!;
      for (const line of lines) {
        this.#onLine(line);
        const waiter = this.#waiter;
        if (!waiter) continue;
        const alert = alertText(line);
        if (alert !== undefined) waiter.alerts.push(alert);
        else if (/^\s+\S/.test(line) && waiter.alerts.length) {
          waiter.alerts.push(waiter.alerts.pop()! + " " + line.trim());
        }
        const read = readHaproxyLine(line);
        if (read.kind === "loaded") {
          waiter.done(read.success ? { loaded: true } : { loaded: false, alerts: waiter.alerts });
        }
      }
    }
  }
}
