/**
 * The controller as a separate process (`main.ts`) against the test control plane, with its output captured. It runs
 * as the chart's identity (`controller_identity.ts`): a ServiceAccount token bound by the chart's ClusterRole and
 * leader-election Role, holding the Lease that Role names — not the control plane's admin.
 *
 * @module
 */
import { CONTROLLER_LEASE, controllerKubeconfig, freshLease } from "./controller_identity.ts";
import { permissionFlagsFor } from "../../../lib/runtime_permissions.ts";
import { eventually } from "../wait/eventually.ts";

/** The controller's entry point. */
export const MAIN = new URL("../../../main.ts", import.meta.url).pathname;

/** A controller process with its output lines (and when each arrived). */
export interface Replica {
  child: Deno.ChildProcess;
  lines: { at: number; text: string }[];
  exited: Promise<Deno.CommandStatus>;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<number>;
}

/** Options of {@linkcode startReplica}. */
export interface ReplicaOptions {
  /**
   * Deno permissions: `launcher` (the default) those the release launcher gives for these arguments and variables
   * (lib/runtime_permissions.ts), so the controller is tested as shipped; `all` for `--allow-all`.
   */
  permissions?: "launcher" | "all";
  /**
   * A release launcher (`bin/ankra-cloud-ccm` of an unpacked release, see `releasedLauncher`) to run instead of
   * `main.ts`: the artifact users run, with its own runtime, permissions and V8 flags.
   */
  launcher?: string;
}

/** Replicas started and not yet exited: the first of a test starts from a fresh Lease. */
const live = new Set<Deno.ChildProcess>();

/**
 * Starts `main.ts` against the test control plane with `args` and `env` (an unreachable API and a dummy token unless
 * given; no dummy token when `env` names a token file). Before `args`: `--v=4`, the controller identity's kubeconfig
 * (unless `args` has a `--kubeconfig`) and its Lease namespace (unless `args` names one). When no other replica of
 * this test process is running, the Lease is deleted first: a killed replica of an earlier test holds nothing.
 */
export async function startReplica(
  args: string[],
  env: Record<string, string> = {},
  options: ReplicaOptions = {},
): Promise<Replica> {
  const given = (flag: string) => args.some((arg) => arg.startsWith(`${flag}=`));
  const identity = given("--kubeconfig") ? [] : [`--kubeconfig=${await controllerKubeconfig()}`];
  const lease = given("--leader-elect-resource-namespace")
    ? []
    : [`--leader-elect-resource-namespace=${CONTROLLER_LEASE.namespace}`];
  if (live.size === 0) await freshLease();
  const fullArgs = [...identity, "--v=4", ...lease, ...args];
  const fullEnv = {
    ...(env.ANKRA_CLOUD_TOKEN_FILE ? {} : { ANKRA_CLOUD_TOKEN: "act_not-used-by-these-tests" }),
    ANKRA_CLOUD_API_URL: "https://127.0.0.1:1",
    ...env,
  };
  const permissions = (options.permissions ?? "launcher") === "launcher"
    ? [...permissionFlagsFor(fullArgs, fullEnv), "--no-prompt"]
    : ["--allow-all"];
  const [command, commandArgs] = options.launcher
    ? [options.launcher, fullArgs]
    : [Deno.execPath(), ["run", ...permissions, MAIN, ...fullArgs]];
  const child = new Deno.Command(command, {
    args: commandArgs,
    env: fullEnv,
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).spawn();
  live.add(child);
  const lines: { at: number; text: string }[] = [];
  const pumps = Promise.all(
    [child.stdout, child.stderr].map((stream) =>
      readLines(stream, (text) => lines.push({ at: performance.now(), text }))
    ),
  );
  const exited = child.status.then(async (status) => {
    live.delete(child);
    await pumps;
    return status;
  });
  return {
    child,
    lines,
    exited,
    async waitFor(pattern, timeoutMs = 30_000) {
      const line = await eventually(() => lines.find((l) => pattern.test(l.text)), {
        timeoutMs,
        what: `log line ${pattern}`,
      }).catch((error: Error) => {
        throw new Error(`${error.message}:\n${lines.map((l) => l.text).join("\n")}`);
      });
      return line.at;
    },
  };
}

/** Hands every whole line of `stream` to `line` as it arrives (a last line without a newline is dropped). */
export async function readLines(stream: ReadableStream<Uint8Array>, line: (text: string) => void): Promise<void> {
  let buffer = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      line(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
    }
  }
}

/** Kills a replica (SIGKILL) and waits for it. */
export async function stop(replica: Replica): Promise<void> {
  try {
    replica.child.kill("SIGKILL");
  } catch { /* already gone */ }
  await replica.exited;
}
