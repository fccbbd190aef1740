/**
 * `deno task run`: the controller from this checkout, started as the release launcher starts it — the permissions of
 * lib/runtime_permissions.ts plus the directory of each file the command line or environment names
 * ({@linkcode permissionFlagsFor}), its V8 flags, `MALLOC_ARENA_MAX=1` (unless set) and `--no-prompt` — so
 * `deno task run --kubeconfig "$HOME/.kube/config"` may read that kubeconfig and nothing the launcher would refuse.
 *
 *     deno run --no-prompt --allow-env=ANKRA_CLOUD_TOKEN_FILE,ANKRA_CLOUD_CA_BUNDLE,MALLOC_ARENA_MAX --allow-run=deno \
 *       scripts/run_controller.ts [controller flags…]
 *
 * This script reads only the variables that name files ({@linkcode FILE_VARIABLES}) and `MALLOC_ARENA_MAX`, and may
 * start only `deno` (the one on `PATH`, which must be the one running it: `source scripts/env.sh`); the controller
 * gets the whole environment, as from the launcher, and is refused every variable its permissions do not name.
 * SIGINT, SIGTERM and SIGHUP are passed on to the controller, and its exit code is this script's.
 *
 * @module
 */
import { FILE_VARIABLES, permissionFlagsFor, V8_FLAGS_ARGUMENT } from "../lib/runtime_permissions.ts";

/** The controller's entry, `main.ts` of this checkout. */
export const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** The variables this script reads: those naming files, and the allocator setting it passes on. */
export const SCRIPT_VARIABLES: readonly string[] = [...FILE_VARIABLES, "MALLOC_ARENA_MAX"];

const FORWARDED_SIGNALS: readonly Deno.Signal[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/**
 * The `deno` arguments that run the controller with the command line `args` in the environment `env` (only
 * {@linkcode FILE_VARIABLES} matter): the release launcher's permissions and flags, then {@linkcode MAIN} and `args`.
 */
export function controllerRunArguments(args: readonly string[], env: Record<string, string | undefined>): string[] {
  return ["run", ...permissionFlagsFor(args, env), V8_FLAGS_ARGUMENT, "--no-prompt", MAIN, ...args];
}

/** Runs the controller with `args` as a child process and returns its exit code. */
export async function runController(args: readonly string[]): Promise<number> {
  const env = Object.fromEntries(FILE_VARIABLES.map((name) => [name, Deno.env.get(name)]));
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(Deno.execPath(), {
      args: controllerRunArguments(args, env),
      env: { MALLOC_ARENA_MAX: Deno.env.get("MALLOC_ARENA_MAX") || "1" },
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
  } catch (cause) {
    if (!(cause instanceof Deno.errors.NotCapable || cause instanceof Deno.errors.NotFound)) throw cause;
    console.error(
      `run_controller: cannot start ${Deno.execPath()}: this script may start only the deno on PATH ` +
        "(--allow-run=deno); put this deno first on PATH (`source scripts/env.sh`) and run `deno task run` again",
    );
    return 1;
  }
  const forward = (signal: Deno.Signal) => () => {
    try {
      child.kill(signal);
    } catch { /* it has exited already */ }
  };
  const listeners = FORWARDED_SIGNALS.map((signal) => [signal, forward(signal)] as const);
  for (const [signal, listener] of listeners) Deno.addSignalListener(signal, listener);
  try {
    return (await child.status).code;
  } finally {
    for (const [signal, listener] of listeners) Deno.removeSignalListener(signal, listener);
  }
}

if (import.meta.main) {
  runController(Deno.args).then((code) => Deno.exit(code));
}
