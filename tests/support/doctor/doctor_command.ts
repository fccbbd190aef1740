/**
 * `ankra-cloud-ccm doctor` as a user runs it: `main.ts` as a subprocess with the release launcher's permissions
 * (`lib/runtime_permissions.ts`), its exit code and output — for the doctor's integration tests and the real cluster's
 * k3s-guide step.
 *
 * @module
 */
import { permissionFlagsFor } from "../../../lib/runtime_permissions.ts";

const MAIN = new URL("../../../main.ts", import.meta.url).pathname;

/**
 * Runs `main.ts` with `args` (`doctor …`) with the release launcher's permissions; the token variables are empty unless
 * `env` sets them (whatever this process has). Resolves with the exit code and the output.
 */
export async function runMain(args: string[], env: Record<string, string>) {
  const output = await new Deno.Command(Deno.execPath(), {
    // With the release launcher's permissions: the doctor runs through the same launcher as the controller.
    args: ["run", ...permissionFlagsFor(args, env), "--no-prompt", MAIN, ...args],
    env: { ANKRA_CLOUD_TOKEN: "", ANKRA_CLOUD_TOKEN_FILE: "", ...env },
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}
