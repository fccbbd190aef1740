/**
 * Server processes of a test control plane (etcd, kube-apiserver) and their care: where the binaries are (and the
 * directory a build script of `scripts/` prints), free loopback ports, start with the output in a log file, stop with
 * SIGTERM then SIGKILL, and a watchdog that kills them when the test process dies without cleaning up.
 *
 * @module
 */

/** Where the binaries live and which versions they report. */
export interface ControlPlaneBinaries {
  /** Path of kube-apiserver. */
  kubeApiserver: string;
  /** Path of etcd. */
  etcd: string;
  /** Directory holding kubectl and helm when they were found beside the servers. */
  dir?: string;
}

/** Finds kube-apiserver and etcd: `TEST_ASSET_*`, then `KUBEBUILDER_ASSETS`, then `PATH`. */
export function findBinaries(): ControlPlaneBinaries {
  const assets = Deno.env.get("KUBEBUILDER_ASSETS");
  const find = (name: string, envName: string): string => {
    const explicit = Deno.env.get(envName);
    if (explicit) return explicit;
    if (assets && isExecutable(`${assets}/${name}`)) return `${assets}/${name}`;
    for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
      if (dir && isExecutable(`${dir}/${name}`)) return `${dir}/${name}`;
    }
    throw new Error(
      `${name} not found: run \`bash scripts/test_binaries.sh\` and set KUBEBUILDER_ASSETS to the directory it prints`,
    );
  };
  return {
    kubeApiserver: find("kube-apiserver", "TEST_ASSET_KUBE_APISERVER"),
    etcd: find("etcd", "TEST_ASSET_ETCD"),
    dir: assets,
  };
}

/**
 * Runs `scripts/<script>` (it builds on first use; its progress goes to stderr) and returns the directory it prints
 * last; says how long the build took when it took over 5 s. A failure names the script and what it `needs`.
 */
export async function builtBy(script: string, what: string, needs: string): Promise<string> {
  const path = new URL(`../../../scripts/${script}`, import.meta.url).pathname;
  const started = performance.now();
  const done = await new Deno.Command("bash", { args: [path], stdout: "piped", stderr: "inherit" }).output();
  if (!done.success) throw new Error(`scripts/${script} failed: see the lines above (it needs ${needs})`);
  const seconds = (performance.now() - started) / 1000;
  if (seconds > 5) console.log(`${what} built in ${seconds.toFixed(0)} s`);
  return new TextDecoder().decode(done.stdout).trim().split("\n").pop()!;
}

/** True when `path` is an executable file. */
export function isExecutable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** Returns a loopback TCP port that was free a moment ago. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** A server process started by {@linkcode startProcess}, its output going to `log`. */
export interface Started {
  /** The process. */
  child: Deno.ChildProcess;
  /** File receiving its standard output and error. */
  log: string;
  /** True once it has exited. */
  exited: boolean;
  /** Its exit status, once it exits. */
  status: Promise<Deno.CommandStatus>;
}

/** Starts `cmd` with its output in `log` (truncated); `detached` gives it its own process group. */
export function startProcess(cmd: string, args: string[], log: string, detached = false): Started {
  const file = Deno.openSync(log, { write: true, create: true, truncate: true });
  const child = new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped", stdin: "null", detached }).spawn();
  const started: Started = { child, log, exited: false, status: child.status };
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) file.writeSync(chunk);
  };
  Promise.all([pump(child.stdout), pump(child.stderr)]).finally(() => file.close()).catch(() => {});
  child.status.then(() => started.exited = true);
  return started;
}

/** Starts a watchdog that kills `pids` when process `parent` has gone (the test process died without cleanup). */
export function startWatchdog(parent: number, pids: number[]): Deno.ChildProcess {
  const list = pids.join(" ");
  const script = `while kill -0 ${parent} 2>/dev/null; do sleep 1; done; ` +
    `kill -TERM ${list} 2>/dev/null; sleep 5; kill -KILL ${list} 2>/dev/null; exit 0`;
  const child = new Deno.Command("sh", { args: ["-c", script], stdin: "null", stdout: "null", stderr: "null" })
    .spawn();
  child.unref();
  return child;
}

/** Sends SIGTERM, and SIGKILL when the process has not exited after `graceMs`; resolves once it has exited. */
export async function stopProcess(p: Started, graceMs: number): Promise<void> {
  if (p.exited) return;
  try {
    p.child.kill("SIGTERM");
  } catch {
    return;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => timer = setTimeout(() => resolve("timeout"), graceMs));
  const outcome = await Promise.race([p.status.then(() => "exited" as const), timeout]);
  clearTimeout(timer);
  if (outcome === "timeout") {
    try {
      p.child.kill("SIGKILL");
    } catch { /* already gone */ }
    await p.status;
  }
}
