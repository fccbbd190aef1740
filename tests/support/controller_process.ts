/**
 * The controller as a separate process (`main.ts`) against the test control plane, with its output captured.
 *
 * @module
 */
import { testControlPlane } from "./control_plane.ts";
import { permissionFlagsFor } from "../../lib/runtime_permissions.ts";
import { eventually } from "./eventually.ts";

/** The controller's entry point. */
export const MAIN = new URL("../../main.ts", import.meta.url).pathname;

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

/**
 * Starts `main.ts` against the test control plane with `args` (after `--kubeconfig` and `--v=4`) and `env` (an
 * unreachable API and a dummy token unless given; no dummy token when `env` names a token file).
 */
export function startReplica(args: string[], env: Record<string, string> = {}, options: ReplicaOptions = {}): Replica {
  const plane = testControlPlane();
  const fullArgs = [`--kubeconfig=${plane.kubeconfigPath}`, "--v=4", ...args];
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
  const lines: { at: number; text: string }[] = [];
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    let buffer = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let newline;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        lines.push({ at: performance.now(), text: buffer.slice(0, newline) });
        buffer = buffer.slice(newline + 1);
      }
    }
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  const exited = child.status.then(async (status) => {
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

/** Kills a replica (SIGKILL) and waits for it. */
export async function stop(replica: Replica): Promise<void> {
  try {
    replica.child.kill("SIGKILL");
  } catch { /* already gone */ }
  await replica.exited;
}
