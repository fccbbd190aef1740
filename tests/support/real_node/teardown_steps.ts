/**
 * Teardowns that finish: each step of a real cluster's or real node's stop runs whatever the steps before it did (a
 * node that never got to kube-proxy, a control plane without a scheduler), and what a step could not do is returned
 * as a line beside the leftovers instead of ending the teardown; and the processes and mounts an earlier, aborted
 * run left under its temporary directory, found and removed before a new run starts, said on stderr.
 *
 *     const failed = await runTeardownSteps([["stop the kubelet", () => stopKubelet()], …]);
 *
 * @module
 */
import { processesWorkingUnder } from "./real_node_host.ts";

/** One step of a teardown: what it does (for the report) and the work. */
export type TeardownStep = readonly [what: string, work: () => unknown];

/** What a failed start reports: its logs, and its teardown (what was left behind, empty when clean). */
export interface StartedParts {
  /** The last `lines` lines of every part's log. */
  logs(lines: number): Promise<string>;
  /** Stops everything and cleans the host; returns what was left behind. */
  stop(): Promise<string[]>;
}

/**
 * The error of a start that failed with `cause`, after tearing down what started: the first error is the one reported,
 * with the logs of every part, and what the teardown could not do follows it. `what` names the thing (`the real node`).
 */
export async function failedStart(what: string, cause: unknown, parts: StartedParts): Promise<Error> {
  const text = await parts.logs(30).catch((e) => `(logs unreadable: ${e instanceof Error ? e.message : e})`);
  const left = await parts.stop().catch((e) => [`teardown: ${e instanceof Error ? e.message : e}`]);
  return new Error(
    `${what} did not start: ${cause instanceof Error ? cause.message : cause}\n${text}` +
      (left.length > 0 ? `\nafter the failed start, the teardown left:\n  ${left.join("\n  ")}` : ""),
    { cause },
  );
}

/**
 * Runs every step in order, each whatever the others did (a step that throws, synchronously or not, does not stop
 * the next); returns one line per step that failed (`teardown: <what> failed: <message>`), empty when all ran.
 */
export async function runTeardownSteps(steps: readonly TeardownStep[]): Promise<string[]> {
  const failed: string[] = [];
  for (const [what, work] of steps) {
    try {
      await work();
    } catch (error) {
      failed.push(`teardown: ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return failed;
}

/** The temporary directories of earlier runs whose name starts with `prefix` (e.g. `ccm-real-cluster-`). */
export function earlierRunDirs(prefix: string, tmp = Deno.env.get("TMPDIR") || "/tmp"): string[] {
  const dirs: string[] = [];
  try {
    for (const entry of Deno.readDirSync(tmp)) {
      if (entry.isDirectory && entry.name.startsWith(prefix)) dirs.push(`${tmp}/${entry.name}`);
    }
  } catch { /* no temporary directory to read */ }
  return dirs.sort();
}

/**
 * Stops the processes an earlier run left (working under its directory or started with a path in it: containerd,
 * shims, kubelets, etcd, the simulator …) and unmounts what is mounted under it, for every earlier directory with
 * `prefix`; says on stderr what it found, and returns those lines (empty when the host was clean). The directories
 * themselves stay (their logs explain the earlier failure).
 */
export async function cleanEarlierRuns(prefix: string): Promise<string[]> {
  const found: string[] = [];
  for (const dir of earlierRunDirs(prefix)) {
    const pids = [...new Set([...processesWorkingUnder(dir), ...namingDir(dir)])]
      .filter((pid) => pid !== Deno.pid);
    for (const pid of pids) {
      found.push(`process ${pid} (${commandOf(pid)}) of ${dir}`);
      signal(pid, "SIGTERM");
    }
    if (pids.length > 0) await waitGone(pids, 5_000);
    for (const pid of pids) signal(pid, "SIGKILL");
    const mounts = (await Deno.readTextFile("/proc/self/mounts")).split("\n").map((l) => l.split(" ")[1] ?? "")
      .filter((m) => m.startsWith(`${dir}/`)).sort().reverse();
    for (const mount of mounts) {
      found.push(`mount ${mount}`);
      const done = await new Deno.Command("umount", { args: [mount], stdout: "null", stderr: "null" }).output();
      if (!done.success) {
        await new Deno.Command("umount", { args: ["-l", mount], stdout: "null", stderr: "null" }).output();
      }
    }
  }
  if (found.length > 0) {
    console.error(`cleaned what an earlier run left (${prefix}*):\n  ${found.join("\n  ")}`);
  }
  return found;
}

/** Processes whose command line names a path under `dir` anywhere in an argument (`--config=<dir>/…`). */
function namingDir(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name) || Number(entry.name) === Deno.pid) continue;
    try {
      if (Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).includes(`${dir}/`)) pids.push(Number(entry.name));
    } catch { /* gone */ }
  }
  return pids;
}

function commandOf(pid: number): string {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/comm`).trim();
  } catch {
    return "gone";
  }
}

function signal(pid: number, sig: Deno.Signal): void {
  try {
    Deno.kill(pid, sig);
  } catch { /* already gone */ }
}

async function waitGone(pids: number[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && pids.some((pid) => alive(pid))) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}
