/**
 * A real systemd for tests: a Debian root (scripts/systemd_rootfs.sh) booted by `systemd-nspawn --boot`, whose PID 1
 * is the container's own systemd. It shares the host's network, so services it runs reach the test control plane and
 * the simulator on 127.0.0.1. Commands run inside through `nsenter` into the container's init; no systemd, machined
 * or D-Bus is needed on the host. Teardown stops the container (SIGTERM to nspawn, a clean poweroff; SIGKILL of the
 * container's init when that is lost), removes the container's cgroups and nspawn's propagation directory: nothing is
 * left behind, and the root file system is never written (`--volatile=overlay`).
 *
 * Needs root and `systemd-nspawn` (Debian's `systemd-container`): {@linkcode nspawnUnavailable} says why not.
 *
 * @module
 */
import { eventually } from "../controller/node_controllers.ts";
import {
  cgroupWrapperScript,
  containerCgroups,
  containerInit,
  nspawnArgs,
  parseProcStat,
  parseSystemctlShow,
  type ProcStat,
} from "./nspawn_plan.ts";

const ROOT = new URL("../../..", import.meta.url).pathname.replace(/\/$/, "");
const NSPAWN = "systemd-nspawn";

/** The outcome of a command run in the container. */
export interface ExecResult {
  /** Exit code. */
  code: number;
  /** Standard output. */
  stdout: string;
  /** Standard error. */
  stderr: string;
}

/** A booted container; `await using` tears it down. */
export interface NspawnMachine extends AsyncDisposable {
  /** The machine name. */
  name: string;
  /** The host PID of the container's systemd. */
  init: number;
  /** The file holding nspawn's output and the container's console. */
  consoleLog: string;
  /** Runs `args` inside the container (all its namespaces and its root). */
  exec(args: string[], options?: { stdin?: string }): Promise<ExecResult>;
  /** Like {@linkcode exec}, but throws with the output when the exit code is not 0. */
  execOk(args: string[]): Promise<string>;
  /** `systemctl show <unit>` as a record. */
  show(unit: string): Promise<Record<string, string>>;
  /** The unit's journal inside the container, with precise times. */
  journal(unit: string): Promise<string>;
  /** What the console log holds so far. */
  console(): Promise<string>;
}

/** Why a real systemd cannot be booted here, or undefined when it can. */
export function nspawnUnavailable(): string | undefined {
  if (Deno.uid() !== 0) return "booting a container with systemd-nspawn needs root (CI runs the tests as root)";
  const found = (Deno.env.get("PATH") ?? "/usr/sbin:/usr/bin").split(":").some((dir) => {
    try {
      return Deno.statSync(`${dir}/${NSPAWN}`).isFile;
    } catch {
      return false;
    }
  });
  if (!found) {
    return "systemd-nspawn is not installed: apt-get install --no-install-recommends " +
      "systemd-container=$(dpkg-query -W -f='${Version}' systemd) (.ci/run does)";
  }
  return undefined;
}

/** Locates or builds the cached Debian root (`scripts/systemd_rootfs.sh`) and returns its path. */
export async function systemdRootfs(): Promise<string> {
  const out = await new Deno.Command("bash", {
    args: [`${ROOT}/scripts/systemd_rootfs.sh`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  if (!out.success) {
    throw new Error(`scripts/systemd_rootfs.sh failed (${out.code}):\n${decoder.decode(out.stderr)}`);
  }
  return decoder.decode(out.stdout).trim();
}

async function run(command: string, args: string[], stdin?: string): Promise<ExecResult> {
  const child = new Deno.Command(command, {
    args,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const out = await child.output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

function processes(): ProcStat[] {
  const found: ProcStat[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      found.push(parseProcStat(Deno.readTextFileSync(`/proc/${entry.name}/stat`)));
    } catch { /* exited meanwhile */ }
  }
  return found;
}

/** Resolves with true when `done` settles within `ms`, else false (a deadline, not a pause). */
async function settlesWithin(done: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), ms));
  try {
    return await Promise.race([done.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Boots `rootfs` with `stage` bound read-only at /mnt/stage, and waits until its systemd has finished starting up
 * (`systemctl is-system-running --wait` says running or degraded). Throws with the console log when it does not.
 */
export async function bootNspawn(
  rootfs: string,
  stage: string,
  options: { name?: string } = {},
): Promise<NspawnMachine> {
  const name = options.name ?? `ccm-${crypto.randomUUID().slice(0, 8)}`;
  const work = await Deno.makeTempDir({ prefix: `${name}-` });
  const consoleLog = `${work}/console.log`;
  await Deno.writeTextFile(consoleLog, "");
  const cgroups = containerCgroups(name, [...Deno.readDirSync("/sys/fs/cgroup")].map((e) => e.name));
  for (const dir of cgroups) await Deno.mkdir(dir);
  const nspawn = new Deno.Command("sh", {
    args: ["-c", cgroupWrapperScript(cgroups), "sh", NSPAWN, ...nspawnArgs({ rootfs, machine: name, stage })],
    env: { LOG: consoleLog },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const exited = nspawn.status;
  let init = 0;

  const machine: NspawnMachine = {
    name,
    get init() {
      return init;
    },
    consoleLog,
    exec: (args, execOptions = {}) => run("nsenter", ["-t", String(init), "-a", ...args], execOptions.stdin),
    async execOk(args) {
      const out = await machine.exec(args);
      if (out.code !== 0) {
        throw new Error(`${args.join(" ")} exited ${out.code} in ${name}:\n${out.stdout}${out.stderr}`);
      }
      return out.stdout;
    },
    async show(unit) {
      return parseSystemctlShow(await machine.execOk(["systemctl", "show", "--no-pager", unit]));
    },
    async journal(unit) {
      const out = await machine.exec(["journalctl", "--no-pager", "-o", "short-precise", "-u", unit]);
      return out.stdout + out.stderr;
    },
    console: () => Deno.readTextFile(consoleLog),
    async [Symbol.asyncDispose]() {
      if (await settlesWithin(exited, 0)) {
        // already gone
      } else {
        // nspawn --boot turns SIGTERM into a clean poweroff of the container.
        try {
          nspawn.kill("SIGTERM");
        } catch { /* exited */ }
        if (!await settlesWithin(exited, 30_000)) {
          // A SIGTERM in the container's first moments can be lost (its systemd has no handler yet, and a PID
          // namespace's init ignores signals it does not handle): SIGKILL of that init ends the whole namespace.
          const pid = containerInit(processes(), nspawn.pid);
          if (pid) Deno.kill(pid, "SIGKILL");
          if (!await settlesWithin(exited, 10_000)) nspawn.kill("SIGKILL");
          await exited;
        }
      }
      for (const dir of cgroups) removeCgroup(dir);
      await Deno.remove(`/run/systemd/nspawn/propagate/${name}`).catch(() => {});
      await Deno.remove(work, { recursive: true });
    },
  };

  try {
    init = await bootedInit(nspawn, exited);
    return machine;
  } catch (cause) {
    const log = await machine.console().catch(() => "");
    try {
      await machine[Symbol.asyncDispose]();
    } catch { /* the boot error below says more */ }
    throw new Error(`the container did not boot: ${(cause as Error).message}\nconsole:\n${log}`);
  }
}

/** Removes a cgroup directory and those nspawn and the container's systemd made under it, deepest first. */
function removeCgroup(dir: string): void {
  let children: string[] = [];
  try {
    children = [...Deno.readDirSync(dir)].filter((e) => e.isDirectory).map((e) => `${dir}/${e.name}`);
  } catch {
    return;
  }
  for (const child of children) removeCgroup(child);
  try {
    Deno.removeSync(dir);
  } catch (cause) {
    throw new Error(`cgroup ${dir} left behind: ${(cause as Error).message}`);
  }
}

/**
 * Waits until the container's systemd runs (its PID in the host's namespace), answers on its private socket and
 * reports the system `running` (or `degraded`); gives the PID.
 */
async function bootedInit(nspawn: Deno.ChildProcess, exited: Promise<Deno.CommandStatus>): Promise<number> {
  const init = await eventually(
    async () => {
      if (await settlesWithin(exited, 0)) throw new Error(`systemd-nspawn exited: ${(await exited).code}`);
      return containerInit(processes(), nspawn.pid) ?? 0;
    },
    30_000,
    "the container's systemd started",
  );
  // systemctl talks to the manager through its private socket, made a moment after systemd starts.
  await eventually(
    async () => {
      try {
        return (await Deno.lstat(`/proc/${init}/root/run/systemd/private`)).isSocket === true;
      } catch {
        return false;
      }
    },
    30_000,
    "systemd's private socket",
  );
  const state = await run("nsenter", [
    "-t",
    String(init),
    "-a",
    "timeout",
    "90",
    "systemctl",
    "is-system-running",
    "--wait",
  ]);
  const status = state.stdout.trim();
  if (status !== "running" && status !== "degraded") throw new Error(`system state ${status} ${state.stderr}`);
  return init;
}
