/**
 * What an upstream cloud-controller-manager flag given on the command line leads to, decided from its entry in
 * {@linkcode UPSTREAM_FLAGS}: nothing (its value is what this controller does anyway), one warning (it changes
 * nothing here), or a refusal (its meaning cannot be honoured).
 *
 * @module
 */
import { parseGoBoolean } from "../go_syntax.ts";
import { ConfigError } from "../config_error.ts";
import { UPSTREAM_FLAGS, type UpstreamFlag } from "./upstream_flags.ts";

/** What a value of an upstream flag leads to. */
type UpstreamFlagOutcome = "silent" | "ignored" | "refused";

const BY_NAME = new Map<string, UpstreamFlag>(UPSTREAM_FLAGS.map((f) => [f.name, f]));

/** The upstream flag of that name (without dashes); undefined when upstream has no such flag or we implement it. */
export function upstreamFlag(name: string): UpstreamFlag | undefined {
  return BY_NAME.get(name);
}

/**
 * What one value of an upstream flag leads to. `value` is compared trimmed; a list flag given several times is
 * passed as its values joined with commas, a bool flag as `true` or `false`.
 */
export function upstreamFlagOutcome(flag: UpstreamFlag, value: string): UpstreamFlagOutcome {
  const trimmed = value.trim();
  if (flag.silentValues?.includes(trimmed)) return "silent";
  if (flag.effect === "refused" || flag.refusedValues?.includes(trimmed)) return "refused";
  return "ignored";
}

/**
 * What the upstream flags given (name → every value given, in order) ask for: warnings for those that change nothing
 * here.
 *
 * @throws {ConfigError} for the first one that cannot be honoured, or a bool flag whose value is not a boolean.
 */
export function upstreamFlagWarnings(given: ReadonlyMap<string, string[]>): string[] {
  const warnings: string[] = [];
  for (const [name, values] of given) {
    const flag = BY_NAME.get(name)!;
    let value = values.join(",");
    if (flag.kind === "bool") {
      const parsed = values.map(parseGoBoolean);
      if (parsed.some((p) => p === undefined)) {
        throw new ConfigError(`--${name} must be true or false, not "${values.join(",").slice(0, 40)}"`);
      }
      value = String(parsed.at(-1));
    }
    const outcome = upstreamFlagOutcome(flag, value);
    if (outcome === "silent") continue;
    if (outcome === "refused") {
      throw new ConfigError(`--${name}=${value.slice(0, 80)} cannot be honoured: ${flag.note}`);
    }
    warnings.push(`--${name}=${value.slice(0, 80)} is accepted for compatibility and changes nothing: ${flag.note}`);
  }
  return warnings;
}
