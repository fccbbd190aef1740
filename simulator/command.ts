/**
 * `ankra-cloud-simulator --listen HOST:PORT [--seed FILE] [--token TOKEN] [--data-plane=loopback|netns]`: runs the
 * local Ankra Cloud API simulator until SIGINT or SIGTERM. `--token` adds a token with operate scope (or read the
 * token from the environment variable `ANKRA_CLOUD_TOKEN` with `--token-from-env`, so it does not appear in the
 * process list). `--data-plane` makes load balancers carry traffic through HAProxy (overrides the seed's
 * `settings.data_plane`).
 * Listening beyond loopback prints one warning: the control API has no authentication.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { controlApiExposureWarning } from "./control_exposure.ts";
import { DATA_PLANE_MODES, type DataPlaneMode, defaultSeed, parseSeed, type Seed } from "./seed.ts";
import { startSimulator } from "./server.ts";

const HELP = `ankra-cloud-simulator: a local Ankra Cloud API for tests, demos and your CI (not part of the controller)

Usage:
  ankra-cloud-simulator [--listen=127.0.0.1:8787] [--seed=FILE] [--token=TOKEN | --token-from-env]
                        [--data-plane=off|loopback|netns]

  --listen=HOST:PORT   address to serve on (default 127.0.0.1:8787; keep it on loopback: the control API
                       under /_simulator has no authentication)
  --seed=FILE          JSON seed: zones, networks, servers, edges, tokens, settings (see docs/simulator.md);
                       default: zone de-fsn1 (eu-central, two compute nodes) and network net-default
  --token=TOKEN        add an API token with operate scope
  --token-from-env     add ANKRA_CLOUD_TOKEN as a token with operate scope
  --tls-cert=FILE --tls-key=FILE   serve HTTPS
  --data-plane=MODE    load balancers and edges carry traffic through HAProxy, one process each, as Ankra's
                       (Debian's package haproxy; default off: nothing else binds, no HAProxy needed):
                       loopback  unprivileged; public IPv4 from 127.203.113.0/24, networks may be in 127.0.0.0/8
                       netns     as root inside a network namespace of its own (unshare --net); serves the
                                 documentation ranges with local routes (needs ip; --allow-run=ip)
`;

function fail(message: string): number {
  console.error(`ankra-cloud-simulator: ${message}`);
  return 2;
}

/** Runs the simulator command line; returns the exit code. */
export async function runSimulatorCommand(args: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        listen: { type: "string", default: "127.0.0.1:8787" },
        seed: { type: "string" },
        token: { type: "string", multiple: true },
        "token-from-env": { type: "boolean" },
        "tls-cert": { type: "string" },
        "tls-key": { type: "string" },
        "data-plane": { type: "string" },
        help: { type: "boolean" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (cause) {
    const name = /'(--[a-z-]+)/.exec((cause as Error).message)?.[1];
    return fail(name ? `unknown or incomplete flag ${name}: see --help` : "bad command line: see --help");
  }
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const match = /^(\[[0-9a-fA-F:]+\]|[^:]+):(\d{1,5})$/.exec(values.listen ?? "");
  if (!match || Number(match[2]) > 65535) return fail(`--listen must be HOST:PORT, e.g. 127.0.0.1:8787`);
  let seed: Seed;
  try {
    seed = values.seed ? parseSeed(JSON.parse(await Deno.readTextFile(values.seed))) : defaultSeed();
  } catch (cause) {
    return fail(`--seed ${values.seed}: ${(cause as Error).message}`);
  }
  const dataPlane = values["data-plane"];
  if (dataPlane !== undefined) {
    if (!(DATA_PLANE_MODES as readonly string[]).includes(dataPlane)) {
      return fail(`--data-plane must be one of ${DATA_PLANE_MODES.join(", ")}, not "${dataPlane}"`);
    }
    seed.settings.data_plane = dataPlane as DataPlaneMode;
  }
  const tokens = [...(values.token ?? [])];
  if (values["token-from-env"]) {
    const token = Deno.env.get("ANKRA_CLOUD_TOKEN");
    if (!token) return fail("--token-from-env: ANKRA_CLOUD_TOKEN is not set");
    tokens.push(token.trim());
  }
  for (const token of tokens) {
    if (token.length < 8) return fail("--token must be at least 8 characters");
    seed.tokens.push({ token, scope: "read_write" });
  }
  if (seed.tokens.length === 0) {
    console.error("ankra-cloud-simulator: no token configured: every API request will get 401 (use --token)");
  }
  const tls = values["tls-cert"] && values["tls-key"]
    ? { cert: await Deno.readTextFile(values["tls-cert"]), key: await Deno.readTextFile(values["tls-key"]) }
    : undefined;
  const hostname = match[1].replace(/^\[|\]$/g, "");
  const exposure = controlApiExposureWarning(hostname);
  if (exposure) console.error(`ankra-cloud-simulator: ${exposure}`);
  let running;
  try {
    running = await startSimulator({ seed, hostname, port: Number(match[2]), tls });
  } catch (cause) {
    return fail((cause as Error).message);
  }
  console.log(`ankra-cloud-simulator listening on ${running.url} (control API ${running.url}/_simulator)`);
  const mode = seed.settings.data_plane;
  if (mode !== "off") {
    const range = mode === "loopback" ? seed.settings.loopback_ipv4_range : seed.settings.public_ipv4_ranges.join(", ");
    console.log(`ankra-cloud-simulator data plane: ${mode} (public IPv4 from ${range}; state in /_simulator/state)`);
  }
  const stop = Promise.withResolvers<void>();
  const onSignal = () => stop.resolve();
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  await stop.promise;
  Deno.removeSignalListener("SIGINT", onSignal);
  Deno.removeSignalListener("SIGTERM", onSignal);
  await running.stop();
  return 0;
}
