/**
 * One HAProxy in master-worker mode (`haproxy -W -S <dir>/master.sock -f <dir>/haproxy.cfg`), owned by this process:
 * started through `setpriv --pdeathsig KILL` (util-linux), so the master is killed when the simulator dies, however
 * it dies — its workers leave when their master is gone; stopped (SIGTERM: the master ends its workers and their
 * connections) with its load balancer or edge and with the data plane. A configuration is applied by `reload` on
 * the master CLI; the outcome is HAProxy's own (`Loading success.` / `Loading failure!` on its standard error, with
 * the alerts before it). Every line it writes goes to `onLine`.
 *
 * @module
 */
import { alertText, parseShowProc, readHaproxyLine } from "./haproxy_status.ts";

/** The programs the data plane runs. */
export interface HaproxyTools {
  /** The `haproxy` binary. */
  haproxy: string;
  /** util-linux's `setpriv`, for `--pdeathsig`. */
  setpriv: string;
}

/** The outcome of a start or reload: HAProxy loaded the configuration, or refused it with its alerts. */
export type LoadOutcome = { loaded: true } | { loaded: false; alerts: string[] };

const LOAD_TIMEOUT_MS = 15_000;
const COMMAND_TIMEOUT_MS = 2_000;

/**
 * Finds `haproxy` and `setpriv` in `dirs` (default: PATH, then the sbin and bin folders); an error naming the Debian
 * package when one is missing.
 */
export function locateHaproxyTools(dirs?: string[]): HaproxyTools {
  const search = dirs ??
    [...(Deno.env.get("PATH") ?? "").split(":").filter(Boolean), "/usr/sbin", "/usr/local/sbin", "/usr/bin", "/bin"];
  const find = (name: string) =>
    search.map((dir) => `${dir}/${name}`).find((path) => {
      try {
        return Deno.statSync(path).isFile;
      } catch {
        return false;
      }
    });
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
  /** The master CLI's socket. */
  readonly masterSocket: string;
  /** The configuration file. */
  readonly configPath: string;
  readonly #child: Deno.ChildProcess;
  readonly #onLine: (line: string) => void;
  #exited = false;
  #waiter?: { alerts: string[]; done: (outcome: LoadOutcome) => void };

  private constructor(child: Deno.ChildProcess, options: { dir: string; onLine: (line: string) => void }) {
    this.#child = child;
    this.#onLine = options.onLine;
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
    options: { dir: string; onLine: (line: string) => void },
  ): Promise<{ process?: HaproxyProcess; outcome: LoadOutcome }> {
    const child = new Deno.Command(tools.setpriv, {
      args: [
        "--pdeathsig",
        "KILL",
        "--",
        tools.haproxy,
        "-W",
        "-S",
        `${options.dir}/master.sock`,
        "-f",
        `${options.dir}/haproxy.cfg`,
      ],
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

  /** Reloads the configuration file through the master CLI; what HAProxy made of it. */
  async reload(): Promise<LoadOutcome> {
    const outcome = this.#load();
    // The master re-executes itself on it: nothing to wait for on the connection.
    try {
      const conn = await this.#connect();
      await conn.write(new TextEncoder().encode("reload\n")).finally(() => conn.close());
    } catch (cause) {
      this.#waiter?.done({ loaded: false, alerts: [`the master CLI refused reload: ${(cause as Error).message}`] });
    }
    return await outcome;
  }

  /** Sends one command to the master CLI (`@1 show stat` reaches the current worker); its answer. */
  async command(text: string): Promise<string> {
    const conn = await this.#connect();
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

  /** Sends `text` to the current worker's runtime API (through the master CLI, `@!<pid>`); its answer. */
  async worker(text: string): Promise<string> {
    const current = parseShowProc(await this.command("show proc")).current;
    if (current === undefined) throw new Error("haproxy has no current worker");
    return await this.command(`@!${current} ${text}`);
  }

  /** Ends the master, its workers and their connections (SIGTERM, SIGKILL after 3 s). */
  async stop(): Promise<void> {
    if (!this.#exited) {
      try {
        this.#child.kill("SIGTERM");
      } catch { /* gone */ }
      const timer = setTimeout(() => {
        try {
          this.#child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 3_000);
      await this.#child.status;
      clearTimeout(timer);
    }
  }

  /** A connection to the master CLI, which is briefly away while the master re-executes itself. */
  async #connect(): Promise<Deno.UnixConn> {
    for (let attempt = 1;; attempt++) {
      try {
        return await Deno.connect({ transport: "unix", path: this.masterSocket });
      } catch (cause) {
        if (attempt >= 20 || this.#exited) throw cause;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
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
