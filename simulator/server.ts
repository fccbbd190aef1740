/**
 * Starts a simulator on a loopback port, in this process (tests, the demo) or as the `simulator` command, with its
 * data plane when the seed's `settings.data_plane` asks for one: the server owns both, and gives the data plane its
 * narrow view of the simulator's world ({@linkcode DataPlaneWorld}).
 *
 * @module
 */
import { simulatorApp } from "./app.ts";
import { DataPlane, type DataPlaneWorld } from "./data_plane/data_plane.ts";
import { defaultSeed, type Seed } from "./seed.ts";
import { Simulator, type SimulatorOptions } from "./simulator.ts";

/** A running simulator. */
export interface RunningSimulator {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** The simulator's state, for direct inspection and control. */
  sim: Simulator;
  /** Its data plane, when one runs. */
  dataPlane?: DataPlane;
  /** Stops serving; hanging requests end. */
  stop(): Promise<void>;
}

/** Options of {@linkcode startSimulator}. */
export interface StartSimulatorOptions extends SimulatorOptions {
  /** Seed; the default world when omitted. */
  seed?: Seed;
  /** Address to listen on (default 127.0.0.1). */
  hostname?: string;
  /** Port (default 0: any free port). */
  port?: number;
  /** TLS certificate and key (PEM) to serve HTTPS. */
  tls?: { cert: string; key: string };
  /** Where the data plane's lines go (default standard error). */
  dataPlaneLog?: (line: string) => void;
}

/** Starts a simulator and returns once it listens (and its data plane serves the seeded world). */
export async function startSimulator(options: StartSimulatorOptions = {}): Promise<RunningSimulator> {
  const sim = new Simulator(options.seed ?? defaultSeed(), options);
  const mode = sim.world.settings.data_plane;
  let dataPlane: DataPlane | undefined;
  if (mode !== "off") {
    dataPlane = new DataPlane(worldOf(sim), { mode, log: options.dataPlaneLog });
    await dataPlane.start();
  }
  const app = simulatorApp(sim, { dataPlane });
  const listening = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve({
    hostname: options.hostname ?? "127.0.0.1",
    port: options.port ?? 0,
    ...(options.tls ? { cert: options.tls.cert, key: options.tls.key } : {}),
    onListen: (addr) => listening.resolve(addr as Deno.NetAddr),
    onError: (error) => new Response(`simulator error: ${(error as Error).message}`, { status: 500 }),
  }, app.fetch);
  return listening.promise.then((addr) => {
    const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
    return {
      url: `${options.tls ? "https" : "http"}://${host}:${addr.port}`,
      sim,
      ...(dataPlane ? { dataPlane } : {}),
      async stop() {
        sim.shutdown.abort();
        await dataPlane?.stop();
        await server.shutdown();
      },
    };
  });
}

/** The data plane's view of `sim`'s world (read anew at every call: a reset replaces the world). */
function worldOf(sim: Simulator): DataPlaneWorld {
  return {
    loadBalancers: () => [...sim.loadBalancers.items.values()],
    edges: () => [...sim.edges.items.values()],
    networks: () => [...sim.world.networks.values()],
    certificates: () => sim.world.certificates,
    hardStopAfterMs: () => sim.world.settings.reload_hard_stop_after_ms,
    publicIpv4Ranges: () => sim.world.settings.public_ipv4_ranges,
    tick() {
      sim.world.tick();
      const due = [...sim.world.operations.values()].filter((op) => op.status === "running").map((op) => op.finishAt);
      return due.length ? Math.max(0, Math.min(...due) - sim.world.now()) : undefined;
    },
    markApplied: (loadBalancerId, generation) => sim.loadBalancers.markApplied(loadBalancerId, generation),
  };
}
