/**
 * A process kept running the way users run kube-proxy: restarted when it exits, after a pause — as the kubelet
 * restarts a DaemonSet's container, or systemd a k3s unit (`Restart=always`, `RestartSec=5s`; k3s runs kube-proxy
 * inside its own process). Every exit is kept with its time, status and the reason its log gives, and printed when it
 * happens, so a test can count them (kube-proxy 1.37 exits when its Node's IPs change, or the Node is deleted).
 *
 * Each start writes its own log (`<name>.log`, `<name>-2.log`, …), so a restart keeps what the last run said.
 *
 * @module
 */
import { type Started, stopProcess } from "../control_plane/control_plane.ts";
import { logTail } from "../real_cluster/real_cluster_host.ts";

/** One exit of a supervised process. */
export interface SupervisedExit {
  /** When it exited (ISO 8601). */
  at: string;
  /** Milliseconds since the supervisor started it the first time. */
  afterMs: number;
  /** Its exit code (signals as 128 + number, as the shell reports them). */
  code: number;
  /** What its log says of why: the last line naming a reason it knows ({@linkcode exitReason}). */
  reason: string;
  /** The log of the run that ended. */
  log: string;
}

/** A process under supervision. */
export interface SupervisedProcess {
  /** The name it is known by (log files, messages). */
  readonly name: string;
  /** Every exit so far, oldest first. */
  readonly exits: readonly SupervisedExit[];
  /** The run going on (or the last one, while a restart is pending). */
  current(): Started;
  /** Stops supervising (no more restarts) and stops the process. */
  stop(graceMs: number): Promise<void>;
}

/** Options of {@linkcode supervise}. */
export interface SuperviseOptions {
  /** Directory of the logs. */
  logDir: string;
  /** The logs' base name (default the process's name). */
  logName?: string;
  /** Pause before a restart (default 5 s, k3s's `RestartSec`). */
  restartDelayMs?: number;
  /** Called with each exit as it happens (default: printed to standard error). */
  onExit?: (exit: SupervisedExit) => void;
}

/** The lines that say why kube-proxy (or a Kubernetes component) exits, most specific first. */
const REASONS = [
  /NodeIPs changed for the node.*/,
  /Node is being deleted.*/,
  /PodCIDRs changed for the node.*/,
  /Timed out waiting for node.*/,
  /^E\d{4} .*/m,
  /^F\d{4} .*/m,
];

/** The reason an exited process's log gives (its last line matching one of the known reasons), or its last line. */
export function exitReason(log: string): string {
  const lines = log.trimEnd().split("\n");
  for (const pattern of REASONS) {
    for (let i = lines.length - 1; i >= 0; i--) {
      const match = pattern.exec(lines[i]);
      if (match) return match[0].replace(/^[IEWF]\d{4} [\d:.]+\s+\d+ [\w.]+:\d+\] /, "").trim();
    }
  }
  return lines.at(-1)?.trim() || "(empty log)";
}

/**
 * Starts a process with `launch(log)` and restarts it each time it exits, until {@linkcode SupervisedProcess.stop}.
 * `launch` starts one run writing to the given log file.
 */
export function supervise(
  name: string,
  launch: (log: string) => Started,
  options: SuperviseOptions,
): SupervisedProcess {
  const exits: SupervisedExit[] = [];
  const firstStart = performance.now();
  let stopping = false;
  let runs = 0;
  let run: Started;
  let pending: ReturnType<typeof setTimeout> | undefined;
  const report = options.onExit ?? ((exit: SupervisedExit) =>
    console.error(
      `${name} exited (code ${exit.code}) ${(exit.afterMs / 1000).toFixed(1)} s after its first start: ${exit.reason}` +
        `; restarting in ${(options.restartDelayMs ?? 5_000) / 1000} s`,
    ));
  const start = () => {
    runs++;
    const base = options.logName ?? name;
    const log = `${options.logDir}/${runs === 1 ? base : `${base}-${runs}`}.log`;
    run = launch(log);
    const thisRun = run;
    thisRun.status.then(async (status) => {
      if (stopping) return;
      // The log is written by pumps that finish after the status: wait until they have flushed what it said last.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const text = await logTail(log, 200);
      const exit = {
        at: new Date().toISOString(),
        afterMs: performance.now() - firstStart,
        code: status.signal ? 128 + (Deno.build.os === "linux" ? signalNumber(status.signal) : 0) : status.code,
        reason: exitReason(text),
        log,
      };
      exits.push(exit);
      report(exit);
      if (!stopping) pending = setTimeout(start, options.restartDelayMs ?? 5_000);
    });
  };
  start();
  return {
    name,
    exits,
    current: () => run,
    stop: async (graceMs) => {
      stopping = true;
      clearTimeout(pending);
      await stopProcess(run, graceMs);
    },
  };
}

function signalNumber(signal: Deno.Signal): number {
  return ({ SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[signal] ?? 0;
}
