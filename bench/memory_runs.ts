/**
 * The two runs of the controller the memory benchmark makes at each stage:
 *
 * - {@linkcode measureRelease}: the release launcher as it ships, measured from outside (`/proc/<pid>/status`) at
 *   steady state — the figures the goals are about;
 * - {@linkcode measureHeap}: the same runtime, flags and permissions on a bundle that keeps class names (not minified),
 *   with an inspector on loopback: at the same moment, a forced full collection, the heap used after it and a heap
 *   snapshot, analysed into the controller's structures ({@linkcode STRUCTURES}). The inspector and the longer source
 *   cost a constant; the slopes between stages are the objects' own.
 *
 * Both: Ankra Cloud API unreachable (every Service is retried with backoff and events, as during an outage),
 * `--leader-elect=false --secure-port=0 --v=1`, an empty cache directory, and 20 samples 0.5 s apart after the
 * `caches synced` line (Deno does not give memory back, so the last is reported).
 *
 * @module
 */
import type { SharedControlPlane } from "../tests/support/control_plane/control_plane.ts";
import { permissionFlagsFor, V8_FLAGS_ARGUMENT } from "../lib/runtime_permissions.ts";
import { inspectHeap } from "./heap_inspector.ts";
import { analyseHeapSnapshot, type HeapAnalysis } from "./heap_snapshot.ts";

/**
 * The figures of `/proc/<pid>/status` the benchmark reports, in KiB, and where the private memory lies
 * (`/proc/<pid>/smaps`, anonymous KiB): the allocator's main heap (`[heap]`: with `MALLOC_ARENA_MAX=1` every small
 * allocation of the runtime, TLS and HTTP state, array buffers' contents), the runtime binary's own writable pages,
 * and every other anonymous mapping (V8's heap pages, large allocations, thread stacks).
 */
export interface Figures {
  VmRSS: number;
  VmHWM: number;
  RssAnon: number;
  RssFile: number;
  /** Anonymous KiB of `[heap]`. */
  mallocHeap: number;
  /** Anonymous KiB of file mappings (the binary's relocated data). */
  fileAnon: number;
  /** Anonymous KiB of the other mappings. */
  otherAnon: number;
}

function figures(pid: number): Figures {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)![1]);
  let mallocHeap = 0, fileAnon = 0, otherAnon = 0;
  let kind: "heap" | "file" | "other" = "other";
  for (const line of Deno.readTextFileSync(`/proc/${pid}/smaps`).split("\n")) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (mapping) {
      kind = mapping[2] === "[heap]" ? "heap" : mapping[1] !== "0" ? "file" : "other";
      continue;
    }
    const anonymous = /^Anonymous:\s+(\d+) kB/.exec(line);
    if (!anonymous) continue;
    const kib = Number(anonymous[1]);
    if (kind === "heap") mallocHeap += kib;
    else if (kind === "file") fileAnon += kib;
    else otherAnon += kib;
  }
  return {
    VmRSS: field("VmRSS"),
    VmHWM: field("VmHWM"),
    RssAnon: field("RssAnon"),
    RssFile: field("RssFile"),
    mallocHeap,
    fileAnon,
    otherAnon,
  };
}

/**
 * The controller's classes whose instances the heap run reports, each with the fields that lead to a string telling
 * its instances apart (an informer's resource, a queue's name, a recorder's component).
 */
export const STRUCTURES: ReadonlyMap<string, readonly string[]> = new Map([
  ["Informer", ["#options", "name"]],
  ["Store", []],
  ["WorkQueue", ["#options", "name"]],
  ["EventRecorder", ["#options", "component"]],
  ["CloudView", []],
  ["NodeController", []],
  ["NodeLifecycleController", []],
  ["JoinWindow", []],
  ["ServiceController", []],
  ["ServicePass", []],
  ["ServiceReporter", []],
  ["ServiceReadiness", []],
  ["ServiceOnNodes", []],
  ["ServiceLookup", []],
  ["ServiceShare", []],
  ["LoadBalancerDirectory", []],
  ["LoadBalancerPlacement", []],
  ["PlacementFacts", []],
  ["ProvisioningTracker", []],
  ["ReadyEndpoints", []],
  ["KubeClient", []],
  ["AnkraCloudClient", []],
  ["CloudTransport", []],
  ["CloudRequestBudget", []],
  ["MetricsRegistry", []],
  ["LeaderElector", []],
]);

/** The classes whose map's objects are theirs alone: a store's slim objects are counted in the store. */
export const CONTAINERS: ReadonlyMap<string, string> = new Map([["Store", "#items"]]);

const controllerArgs = (plane: SharedControlPlane) => [
  `--kubeconfig=${plane.kubeconfigPath}`,
  "--leader-elect=false",
  "--secure-port=0",
  "--v=1",
];

/** The cloud is unreachable: the controllers retry every Service with backoff and events, as during an outage. */
const CONTROLLER_ENV = {
  ANKRA_CLOUD_TOKEN: "act_bench-token-not-used",
  ANKRA_CLOUD_API_URL: "https://127.0.0.1:1",
};

/** Starts `command`, waits for its `caches synced` line, lets it run `settleMs`, calls `sample`, and stops it. */
async function runSynced<T>(
  command: Deno.Command,
  sample: (pid: number) => Promise<T>,
): Promise<T & { syncLine: string }> {
  const child = command.spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let syncLine = "";
  try {
    while (!syncLine) {
      const { value, done } = await lines.read();
      if (done) throw new Error(`controller ended before syncing:\n${text.slice(-2000)}`);
      text = (text + value).slice(-20_000);
      syncLine = /caches synced[^\n]*/.exec(text)?.[0] ?? "";
    }
  } catch (cause) {
    child.kill("SIGKILL");
    await child.status;
    throw cause;
  }
  // Keep reading its log so a full pipe never stalls it.
  const drained = (async () => {
    while (!(await lines.read()).done);
  })().catch(() => {});
  try {
    return { ...await sample(child.pid), syncLine };
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await drained;
  }
}

/** Steady state: 20 samples 0.5 s apart after the sync; the last one. */
async function steadyFigures(pid: number): Promise<Figures> {
  let last = figures(pid);
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    last = figures(pid);
  }
  return last;
}

/**
 * Empties the release's cache directory. An installed release cannot write it (read-only, not root's), so every start
 * begins with an empty one; this benchmark runs as whatever user it is given, often root, who could.
 */
function emptyCacheDirectory(launcher: string): void {
  const cache = new URL("../lib/ankra-cloud-ccm/deno-dir/", `file://${launcher.replace(/[^/]*$/, "")}`).pathname;
  for (const entry of Deno.readDirSync(cache)) Deno.removeSync(`${cache}${entry.name}`, { recursive: true });
}

/** The release launcher at steady state. The launcher execs the runtime: the process keeps its pid. */
export function measureRelease(launcher: string, plane: SharedControlPlane): Promise<Figures & { syncLine: string }> {
  emptyCacheDirectory(launcher);
  // No allocator variables: the launcher's own settings are measured.
  const command = new Deno.Command(launcher, {
    args: controllerArgs(plane),
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...CONTROLLER_ENV },
    clearEnv: true,
    stdout: "piped",
    stderr: "null",
  });
  return runSynced(command, steadyFigures);
}

/** What the heap run finds at one stage. */
export interface HeapFigures {
  /** The inspected process's figures just before the collection (inspector included). */
  process: Figures;
  /** Bytes used by the JavaScript heap after a forced full collection. */
  heapUsed: number;
  /** The snapshot's analysis. */
  analysis: HeapAnalysis;
}

/**
 * The bundle `main.ts` of this tree makes without `--minify` (its classes keep their names), in a temporary file: a
 * bench-only build (`BENCH_HEAP_BUNDLE` names another).
 */
export async function namedBundle(): Promise<string> {
  const given = Deno.env.get("BENCH_HEAP_BUNDLE");
  if (given) return given;
  const out = `${await Deno.makeTempDir({ prefix: "ccm-heap-" })}/ankra-cloud-ccm.js`;
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--platform=deno", "-o", out, new URL("../main.ts", import.meta.url).pathname],
    stdout: "null",
    stderr: "inherit",
  }).output();
  if (!result.success) throw new Error("deno bundle (without --minify) failed");
  return out;
}

/** A free loopback port for the inspector. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/**
 * `bundle` on the release's runtime (beside `launcher`) with the release's permissions and V8 flags and an inspector:
 * at the moment {@linkcode measureRelease} reads its figures, a full collection, the heap used and a snapshot.
 */
export async function measureHeap(
  launcher: string,
  bundle: string,
  plane: SharedControlPlane,
): Promise<HeapFigures & { syncLine: string }> {
  const runtime = new URL("../lib/ankra-cloud-ccm/deno", `file://${launcher.replace(/[^/]*$/, "")}`).pathname;
  const denoDir = await Deno.makeTempDir({ prefix: "ccm-heap-deno-dir-" });
  const port = freePort();
  const args = controllerArgs(plane);
  const command = new Deno.Command(runtime, {
    args: [
      "run",
      ...permissionFlagsFor(args, {}),
      V8_FLAGS_ARGUMENT,
      `--inspect=127.0.0.1:${port}`,
      "--cached-only",
      "--no-code-cache",
      "--no-config",
      "--no-prompt",
      bundle,
      ...args,
    ],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", DENO_DIR: denoDir, MALLOC_ARENA_MAX: "1", ...CONTROLLER_ENV },
    clearEnv: true,
    stdout: "piped",
    stderr: "null",
  });
  try {
    return await runSynced(command, async (pid) => {
      const process = await steadyFigures(pid);
      const inspected = await inspectHeap(port);
      const analysis = analyseHeapSnapshot(inspected.snapshot, STRUCTURES, CONTAINERS);
      return { process, heapUsed: inspected.usedBytes, analysis };
    });
  } finally {
    await Deno.remove(denoDir, { recursive: true });
  }
}
