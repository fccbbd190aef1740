/**
 * The host side of the real two-node cluster (tests/support/real_cluster/real_cluster.ts): whether this machine can run
 * it, the network namespaces and routes of its plan (`real_cluster_topology.ts`) made and removed with `ip`, the
 * per-node cgroup roots, processes started inside a namespace with `nsenter --net` (it execs, so the PID is the
 * program's and PID-based teardown keeps working; `ip netns exec` would remount /sys and hide the cgroups from the
 * kubelet), the check that nothing is left behind and the watchdog script for a test process killed without its
 * cleanup.
 *
 * @module
 */
import { builtBy } from "../control_plane/control_plane_processes.ts";
import { type HostFacts, killNamingDirLine, realNodeBlockers } from "../real_node/real_node_host.ts";
import {
  cloudNamespaceCommands,
  type ClusterTopology,
  namespaceSysctls,
  setupCommands,
  teardownCommands,
  topologyLeftovers,
} from "./real_cluster_topology.ts";

// The wait for a starting component, from here too: real_cluster.ts and real_cluster_node.ts import it from here.
export { untilAlive } from "../wait/until_alive.ts";

/** Where Debian's containernetworking-plugins puts the plugins. */
export const CNI_PLUGIN_DIR = "/usr/lib/cni";

/** What the cluster needs beyond a real node: `nsenter` (util-linux) and the CNI plugins. */
export interface ClusterFacts extends HostFacts {
  /** True when `nsenter` is on PATH. */
  nsenter: boolean;
  /** The CNI plugins found in {@linkcode CNI_PLUGIN_DIR}. */
  cniPlugins: string[];
  /** True when `/run/netns` can be used (`ip netns add` works). */
  netns: boolean;
}

/** Why this machine cannot run the real cluster, or an empty list when it can; each reason says what to do. */
export function realClusterBlockers(facts: ClusterFacts): string[] {
  const reasons = realNodeBlockers(facts);
  if (!facts.nsenter) reasons.push("missing nsenter: install the Debian package util-linux");
  const missing = ["bridge", "host-local", "loopback", "portmap"].filter((p) => !facts.cniPlugins.includes(p));
  if (missing.length > 0) {
    reasons.push(
      `missing CNI plugins ${missing.join(", ")} in ${CNI_PLUGIN_DIR}: install the Debian package ` +
        "containernetworking-plugins",
    );
  }
  if (!facts.netns && facts.uid === 0) reasons.push("`ip netns add` fails here: the kernel needs network namespaces");
  return reasons;
}

/** Runs a command; the result's text is stdout + stderr. */
export async function output(command: string, args: string[]): Promise<{ ok: boolean; text: string }> {
  try {
    const out = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped", stdin: "null" }).output();
    const decoder = new TextDecoder();
    return { ok: out.success, text: decoder.decode(out.stdout) + decoder.decode(out.stderr) };
  } catch (cause) {
    return { ok: false, text: String(cause) };
  }
}

/** Reads the facts {@linkcode realClusterBlockers} decides on (`base` from `readHostFacts`). */
export async function readClusterFacts(base: HostFacts): Promise<ClusterFacts> {
  let cniPlugins: string[] = [];
  try {
    cniPlugins = [...Deno.readDirSync(CNI_PLUGIN_DIR)].map((e) => e.name);
  } catch { /* not installed */ }
  let netns = false;
  if (base.uid === 0) {
    const probe = `ccm-probe-${Deno.pid}`;
    netns = (await output("ip", ["netns", "add", probe])).ok;
    if (netns) await output("ip", ["netns", "del", probe]);
  }
  return { ...base, nsenter: (await output("nsenter", ["--version"])).ok, cniPlugins, netns };
}

/** The argv that runs `command args…` inside network namespace `netns` (same PID, host mount namespace). */
export function inNetns(netns: string, command: string, args: string[]): [string, string[]] {
  return ["nsenter", [`--net=/run/netns/${netns}`, "--", command, ...args]];
}

/**
 * Makes the plan: first (`cloud namespace`) the backstops and the bare cloud namespace, then (`rest`) the node
 * namespaces, veths, bridge, addresses, routes and sysctls.
 *
 * @throws naming the `ip` command that failed (the caller tears down).
 */
export async function buildTopology(t: ClusterTopology, part: "cloud namespace" | "rest"): Promise<void> {
  for (const args of part === "cloud namespace" ? cloudNamespaceCommands(t) : setupCommands(t)) {
    const done = await output("ip", args);
    if (!done.ok) throw new Error(`\`ip ${args.join(" ")}\` failed: ${done.text.trim()}`);
  }
  if (part === "cloud namespace") return;
  for (const [netns, sysctls] of Object.entries(namespaceSysctls(t))) {
    for (const [key, value] of Object.entries(sysctls)) {
      const [command, args] = inNetns(netns, "sysctl", ["-q", "-w", `${key.replaceAll("/", ".")}=${value}`]);
      const done = await output(command, args);
      if (!done.ok) throw new Error(`sysctl ${key}=${value} in ${netns} failed: ${done.text.trim()}`);
    }
  }
}

/** Removes the plan (namespaces, the host veth, routes, backstops); safe to run twice or on a half-made plan. */
export async function removeTopology(t: ClusterTopology): Promise<void> {
  for (const args of teardownCommands(t)) await output("ip", args);
}

/** The cgroup v1 hierarchies (or the unified one) under /sys/fs/cgroup. */
function hierarchies(): string[] {
  try {
    return [...Deno.readDirSync("/sys/fs/cgroup")].filter((e) => e.isDirectory).map((e) => `/sys/fs/cgroup/${e.name}`);
  } catch {
    return [];
  }
}

/**
 * Creates the kubelet's `cgroupRoot` (`/<name>`) in every hierarchy (the kubelet refuses a root that does not exist),
 * copying the cpuset's CPUs and memory nodes from the parent.
 */
export function makeCgroupRoot(name: string): void {
  for (const hierarchy of hierarchies()) {
    const path = `${hierarchy}/${name}`;
    try {
      Deno.mkdirSync(path);
    } catch (cause) {
      if (!(cause instanceof Deno.errors.AlreadyExists)) continue;
    }
    if (hierarchy.endsWith("/cpuset")) {
      for (const file of ["cpuset.cpus", "cpuset.mems"]) {
        Deno.writeTextFileSync(`${path}/${file}`, Deno.readTextFileSync(`${hierarchy}/${file}`));
      }
    }
  }
}

/** Removes the cgroup root `/<name>` (depth first, empty directories only) from every hierarchy. */
export function removeCgroupRoot(name: string): void {
  const remove = (path: string) => {
    try {
      for (const entry of Deno.readDirSync(path)) if (entry.isDirectory) remove(`${path}/${entry.name}`);
      Deno.removeSync(path);
    } catch { /* still in use, or gone */ }
  };
  for (const hierarchy of hierarchies()) remove(`${hierarchy}/${name}`);
}

/** The cgroup roots `/<name>` still present, one path each. */
export function cgroupRootsLeft(names: string[]): string[] {
  const left: string[] = [];
  for (const hierarchy of hierarchies()) {
    for (const name of names) {
      try {
        if (Deno.statSync(`${hierarchy}/${name}`).isDirectory) left.push(`cgroup ${hierarchy}/${name}`);
      } catch { /* gone */ }
    }
  }
  return left;
}

/** What of the plan is still on the host: namespaces, the host veth, routes and backstops. */
export async function readTopologyLeftovers(t: ClusterTopology): Promise<string[]> {
  return topologyLeftovers(t, {
    netns: (await output("ip", ["netns", "list"])).text,
    links: (await output("ip", ["-o", "link"])).text,
    routes4: (await output("ip", ["route", "show", "table", "all"])).text,
    routes6: (await output("ip", ["-6", "route", "show", "table", "all"])).text,
  });
}

/** What {@linkcode clusterCrashCleanup} cleans up after. */
export interface ClusterCrashCleanup {
  /** The test process: the script acts once it has gone. */
  parent: number;
  /** The cluster's processes. */
  pids: number[];
  /** The cluster's directory. */
  dir: string;
  /** The runc roots of the nodes' containerds. */
  runcRoots: string[];
  /** runc. */
  runc: string;
  /** The kubelets' cgroup roots. */
  cgroupRoots: string[];
  /** The plan. */
  topology: ClusterTopology;
}

/**
 * A `sh` script that waits until the test process has gone and then does what the orderly stop would have done:
 * stops the processes, removes the containers and their shims, the mounts under the directory, the cgroup roots, the
 * namespaces, veth, routes and backstops, and the directory.
 */
export function clusterCrashCleanup(c: ClusterCrashCleanup): string {
  const pids = c.pids.join(" ");
  const quote = (args: string[]) => args.map((a) => `'${a}'`).join(" ");
  return [
    `while kill -0 ${c.parent} 2>/dev/null; do sleep 1; done`,
    `exec >/dev/null 2>&1`,
    `kill -TERM ${pids}; sleep 5; kill -KILL ${pids}`,
    ...c.runcRoots.map((root) =>
      `for id in $(${c.runc} --root ${root} list -q); do ${c.runc} --root ${root} delete -f "$id"; done`
    ),
    `for p in /proc/[0-9]*; do case "$(readlink "$p/cwd")" in ${c.dir}/*) kill -KILL "\${p#/proc/}";; esac; done`,
    killNamingDirLine(c.dir),
    `awk -v d="${c.dir}/" 'index($2, d) == 1 {print $2}' /proc/self/mounts | sort -r | while read -r m; do umount "$m" || umount -l "$m"; done`,
    ...c.cgroupRoots.map((root) =>
      `for h in /sys/fs/cgroup/*; do [ -d "$h/${root}" ] && find "$h/${root}" -depth -type d -exec rmdir {} \\;; done`
    ),
    ...teardownCommands(c.topology).map((args) => `ip ${quote(args)}`),
    `rm -rf ${c.dir}`,
    "exit 0",
  ].join("\n");
}

/** Runs `scripts/e2e_binaries.sh` (building on first use) and returns the directory it prints. */
export function locateE2eBinaries(): Promise<string> {
  return builtBy("e2e_binaries.sh", "e2e binaries", "Go 1.25+");
}

/** The last `lines` lines of a log file, or `(no log)`. */
export async function logTail(file: string, lines: number): Promise<string> {
  try {
    return (await Deno.readTextFile(file)).trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}
