/**
 * Shared by the scripts that run a command against one test control plane: locate (or build) the test binaries,
 * start the control plane, run the command with the control plane in its environment, and stop everything on exit,
 * SIGINT or SIGTERM.
 *
 * @module
 */
import { controlPlaneEnv, startControlPlane } from "../tests/support/control_plane/control_plane.ts";

/**
 * Runs `scripts/test_binaries.sh` and returns the directory holding the binaries: of `kubernetesVersion` when given
 * (the old-version tier), else of scripts/versions.sh's `KUBERNETES_VERSION` (or `KUBEBUILDER_ASSETS`).
 */
export async function locateTestBinaries(kubernetesVersion?: string): Promise<string> {
  const script = new URL("./test_binaries.sh", import.meta.url).pathname;
  const started = performance.now();
  const env: Record<string, string> = kubernetesVersion ? { K8S_VERSION: kubernetesVersion } : {};
  const output = await new Deno.Command("bash", { args: [script], env, stdout: "piped", stderr: "inherit" }).output();
  if (!output.success) throw new Error("scripts/test_binaries.sh failed: see the lines above");
  const dir = new TextDecoder().decode(output.stdout).trim().split("\n").pop()!;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.error(`test binaries: ${dir} (${seconds} s)`);
  return dir;
}

/**
 * Starts a control plane (of `options.kubernetesVersion`, default the current one), runs `cmd` with it in the
 * environment (plus `KUBEBUILDER_ASSETS` and the binaries on `PATH`), stops the control plane and returns the
 * command's exit code.
 */
export async function runWithControlPlane(
  cmd: string[],
  options: { extraEnv?: Record<string, string>; kubernetesVersion?: string } = {},
): Promise<number> {
  const extraEnv = options.extraEnv ?? {};
  const binDir = await locateTestBinaries(options.kubernetesVersion);
  Deno.env.set("KUBEBUILDER_ASSETS", binDir);
  const plane = await startControlPlane();
  console.error(`control plane: ${plane.url} ready in ${(plane.startupMs / 1000).toFixed(1)} s`);
  let child: Deno.ChildProcess | undefined;
  const onSignal = (signal: Deno.Signal) => () => {
    try {
      child?.kill(signal);
    } catch { /* gone */ }
  };
  const term = onSignal("SIGTERM");
  const int = onSignal("SIGINT");
  Deno.addSignalListener("SIGTERM", term);
  Deno.addSignalListener("SIGINT", int);
  try {
    child = new Deno.Command(cmd[0], {
      args: cmd.slice(1),
      env: {
        ...controlPlaneEnv(plane),
        KUBEBUILDER_ASSETS: binDir,
        PATH: `${binDir}:${Deno.env.get("PATH") ?? ""}`,
        ...extraEnv,
      },
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
    const status = await child.status;
    return status.code;
  } finally {
    Deno.removeSignalListener("SIGTERM", term);
    Deno.removeSignalListener("SIGINT", int);
    await plane.stop();
  }
}
