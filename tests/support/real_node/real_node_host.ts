/**
 * The host side of a real single-node cluster: whether this machine can run one (the gate), the changes a cluster
 * makes to the host outside its directory (an address on `lo`, netfilter rules, cgroups, mounts) and their removal,
 * and the check that nothing is left behind.
 *
 * @module
 */
import { builtBy } from "../control_plane/control_plane_processes.ts";

/** What the gate looks at. */
export interface HostFacts {
  /** This process's uid. */
  uid: number;
  /** Filesystems the kernel knows (`/proc/filesystems`). */
  filesystems: string[];
  /** Commands found on PATH. */
  commands: string[];
  /** True when a memory cgroup (v1 hierarchy or v2 with the memory controller) is writable. */
  cgroupsWritable: boolean;
}

/** Commands a real node needs, with the Debian package that has each. */
export const REAL_NODE_COMMANDS: Record<string, string> = {
  runc: "runc",
  iptables: "iptables",
  ip6tables: "iptables",
  skopeo: "skopeo",
  openssl: "openssl",
  ip: "iproute2",
  go: "golang (Go 1.25+)",
  gcc: "gcc and libc6-dev",
};

/**
 * Why this machine cannot run a real node, or an empty list when it can. Each reason names what is missing and what
 * to do.
 */
export function realNodeBlockers(facts: HostFacts): string[] {
  const reasons: string[] = [];
  if (facts.uid !== 0) reasons.push("not root: a kubelet and containerd need root (run the tests as root, as CI does)");
  if (!facts.filesystems.includes("overlay")) {
    reasons.push("no overlayfs in this kernel (containerd's snapshotter): load the overlay module");
  }
  const missing = Object.keys(REAL_NODE_COMMANDS).filter((c) => !facts.commands.includes(c));
  if (missing.length > 0) {
    const packages = [...new Set(missing.map((c) => REAL_NODE_COMMANDS[c]))];
    reasons.push(`missing ${missing.join(", ")}: install the Debian packages ${packages.join(", ")}`);
  }
  if (!facts.cgroupsWritable) reasons.push("no writable memory cgroup: the kubelet cannot create pod cgroups here");
  return reasons;
}

/** Finds `command` on PATH. */
export function which(command: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (dir && Deno.statSync(`${dir}/${command}`).isFile) return `${dir}/${command}`;
    } catch { /* not here */ }
  }
  return undefined;
}

/** Reads the facts {@linkcode realNodeBlockers} decides on. */
export function readHostFacts(): HostFacts {
  let filesystems: string[] = [];
  try {
    filesystems = Deno.readTextFileSync("/proc/filesystems").split("\n").map((l) => l.trim().split(/\s+/).pop() ?? "");
  } catch { /* not Linux */ }
  let cgroupsWritable = false;
  for (const dir of ["/sys/fs/cgroup/memory", "/sys/fs/cgroup"]) {
    try {
      const probe = `${dir}/ccm-real-node-probe-${Deno.pid}`;
      Deno.mkdirSync(probe);
      Deno.removeSync(probe);
      cgroupsWritable = true;
      break;
    } catch { /* not writable here */ }
  }
  return {
    uid: Deno.uid() ?? -1,
    filesystems,
    commands: Object.keys(REAL_NODE_COMMANDS).filter((c) => which(c) !== undefined),
    cgroupsWritable,
  };
}

async function output(command: string, args: string[]): Promise<{ ok: boolean; text: string }> {
  try {
    const out = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).output();
    const decoder = new TextDecoder();
    return { ok: out.success, text: decoder.decode(out.stdout) + decoder.decode(out.stderr) };
  } catch (cause) {
    return { ok: false, text: String(cause) };
  }
}

/** The host state a cluster may leave behind. */
export interface HostState {
  /** Mount points under the cluster's directory. */
  mounts: string[];
  /** iptables / ip6tables rules and chains whose name starts with `KUBE-`. */
  netfilter: string[];
  /** `kubepods` cgroup directories. */
  cgroups: string[];
  /** Whether the node IP is still on `lo`. */
  loAddress: boolean;
}

/** Reads what {@linkcode HostState} describes, for the cluster in `dir` with `nodeIp`. */
export async function readHostState(dir: string, nodeIp: string): Promise<HostState> {
  const mounts = (await Deno.readTextFile("/proc/self/mounts")).split("\n").map((l) => l.split(" ")[1] ?? "")
    .filter((m) => m.startsWith(`${dir}/`));
  const netfilter: string[] = [];
  for (const tool of ["iptables", "ip6tables"]) {
    for (const table of ["filter", "nat", "mangle"]) {
      const listed = await output(tool, ["-w", "-t", table, "-S"]);
      for (const line of listed.text.split("\n")) {
        if (line.includes("KUBE-")) netfilter.push(`${tool} -t ${table} ${line}`);
      }
    }
  }
  const cgroups: string[] = [];
  for (const entry of Deno.readDirSync("/sys/fs/cgroup")) {
    const path = entry.name === "kubepods" ? "/sys/fs/cgroup/kubepods" : `/sys/fs/cgroup/${entry.name}/kubepods`;
    try {
      if (Deno.statSync(path).isDirectory) cgroups.push(path);
    } catch { /* none */ }
  }
  const lo = await output("ip", ["-4", "-o", "addr", "show", "dev", "lo"]);
  return { mounts, netfilter, cgroups, loAddress: lo.text.includes(` ${nodeIp}/`) };
}

/** One line per thing left behind; empty when the host is clean. */
export function describeLeftovers(state: HostState): string[] {
  return [
    ...state.mounts.map((m) => `mount ${m}`),
    ...state.netfilter,
    ...state.cgroups.map((c) => `cgroup ${c}`),
    ...(state.loAddress ? ["the node IP on lo"] : []),
  ];
}

/** Adds `nodeIp/32` to `lo`; throws, saying why, when it is already there (another cluster uses it). */
export async function addLoAddress(nodeIp: string): Promise<void> {
  const added = await output("ip", ["addr", "add", `${nodeIp}/32`, "dev", "lo"]);
  if (!added.ok) {
    throw new Error(`could not add ${nodeIp}/32 to lo (${added.text.trim()}): is another real-node cluster running?`);
  }
}

/**
 * Removes what a cluster changed on the host outside its directory: kube-proxy's rules (`kube-proxy --cleanup`), the
 * kubelet's own chains (which kube-proxy's cleanup leaves: KUBE-FIREWALL drops non-loopback traffic to 127/8), mounts
 * under `dir` (deepest first), empty `kubepods` cgroups and the node IP on `lo`. Safe to run twice.
 */
export async function cleanHost(options: { dir: string; nodeIp: string; kubeProxy?: string }): Promise<void> {
  if (options.kubeProxy) await output(options.kubeProxy, ["--cleanup"]);
  for (const tool of ["iptables", "ip6tables"]) {
    await output(tool, ["-w", "-D", "INPUT", "-j", "KUBE-FIREWALL"]);
    await output(tool, ["-w", "-D", "OUTPUT", "-j", "KUBE-FIREWALL"]);
    await output(tool, ["-w", "-F", "KUBE-FIREWALL"]);
    await output(tool, ["-w", "-X", "KUBE-FIREWALL"]);
    for (const table of ["filter", "nat", "mangle"]) {
      await output(tool, ["-w", "-t", table, "-X", "KUBE-KUBELET-CANARY"]);
    }
    await output(tool, ["-w", "-t", "mangle", "-X", "KUBE-IPTABLES-HINT"]);
  }
  const state = await readHostState(options.dir, options.nodeIp);
  for (const mount of state.mounts.sort().reverse()) {
    if (!(await output("umount", [mount])).ok) await output("umount", ["-l", mount]);
  }
  for (const root of state.cgroups) removeEmptyTree(root);
  if (state.loAddress) await output("ip", ["addr", "del", `${options.nodeIp}/32`, "dev", "lo"]);
}

function removeEmptyTree(path: string): void {
  try {
    for (const entry of Deno.readDirSync(path)) if (entry.isDirectory) removeEmptyTree(`${path}/${entry.name}`);
    Deno.removeSync(path);
  } catch { /* still in use, or gone */ }
}

/**
 * The PIDs of processes whose working directory is under `dir`: containerd's shims work in their task's directory
 * (`<state>/io.containerd.runtime.v2.task/<namespace>/<id>`), and outlive containerd.
 */
export function processesWorkingUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      if (Deno.readLinkSync(`/proc/${entry.name}/cwd`).startsWith(`${dir}/`)) pids.push(Number(entry.name));
    } catch { /* gone, or not ours to read */ }
  }
  return pids;
}

/** The PIDs of processes whose command line contains `text` (e.g. a configuration file in a test's directory). */
export function processesWithArgument(text: string): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name) || Number(entry.name) === Deno.pid) continue;
    try {
      if (Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0").includes(text)) {
        pids.push(Number(entry.name));
      }
    } catch { /* gone */ }
  }
  return pids;
}

/** Kills (SIGKILL) containerd's shims of the cluster whose containerd state is `stateDir`. */
export function killShims(stateDir: string): void {
  for (const pid of processesWorkingUnder(stateDir)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* already gone */ }
  }
}

/** The cgroup directory of a container under `kubepods`: in `controller`'s v1 hierarchy, or the unified one. */
export function containerCgroup(containerId: string, controller: string): string {
  const roots = [`/sys/fs/cgroup/${controller}/kubepods`, "/sys/fs/cgroup/kubepods"];
  const search = (path: string, depth: number): string | undefined => {
    if (depth > 4) return undefined;
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(path)];
    } catch {
      return undefined;
    }
    for (const entry of entries) {
      if (!entry.isDirectory) continue;
      if (entry.name === containerId) return `${path}/${entry.name}`;
      const found = search(`${path}/${entry.name}`, depth + 1);
      if (found) return found;
    }
    return undefined;
  };
  for (const root of roots) {
    const found = search(root, 0);
    if (found) return found;
  }
  throw new Error(`no cgroup of container ${containerId} under ${roots.join(" or ")}`);
}

/**
 * A `sh` line that kills every process whose command line names a path under `dir`: the processes a watchdog's PID
 * list cannot hold, because they started after it (kube-proxy's restarts). The shell running the line names `dir`
 * too, and is spared.
 */
export function killNamingDirLine(dir: string): string {
  return `for p in /proc/[0-9]*; do [ "\${p#/proc/}" = "$$" ] && continue; ` +
    `case "$(tr '\\0' ' ' < "$p/cmdline" 2>/dev/null)" in *"${dir}/"*) kill -KILL "\${p#/proc/}";; esac; done`;
}

/** What {@linkcode crashCleanupScript} cleans up after. */
export interface CrashCleanup {
  /** The test process: the script acts once it has gone. */
  parent: number;
  /** The cluster's processes. */
  pids: number[];
  /** The cluster's directory. */
  dir: string;
  /** The node IP on `lo`. */
  nodeIp: string;
  /** kube-proxy, for `--cleanup`. */
  kubeProxy: string;
  /** runc, to remove the containers the kubelet left. */
  runc: string;
  /** Other directories to remove (the registry's). */
  otherDirs?: string[];
}

/**
 * A `sh` script that waits until the test process has gone and then does what {@linkcode cleanHost} and the orderly
 * stop would have done: stops the cluster's processes, removes the containers (with runc, in containerd's runc root)
 * and their shims, kube-proxy's and the kubelet's netfilter rules, the mounts, the `kubepods` cgroups, the node IP and
 * the directory. For a test process killed without its cleanup (the orderly stop kills the watchdog first).
 */
export function crashCleanupScript(c: CrashCleanup): string {
  const pids = c.pids.join(" ");
  const runc = `${c.runc} --root ${c.dir}/run/runc/k8s.io`;
  const chains = ["iptables", "ip6tables"].map((t) =>
    `${t} -w -D INPUT -j KUBE-FIREWALL; ${t} -w -D OUTPUT -j KUBE-FIREWALL; ${t} -w -F KUBE-FIREWALL; ` +
    `${t} -w -X KUBE-FIREWALL; for table in filter nat mangle; do ${t} -w -t $table -X KUBE-KUBELET-CANARY; done; ` +
    `${t} -w -t mangle -X KUBE-IPTABLES-HINT`
  ).join("; ");
  return [
    `while kill -0 ${c.parent} 2>/dev/null; do sleep 1; done`,
    `exec >/dev/null 2>&1`,
    `kill -TERM ${pids}; sleep 5; kill -KILL ${pids}`,
    `for id in $(${runc} list -q); do ${runc} delete -f "$id"; done`,
    // containerd's shims work in their task's directory and outlive containerd.
    `for p in /proc/[0-9]*; do case "$(readlink "$p/cwd")" in ${c.dir}/*) kill -KILL "\${p#/proc/}";; esac; done`,
    killNamingDirLine(c.dir),
    `${c.kubeProxy} --cleanup`,
    chains,
    `awk -v d="${c.dir}/" 'index($2, d) == 1 {print $2}' /proc/self/mounts | sort -r | while read -r m; do umount "$m" || umount -l "$m"; done`,
    `for h in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do [ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} \\;; done`,
    `ip addr del ${c.nodeIp}/32 dev lo`,
    `rm -rf ${[c.dir, ...(c.otherDirs ?? [])].join(" ")}`,
    "exit 0",
  ].join("\n");
}

/** Runs `scripts/node_binaries.sh` (building on first use) and returns the directory it prints. */
export function locateNodeBinaries(): Promise<string> {
  return builtBy("node_binaries.sh", "node binaries", "Go 1.25+, gcc and libc6-dev");
}
