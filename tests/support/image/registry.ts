/**
 * A local OCI registry for tests: the CNCF distribution registry (built by `scripts/image_tools.sh`) serving plain
 * HTTP on a free loopback port, with its storage and configuration in a temporary directory. `skopeo copy …
 * --dest-tls-verify=false` and `helm push … --plain-http` work against it.
 *
 *     await using registry = await startRegistry();
 *     // push to docker://${registry.url}/name:tag or oci://${registry.url}/charts
 *
 * @module
 */
import { freePort } from "../control_plane/control_plane.ts";
import { builtBy } from "../control_plane/control_plane_processes.ts";
import { eventually } from "../wait/eventually.ts";

/** A running registry. */
export interface TestRegistry extends AsyncDisposable {
  /** `127.0.0.1:<port>`: the host part of image references (plain HTTP). */
  url: string;
  /** Directory holding the configuration, the storage and `registry.log`. */
  dir: string;
  /** Stops the registry and removes its directory, keeping it (and saying where) if the registry had crashed. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 20_000;

/**
 * Runs `scripts/image_tools.sh` (building the registry from the Go module proxy on first use) and returns the
 * directory holding `registry`.
 */
export function locateImageTools(): Promise<string> {
  return builtBy("image_tools.sh", "image tools", "Go 1.25+");
}

function configYaml(dir: string, port: number): string {
  return [
    "version: 0.1",
    "log:",
    "  level: info",
    "  accesslog:",
    "    disabled: true",
    "storage:",
    "  filesystem:",
    `    rootdirectory: ${dir}/storage`,
    "  delete:",
    "    enabled: true",
    "  maintenance:",
    "    uploadpurging:",
    "      enabled: false",
    "http:",
    `  addr: 127.0.0.1:${port}`,
    `  secret: test-registry-${port}`,
    "",
  ].join("\n");
}

async function tail(file: string, lines = 20): Promise<string> {
  try {
    return (await Deno.readTextFile(file)).trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/**
 * Starts a registry on a free loopback port and waits until `GET /v2/` answers.
 *
 * @throws when the registry cannot be built or does not become ready, with the end of its log (the directory is
 * kept).
 */
export async function startRegistry(): Promise<TestRegistry> {
  const binary = `${await locateImageTools()}/registry`;
  const dir = await Deno.makeTempDir({ prefix: "ccm-registry-" });
  const port = freePort();
  await Deno.writeTextFile(`${dir}/config.yml`, configYaml(dir, port));
  const child = new Deno.Command(binary, {
    args: ["serve", `${dir}/config.yml`],
    // No tracing exporter: the registry would otherwise try to reach an OpenTelemetry collector.
    env: { OTEL_TRACES_EXPORTER: "none", OTEL_SDK_DISABLED: "true" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Both streams into one log, each through its own append-mode handle.
  const logTo = async (stream: ReadableStream<Uint8Array>) => {
    const file = await Deno.open(`${dir}/registry.log`, { create: true, append: true });
    await stream.pipeTo(file.writable).catch(() => {});
  };
  const logsDone = Promise.all([logTo(child.stdout), logTo(child.stderr)]);
  let exited: Deno.CommandStatus | undefined;
  const status = child.status.then((s) => (exited = s));
  const url = `127.0.0.1:${port}`;
  // Ends as soon as the registry answers or exits; neither within the time is "not ready" too.
  const outcome = await eventually(async () => {
    if (exited) return "exited";
    try {
      const response = await fetch(`http://${url}/v2/`);
      await response.body?.cancel();
      return response.status === 200 && "ready";
    } catch {
      return false; // not listening yet
    }
  }, { timeoutMs: READY_TIMEOUT_MS, intervalMs: 100, what: "a ready registry" }).catch(() => "timed out");
  if (outcome !== "ready") {
    if (!exited) child.kill("SIGKILL");
    await status;
    await logsDone;
    throw new Error(
      `the test registry did not become ready on ${url} (logs kept in ${dir}/registry.log):\n` +
        await tail(`${dir}/registry.log`),
    );
  }
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    const crashed = exited !== undefined;
    if (!crashed) child.kill("SIGTERM");
    await status;
    await logsDone;
    if (crashed) {
      console.error(`test registry on ${url} had exited (${exited?.code}): logs kept in ${dir}/registry.log`);
      return;
    }
    await Deno.remove(dir, { recursive: true });
  };
  return { url, dir, stop, [Symbol.asyncDispose]: stop };
}
