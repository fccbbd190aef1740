/**
 * Starts the controller process for a validated {@linkcode Config} and runs it until SIGTERM or SIGINT.
 *
 * @module
 */
import type { Config } from "./config.ts";
import { info, warn } from "./log.ts";

/** Runs the controller until a termination signal arrives; returns the exit code. */
export async function runController(config: Config): Promise<number> {
  for (const remark of config.warnings) warn(remark);
  info(0, "Ankra Cloud provider initialised", {
    provider: config.cloudProvider,
    cluster: config.clusterName,
    api: config.cloud.apiUrl,
    controllers: config.controllers.join(","),
  });
  const stop = Promise.withResolvers<string>();
  const onSignal = (name: string) => () => stop.resolve(name);
  const term = onSignal("SIGTERM");
  const int = onSignal("SIGINT");
  Deno.addSignalListener("SIGTERM", term);
  Deno.addSignalListener("SIGINT", int);
  const signal = await stop.promise;
  Deno.removeSignalListener("SIGTERM", term);
  Deno.removeSignalListener("SIGINT", int);
  info(0, "stopping", { signal });
  return 0;
}
