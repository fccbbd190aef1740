/**
 * The command line: the upstream command's spellings brought to one form, then split into this controller's flags
 * (the last value of each) and upstream flags (every value). Flags take the forms `--name=value`, `--name value`, bare
 * booleans, `-h` and `-v=N`, with `_` or `-` in names, as the upstream command accepts them.
 *
 * Decisions come from the tokens of `parseArgs` (which flag, which value, given inline or not), never from the text
 * of its errors.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { PROGRAM } from "../version.ts";
import { ConfigError } from "../config_error.ts";
import { optionFlagNames, optionForFlag } from "./options.ts";
import { upstreamFlag } from "./upstream_flag_rules.ts";
import { UPSTREAM_FLAGS } from "./upstream_flags.ts";

/** The flags given: the last value of each of ours, every value of the upstream ones. */
export interface GivenFlags {
  /** This controller's flags (and any `extra` names asked for): flag name → last value, trimmed. */
  ours: Map<string, string>;
  /** Upstream flags this controller does not implement: flag name → every value given, trimmed, in order. */
  upstream: Map<string, string[]>;
}

type ParseToken = ReturnType<typeof parseArgs>["tokens"] extends (infer T)[] | undefined ? T : never;

function isBooleanFlag(name: string, extraBooleans: readonly string[] = []): boolean {
  return optionForFlag(name)?.kind === "boolean" || upstreamFlag(name)?.kind === "bool" || extraBooleans.includes(name);
}

function isKnownFlag(name: string, extra: readonly string[]): boolean {
  return optionForFlag(name) !== undefined || upstreamFlag(name) !== undefined || extra.includes(name);
}

/**
 * Brings the upstream command's spellings to one form: `_` in flag names becomes `-`, `-h` is `--help`, `-v=N`,
 * `-v N` and `-vN` are `--v=N`, and a bare boolean flag is `--flag=true` (a boolean never takes the next argument).
 */
function normaliseArgs(args: readonly string[], extraBooleans: readonly string[] = []): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      out.push(...args.slice(i));
      break;
    }
    if (arg === "-h") {
      out.push("--help=true");
      continue;
    }
    const short = /^-v(?:=?(.*))$/.exec(arg);
    if (short && !arg.startsWith("--")) {
      const value = short[1] !== "" ? short[1] : args[++i];
      out.push(`--v=${value ?? ""}`);
      continue;
    }
    const long = /^--([A-Za-z0-9_-]+)(=.*)?$/.exec(arg);
    if (!long) {
      out.push(arg);
      continue;
    }
    const name = long[1].replaceAll("_", "-");
    // `--version` alone means true; `--version=raw` asks for more.
    if (long[2] === undefined && (isBooleanFlag(name, extraBooleans) || name === "version")) out.push(`--${name}=true`);
    else out.push(`--${name}${long[2] ?? ""}`);
  }
  return out;
}

/** The first problem with one option token, as the line shown to the user; undefined when the token is fine. */
function tokenProblem(token: ParseToken & { kind: "option" }, extra: readonly string[]): string | undefined {
  if (!isKnownFlag(token.name, extra)) {
    return `unknown flag ${token.rawName}: see --help for the flags ${PROGRAM} accepts`;
  }
  // A missing value, or the next flag taken as the value (`--cluster-name --v=3`): a value starting with `-` must be
  // written inline.
  const taken = token.value !== undefined && !token.inlineValue && token.value.length > 1 && token.value[0] === "-";
  if (token.value === undefined || taken) return `flag ${token.rawName} needs a value: write ${token.rawName}=<value>`;
  return undefined;
}

/**
 * Reads the command line (without the program name or a subcommand) into the flags given. `extra` names flags a
 * subcommand adds (e.g. `doctor --output`); they are returned among ours, and those also in `extraBooleans` may be
 * given bare (`--include-released` is `--include-released=true`).
 *
 * @throws {ConfigError} for an unknown flag, a flag without its value, or a stray argument: one line naming it.
 */
export function readArgs(
  args: readonly string[],
  extra: readonly string[] = [],
  extraBooleans: readonly string[] = [],
): GivenFlags {
  // Every flag is read as text: booleans were made explicit by `normaliseArgs`, and each reader checks its value.
  const options: Record<string, { type: "string" }> = {};
  for (const name of [...optionFlagNames(), ...UPSTREAM_FLAGS.map((f) => f.name), ...extra]) {
    options[name] = { type: "string" };
  }
  const { tokens } = parseArgs({
    args: normaliseArgs(args, extraBooleans),
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const given: GivenFlags = { ours: new Map(), upstream: new Map() };
  let stray: string | undefined;
  for (const token of tokens) {
    if (token.kind === "positional") stray ??= token.value;
    if (token.kind !== "option") continue;
    const problem = tokenProblem(token, extra);
    if (problem) throw new ConfigError(problem);
    const value = token.value!.trim();
    if (optionForFlag(token.name) || extra.includes(token.name)) given.ours.set(token.name, value);
    else given.upstream.set(token.name, [...(given.upstream.get(token.name) ?? []), value]);
  }
  if (stray !== undefined) {
    throw new ConfigError(`unexpected argument "${stray.slice(0, 40)}": flags take the form --name=value; see --help`);
  }
  return given;
}
