/**
 * What the process does, decided from its arguments and environment ({@linkcode resolveCommand}): print `--help` or
 * the version, run the doctor (`doctor [--output=text|json]`), clean up a cluster's load balancers (`cleanup`), or
 * run the controller, each with its validated configuration (`config.ts`).
 *
 * @module
 */
import type { ReadFile } from "./cloud_settings.ts";
import { readArgs } from "./command_line.ts";
import { buildConfig, type Config } from "./config.ts";
import { ConfigError } from "../config_error.ts";
import { helpText } from "./help_text.ts";
import { parseGoBoolean } from "../go_syntax.ts";
import { PROGRAM, VERSION } from "../version.ts";

/** What `resolveCommand` decided the process should do. */
export type Command =
  | { kind: "help"; text: string }
  | { kind: "version"; text: string }
  | { kind: "run"; config: Config }
  | { kind: "doctor"; output: "text" | "json"; config?: Config; problem?: string }
  | { kind: "cleanup"; config: Config; clusterUid?: string; includeReleased: boolean };

/** Sources the configuration reads; tests pass their own. */
interface ConfigSources {
  /** Variables by name (`ANKRA_CLOUD_*`, …); one that is unset is undefined. */
  env: Record<string, string | undefined>;
  /** Reads a text file (token file, CA bundle). */
  readFile?: ReadFile;
}

function versionText(value: string): string | undefined {
  if (value === "raw") {
    return [
      `${PROGRAM} ${VERSION}`,
      `  runtime: deno ${Deno.version.deno} (v8 ${Deno.version.v8})`,
      `  platform: ${Deno.build.os}/${Deno.build.arch === "x86_64" ? "amd64" : "arm64"}`,
    ].join("\n");
  }
  const asBoolean = parseGoBoolean(value);
  if (asBoolean === undefined) {
    throw new ConfigError(`--version must be true, false or raw, not "${value.slice(0, 40)}"`);
  }
  return asBoolean ? `${PROGRAM} ${VERSION}` : undefined;
}

/**
 * Decides what the process does from its arguments and environment: print help or the version, run the doctor, or
 * run the controller with a validated {@linkcode Config}.
 *
 * @throws {ConfigError} on any bad or missing setting (for `doctor`, only on a bad command line: a bad setting is
 * reported as its first finding).
 */
export function resolveCommand(args: string[], sources: ConfigSources): Command {
  const readFile = sources.readFile ?? Deno.readTextFileSync;
  if (args[0] === "doctor") {
    const given = readArgs(args.slice(1), ["output"]);
    if (given.ours.get("help") === "true") return { kind: "help", text: helpText() };
    const output = given.ours.get("output") ?? "text";
    if (output !== "text" && output !== "json") {
      throw new ConfigError(`--output must be text or json, not "${output.slice(0, 40)}"`);
    }
    given.ours.delete("output");
    try {
      return { kind: "doctor", output, config: buildConfig(given, sources.env, readFile) };
    } catch (cause) {
      if (cause instanceof ConfigError) return { kind: "doctor", output, problem: cause.message };
      throw cause;
    }
  }
  if (args[0] === "cleanup") return cleanupCommand(args.slice(1), sources.env, readFile);
  const given = readArgs(args);
  const help = given.ours.get("help");
  if (help !== undefined && parseGoBoolean(help)) return { kind: "help", text: helpText() };
  const version = given.ours.get("version");
  if (version !== undefined) {
    const text = versionText(version);
    if (text) return { kind: "version", text };
  }
  return { kind: "run", config: buildConfig(given, sources.env, readFile) };
}

/**
 * `cleanup [flags]`: the controller's flags plus `--cluster-uid=<uid>` and `--include-released`. `--cluster-name` must
 * be given (cleaning up the default name `kubernetes` by mistake would delete another cluster's load balancers).
 */
function cleanupCommand(args: string[], env: Record<string, string | undefined>, readFile: ReadFile): Command {
  const given = readArgs(args, ["cluster-uid", "include-released"], ["include-released"]);
  if (given.ours.get("help") === "true") return { kind: "help", text: helpText() };
  const clusterUid = given.ours.get("cluster-uid") || undefined;
  const included = given.ours.get("include-released") ?? "false";
  const includeReleased = parseGoBoolean(included);
  if (includeReleased === undefined) {
    throw new ConfigError(`--include-released must be true or false, not "${included.slice(0, 40)}"`);
  }
  given.ours.delete("cluster-uid");
  given.ours.delete("include-released");
  if (!given.ours.has("cluster-name")) {
    throw new ConfigError(
      "cleanup needs --cluster-name: the name the controller ran with (every load balancer with it and this " +
        "cluster's UID is deleted)",
    );
  }
  return { kind: "cleanup", config: buildConfig(given, env, readFile), clusterUid, includeReleased };
}
