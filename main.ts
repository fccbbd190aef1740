/**
 * `ankra-cloud-ccm`: the Kubernetes cloud controller manager for Ankra Cloud.
 *
 * - `ankra-cloud-ccm [flags]` runs the controller (`--dry-run`: plan everything, write nothing).
 * - `ankra-cloud-ccm doctor [flags]` checks the API, the token, the nodes, the network and RBAC before installing.
 * - `ankra-cloud-ccm cleanup --cluster-name=<name> [flags]` removes a cluster's load balancers and edge members from
 *   the account (`--dry-run`: print the plan).
 *
 * (The local Ankra Cloud API simulator is a separate program, `simulator/main.ts`; it is not part of this binary.)
 *
 * Exit codes: 0 success, 1 failure at run time, 2 bad configuration or command line.
 *
 * @module
 */
import { resolveCommand } from "./lib/config/command.ts";
import { ConfigError } from "./lib/config_error.ts";
import { configureLogging, error, redact, registerSecret } from "./lib/log.ts";
import { readEnvironment } from "./lib/runtime_permissions.ts";
import { restrictDefaultTrustStore } from "./lib/tls.ts";

/** Runs the command line `args` and returns the process exit code. */
export async function main(args: string[]): Promise<number> {
  // Registered before anything is parsed, so no message about any setting can carry the token.
  const envToken = Deno.env.get("ANKRA_CLOUD_TOKEN")?.trim();
  if (envToken) registerSecret(envToken);
  let command;
  try {
    command = resolveCommand(args, { env: readEnvironment() });
    // Before any HTTP client exists: each client then trusts exactly the certificates it names (lib/tls.ts).
    if (command.kind !== "help" && command.kind !== "version") restrictDefaultTrustStore();
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
    case "doctor": {
      configureLogging({ verbosity: 0 });
      // Each mode loads its own code when it runs: the controller never holds the doctor, and the reverse.
      const { runDoctor } = await import("./lib/doctor/doctor.ts");
      return await runDoctor(command, { args, env: readEnvironment() });
    }
    case "cleanup": {
      const { runCleanup } = await import("./lib/cleanup/run_cleanup.ts");
      return await runCleanup(command, { env: readEnvironment() });
    }
    case "run": {
      configureLogging({ verbosity: command.config.verbosity, format: command.config.loggingFormat });
      const [{ runController }, { buildControllers }] = await Promise.all([
        import("./lib/controller_manager.ts"),
        import("./lib/controllers/controllers.ts"),
      ]);
      return await runController(command.config, buildControllers);
    }
  }
}

if (import.meta.main) {
  // Deliberately no top-level await: while the entry module's evaluation is pending, Deno keeps the memory it used
  // to load the program, about 6.5 MiB of private memory for the controller's lifetime whenever its cache directory
  // is empty or read-only, as in the release and the image (bench/memory_report.md).
  main(Deno.args)
    .catch((cause) => {
      error("fatal error", { error: redact(cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)) });
      return 1;
    })
    .then((code) => Deno.exit(code));
}
