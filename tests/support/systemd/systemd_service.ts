/**
 * The controller started from the systemd unit's own command line, as a host with the guide's setup would start it:
 * the environment file and credentials directory prepared per host, the process spawned with exactly the unit's
 * environment, its output captured, and its `/readyz` read.
 *
 * @module
 */
import assert from "node:assert/strict";
import { permissionFlagsFor } from "../../../lib/runtime_permissions.ts";
import { readLines } from "../controller/controller_process.ts";
import { runCommand } from "./command_output.ts";
import { ENV_FILE, LAUNCHER, MAIN, UNIT } from "./systemd_install.ts";
import { type ServiceLaunch, serviceLaunch } from "./systemd_unit_file.ts";

/** A controller process started as systemd starts the unit's service, its output kept line by line. */
export interface Service {
  /** The process. */
  child: Deno.ChildProcess;
  /** Every line it printed so far, standard output and standard error interleaved. */
  lines: string[];
  /** Its status, once it has ended and all its output has been read. */
  exited: Promise<Deno.CommandStatus>;
}

/** Spawns `command` with exactly `env` (systemd starts services with a clean environment), capturing its lines. */
export function spawnCaptured(command: string, args: string[], env: Record<string, string>): Service {
  const child = new Deno.Command(command, {
    args,
    clearEnv: true,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  const pumps = Promise.all(
    [child.stdout, child.stderr].map((stream) => readLines(stream, (text) => lines.push(text))),
  );
  return { child, lines, exited: child.status.then(async (s) => (await pumps, s)) };
}

/**
 * Starts the unit's command with the launcher replaced by `deno run main.ts` (the same program) with the permissions
 * the launcher gives it.
 */
export function startService(launch: ServiceLaunch): Service {
  assert.equal(launch.argv[0], LAUNCHER, "ExecStart runs the release tarball's launcher");
  const permissions = permissionFlagsFor(launch.argv.slice(1), launch.env);
  return spawnCaptured(Deno.execPath(), ["run", ...permissions, "--no-prompt", MAIN, ...launch.argv.slice(1)], {
    // Besides the unit's variables, what Deno needs to run from source (the launcher sets its own DENO_DIR).
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? "/",
    ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
    ...launch.env,
  });
}

/**
 * One control-plane "host" as the guide sets it up, under `dir/name`: the shipped environment file plus `settings`,
 * and a credentials directory into which the unit's `LoadCredential=` sources (`/etc/ankra-cloud-ccm/…`, here
 * files in `etc`) are copied, as systemd does at every start.
 */
export async function prepareHost(
  dir: string,
  name: string,
  etc: string,
  settings: Record<string, string>,
): Promise<ServiceLaunch & { credentialsDir: string }> {
  const credentialsDir = `${dir}/${name}/credentials`;
  await Deno.mkdir(credentialsDir, { recursive: true });
  const envFile = `${dir}/${name}/ankra-cloud-ccm.env`;
  const lines = Object.entries(settings).map(([key, value]) => `${key}=${value}`);
  await Deno.writeTextFile(envFile, (await Deno.readTextFile(ENV_FILE)) + lines.join("\n") + "\n");
  const launch = serviceLaunch(await Deno.readTextFile(UNIT), envFile, credentialsDir);
  assert.deepEqual([...launch.credentials.keys()], ["token", "kubeconfig"]);
  for (const [credential, source] of launch.credentials) {
    await Deno.copyFile(source.replace("/etc/ankra-cloud-ccm", etc), `${credentialsDir}/${credential}`);
  }
  assert.equal(launch.env.ANKRA_CLOUD_TOKEN_FILE, `${credentialsDir}/token`);
  assert.ok(launch.argv.includes(`--kubeconfig=${credentialsDir}/kubeconfig`), launch.argv.join(" "));
  if (settings.CLUSTER_NAME) assert.ok(launch.argv.includes(`--cluster-name=${settings.CLUSTER_NAME}`));
  return { ...launch, credentialsDir };
}

/** The verbose `/readyz` of a controller serving on `port` (empty when it does not answer within 5 s). */
export async function readyz(port: number): Promise<string> {
  const out = await runCommand("curl", ["-sk", "--max-time", "5", `https://127.0.0.1:${port}/readyz?verbose`]);
  return out.stdout;
}
