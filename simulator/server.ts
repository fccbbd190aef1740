/**
 * Starts a simulator on a loopback port, in this process (tests, the demo) or as the `simulator` command, with its
 * data plane when the seed's `settings.data_plane` asks for one.
 *
 * @module
 */
import { simulatorApp } from "./app.ts";
import { DataPlane } from "./data_plane/data_plane.ts";
import { defaultSeed, type Seed } from "./seed.ts";
import { Simulator, type SimulatorOptions } from "./simulator.ts";

/** A running simulator. */
export interface RunningSimulator {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** The simulator's state, for direct inspection and control. */
  sim: Simulator;
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
  if (mode !== "off") {
    const dataPlane = new DataPlane(sim, { mode, log: options.dataPlaneLog });
    await dataPlane.start();
    sim.dataPlane = dataPlane;
  }
  const app = simulatorApp(sim);
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
      async stop() {
        sim.shutdown.abort();
        await sim.dataPlane?.stop();
        await server.shutdown();
      },
    };
  });
}
