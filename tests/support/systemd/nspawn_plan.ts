/**
 * The decisions of the systemd-nspawn harness ({@linkcode ./nspawn_machine.ts}), as pure functions: the command line
 * that boots a container, which process is the container's systemd, which cgroups it gets, and how `systemctl show`
 * and `/proc/<pid>/status` read.
 *
 * @module
 */

/** What {@linkcode nspawnArgs} needs. */
export interface NspawnBoot {
  /** The root file system (left untouched: every write goes to a tmpfs overlay). */
  rootfs: string;
  /** The machine name (also names its directories under /run/systemd/nspawn). */
  machine: string;
  /** A host directory bound read-only at {@linkcode STAGE_MOUNT} to hand files in. */
  stage: string;
}

/** Where the stage directory appears inside the container. */
export const STAGE_MOUNT = "/mnt/stage";

/** The user IDs systemd hands out for `DynamicUser=` (systemd's compiled-in range). */
export const DYNAMIC_UID_RANGE = { first: 61184, last: 65519 } as const;

/**
 * The `systemd-nspawn` arguments that boot `rootfs` with its systemd as PID 1 on a host that runs no systemd:
 *
 * - `--register=no --keep-unit`: ask nobody on the host (no machined, no D-Bus, no scope unit); nspawn stays in the
 *   cgroup it was started in, which the harness makes for it;
 * - `--volatile=overlay`: the root is read-only underneath, every write of this boot goes to a tmpfs;
 * - `--console=read-only`: the console (systemd's boot messages) goes to nspawn's output, the harness's log file;
 * - `--resolv-conf=off --timezone=off --link-journal=no`: nothing of the host is copied in or linked out;
 * - the host's network (no `--private-network`): services on the host's loopback are reachable from inside.
 */
export function nspawnArgs(boot: NspawnBoot): string[] {
  return [
    "--quiet",
    `--directory=${boot.rootfs}`,
    "--boot",
    "--register=no",
    "--keep-unit",
    `--machine=${boot.machine}`,
    "--volatile=overlay",
    "--console=read-only",
    "--resolv-conf=off",
    "--timezone=off",
    "--link-journal=no",
    `--bind-ro=${boot.stage}:${STAGE_MOUNT}`,
  ];
}

/**
 * The shell line that moves itself into `cgroupDirs` (writing its own PID to each `cgroup.procs`) and then execs its
 * arguments with output appended to `$LOG`, so that nspawn, which keeps the cgroup it starts in, makes its `payload/`
 * and `supervisor/` there instead of at the root of the host's hierarchies. Arguments: `sh -c <this> sh <cmd…>`.
 */
export function cgroupWrapperScript(cgroupDirs: string[]): string {
  const moves = cgroupDirs.map((dir) => `echo $$ > '${dir}/cgroup.procs'`).join(" && ");
  return `${moves ? `${moves} && ` : ""}exec "$@" >>"$LOG" 2>&1`;
}

/**
 * The cgroup directories made for one container: `<hierarchy>/<name>` in the named-systemd (v1) and unified (v2)
 * hierarchies that exist. `mounted` lists the entries of /sys/fs/cgroup; on a cgroup v2 only host, where
 * /sys/fs/cgroup itself is the unified hierarchy (it has `cgroup.procs`), the directory is `/sys/fs/cgroup/<name>`.
 */
export function containerCgroups(name: string, mounted: string[]): string[] {
  if (mounted.includes("cgroup.procs")) return [`/sys/fs/cgroup/${name}`];
  return ["systemd", "unified"].filter((h) => mounted.includes(h)).map((h) => `/sys/fs/cgroup/${h}/${name}`);
}

/** The fields of `/proc/<pid>/stat` the harness reads. */
export interface ProcStat {
  /** Process ID. */
  pid: number;
  /** Command name (up to 15 characters; may hold spaces and parentheses). */
  comm: string;
  /** Parent process ID. */
  ppid: number;
}

/** Reads `/proc/<pid>/stat`: `pid (comm) state ppid …`, where comm ends at the last `)`. */
export function parseProcStat(text: string): ProcStat {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) throw new Error(`not a /proc/<pid>/stat line: ${text.slice(0, 80)}`);
  const rest = text.slice(close + 2).split(" ");
  return { pid: Number(text.slice(0, open).trim()), comm: text.slice(open + 1, close), ppid: Number(rest[1]) };
}

/**
 * The container's init: the child of nspawn whose command name is `systemd`. Before it execs systemd, nspawn's
 * children are nspawn's own forks, and entering one of those would run the host's tools, not the container's.
 */
export function containerInit(processes: ProcStat[], nspawnPid: number): number | undefined {
  return processes.find((p) => p.ppid === nspawnPid && p.comm === "systemd")?.pid;
}

/** Reads `systemctl show` output (`Key=value` lines) into a record. */
export function parseSystemctlShow(text: string): Record<string, string> {
  const properties: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) properties[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return properties;
}

/** The fields of `/proc/<pid>/status` a test asserts on (real UID, seccomp mode, no-new-privileges, capabilities). */
export interface ProcessStatus {
  /** Real user ID. */
  uid: number;
  /** 0 off, 1 strict, 2 filter. */
  seccomp: number;
  /** The no_new_privs bit. */
  noNewPrivileges: boolean;
  /** Effective capabilities, hexadecimal. */
  effectiveCapabilities: string;
}

/** Reads `/proc/<pid>/status`. */
export function parseProcessStatus(text: string): ProcessStatus {
  const field = (name: string) => {
    const value = new RegExp(`^${name}:\\s*(.*)$`, "m").exec(text)?.[1];
    if (value === undefined) throw new Error(`/proc/<pid>/status has no ${name}: line`);
    return value.trim();
  };
  return {
    uid: Number(field("Uid").split(/\s+/)[0]),
    seccomp: Number(field("Seccomp")),
    noNewPrivileges: field("NoNewPrivs") === "1",
    effectiveCapabilities: field("CapEff"),
  };
}

/** Whether `uid` is one systemd allocates for `DynamicUser=`. */
export function isDynamicUid(uid: number): boolean {
  return uid >= DYNAMIC_UID_RANGE.first && uid <= DYNAMIC_UID_RANGE.last;
}
