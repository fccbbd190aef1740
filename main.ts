/**
 * `ankra-cloud-ccm`: the Kubernetes cloud controller manager for Ankra Cloud.
 *
 * - `ankra-cloud-ccm [flags]` runs the controller (`--dry-run`: plan everything, write nothing).
 * - `ankra-cloud-ccm doctor [flags]` checks the API, the token, the nodes, the network and RBAC before installing.
 *
 * (The local Ankra Cloud API simulator is a separate program, `simulator/main.ts`; it is not part of this binary.)
 *
 * Exit codes: 0 success, 1 failure at run time, 2 bad configuration or command line.
 *
 * @module
 */
import { ConfigError, resolveCommand } from "./lib/config.ts";
import { configureLogging, error, redact, registerSecret } from "./lib/log.ts";
import { runController } from "./lib/controller_manager.ts";
import { buildControllers } from "./lib/controllers/controllers.ts";
import { runDoctor } from "./lib/doctor/doctor.ts";

/** Runs the command line `args` and returns the process exit code. */
export async function main(args: string[]): Promise<number> {
  // Registered before anything is parsed, so no message about any setting can carry the token.
  const envToken = Deno.env.get("ANKRA_CLOUD_TOKEN")?.trim();
  if (envToken) registerSecret(envToken);
  let command;
  try {
    command = resolveCommand(args, { env: Deno.env.toObject() });
  } catch (cause) {
    if (cause instanceof ConfigError) {
      console.error(`ankra-cloud-ccm: ${redact(cause.message)}`);
      return 2;
    }
    throw cause;
  }
  switch (command.kind) {
    case "help":
    case "version":
      console.log(command.text);
      return 0;
    case "doctor":
      configureLogging({ verbosity: 0 });
      return await runDoctor(command, { args, env: Deno.env.toObject() });
    case "run": {
      configureLogging({ verbosity: command.config.verbosity, format: command.config.loggingFormat });
      return await runController(command.config, buildControllers);
    }
  }
}

if (import.meta.main) {
  let code: number;
  try {
    code = await main(Deno.args);
  } catch (cause) {
    error("fatal error", { error: redact(cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)) });
    code = 1;
  }
  Deno.exit(code);
}
