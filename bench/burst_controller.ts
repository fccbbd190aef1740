/**
 * The burst benchmark's Ankra Cloud and controller (bench/burst_bench.ts): the simulator's seed and servers, and the
 * program measured (the release bundle, or `BENCH_MAIN`) run as a process with the release's permissions and
 * flags, named from the controller's own option table.
 *
 * @module
 */
import type { RunningSimulator } from "../simulator/server.ts";
import { parseSeed } from "../simulator/seed.ts";
import { OPTIONS } from "../lib/config/options.ts";
import { permissionFlagsFor } from "../lib/runtime_permissions.ts";
import { releaseBundle } from "./release_bundle.ts";
import { plane } from "./burst_kube.ts";
import { DENO_FLAGS, EXTRA_ARGS, EXTRA_ENV, LB_DELAY_MS, NETWORK, TOKEN, ZONE } from "./burst_settings.ts";

/** The program measured: the release bundle (built here), or BENCH_MAIN. */
export const MAIN = await releaseBundle();

/** The simulator's seed: zone, network and token of the benchmark, the rate limit `limit`, quota 10,000. */
export function seed(limit: number) {
  return parseSeed({
    settings: {
      load_balancer_create_delay_ms: LB_DELAY_MS,
      load_balancer_delete_delay_ms: 1000,
      load_balancer_quota: 10_000,
      rate_limit_per_minute: limit,
    },
    tokens: [{ token: TOKEN, scope: "read_write" }],
    zones: [{ name: ZONE, region: "eu-central", display_name: "Falkenstein 1", compute_nodes: 2 }],
    networks: [{ id: NETWORK, name: "private", zone: ZONE, cidr: "10.0.0.0/16", ula_prefix: "fd64:1:0:1::/64" }],
  });
}

/** Adds a started server with each of `hostnames` (zone, network of the benchmark) to the simulator. */
export function addServers(sim: RunningSimulator, hostnames: string[]): void {
  for (const hostname of hostnames) {
    sim.sim.world.addServer({
      hostname,
      zone: ZONE,
      plan: "standard-2c-4g",
      state: "started",
      labels: {},
      interfaces: [{ network_id: NETWORK }],
    });
  }
}

/** A controller process of the benchmark, its output in `logPath`. */
export interface Controller {
  /** The process. */
  child: Deno.ChildProcess;
  /** File with its standard output and error. */
  logPath: string;
  /** Set when the process ended on its own. */
  exited?: Deno.CommandStatus;
  /** SIGTERM, SIGKILL after 15 s; resolves once it exited and its log is written. */
  stop(): Promise<void>;
}

/** Controller processes alive now: killed when the benchmark is interrupted. */
export const running = new Set<Deno.ChildProcess>();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => {
    for (const child of running) {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
    }
    Deno.exit(130);
  });
}

/**
 * Starts the program measured against the simulator at `simUrl` with the release's permission flags (those of
 * lib/runtime_permissions.ts, as the launcher gives them) and resolves once its caches synced (120 s at most).
 */
export async function startController(simUrl: string, logPath: string): Promise<Controller> {
  const args = [
    `--${OPTIONS.kubeconfig.flag}=${plane.kubeconfigPath}`,
    `--${OPTIONS.leaderElect.flag}=false`,
    `--${OPTIONS.securePort.flag}=0`,
    `--${OPTIONS.clusterName.flag}=bench`,
    `--${OPTIONS.verbosity.flag}=1`,
    ...EXTRA_ARGS,
  ];
  const environment: Record<string, string> = {
    [OPTIONS.token.env as string]: TOKEN,
    [OPTIONS.apiUrl.env as string]: simUrl,
    [OPTIONS.networkId.env as string]: NETWORK,
    MALLOC_ARENA_MAX: "1",
    ...EXTRA_ENV,
  };
  const file = await Deno.open(logPath, { write: true, create: true, truncate: true });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissionFlagsFor(args, environment), ...DENO_FLAGS, MAIN, ...args],
    env: environment,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  running.add(child);
  child.status.finally(() => running.delete(child));
  const synced = Promise.withResolvers<void>();
  let head = "";
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      for (let at = 0; at < chunk.length;) at += await file.write(chunk.subarray(at));
      if (head !== "done") {
        head += decoder.decode(chunk, { stream: true });
        if (/caches synced/.test(head)) {
          head = "done";
          synced.resolve();
        } else if (head.length > 1_000_000) head = head.slice(-10_000);
      }
    }
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]).finally(() => file.close());
  const controller: Controller = {
    child,
    logPath,
    async stop() {
      if (!controller.exited) {
        try {
          child.kill("SIGTERM");
        } catch { /* gone */ }
        const timer = setTimeout(() => {
          try {
            child.kill("SIGKILL");
          } catch { /* gone */ }
        }, 15_000);
        await child.status;
        clearTimeout(timer);
      }
      await pumps.catch(() => {});
    },
  };
  child.status.then((status) => {
    controller.exited = status;
    synced.reject(new Error(`the controller ended (code ${status.code}) before its caches synced; log: ${logPath}`));
  });
  const timer = setTimeout(() => synced.reject(new Error(`no "caches synced" within 120 s; log: ${logPath}`)), 120_000);
  try {
    await synced.promise;
  } catch (error) {
    await controller.stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return controller;
}
