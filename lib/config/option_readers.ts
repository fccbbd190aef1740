/**
 * How one flag or environment variable is declared and read: {@linkcode OptionSpec} and the readers the option table
 * is written with (text, boolean, whole number, decimal, duration, choice). Every reader turns a bad value into a
 * {@linkcode ConfigError} naming the flag or variable, the rule and the value.
 *
 * @module
 */
import { parseDuration, parseGoBoolean } from "../go_syntax.ts";
import { ConfigError } from "../config_error.ts";

/** One flag or environment variable: its documentation and how its value is read. */
export interface OptionSpec<T> {
  /** Flag name without dashes; absent for variable-only settings. */
  flag?: string;
  /** Environment variable that sets it when the flag is not given. */
  env?: string;
  /** How `--help` shows its value. */
  kind: "string" | "boolean" | "integer" | "number" | "duration";
  /** Default, as text. */
  default?: string;
  /** What it does. */
  help: string;
  /**
   * Set when the upstream cloud-controller-manager command has this flag too: its default as upstream's `--help`
   * prints it ("" when none) and, in Markdown, how this controller differs (absent: no difference). Documentation
   * only (`docs/upstream_flags.md`); flags without it are this controller's own.
   */
  upstream?: { default: string; difference?: string };
  /** Reads the value (trimmed; undefined when neither given nor defaulted); `label` names it in errors. */
  read(value: string | undefined, label: string): T;
}

/** What an option declaration says before a reader adds its kind and `read`. */
type OptionDoc<T> = Omit<OptionSpec<T>, "kind" | "read">;

/** A text rule: the pattern a value must match and how the error describes it ("must be …"). */
interface TextRule {
  /** The whole value must match. */
  pattern: RegExp;
  /** The rule in words, starting with "must". */
  describe: string;
}

/**
 * A text option; undefined when not given. A flag with a default may not be blanked out (`--cluster-name=`); with a
 * `rule`, a given value must match it.
 */
export function text(spec: OptionDoc<string | undefined>, rule?: TextRule): OptionSpec<string | undefined> {
  return {
    ...spec,
    kind: "string",
    read(value, label) {
      if (value === undefined || value === "") {
        if (spec.default && spec.flag) throw new ConfigError(`${label} must not be empty (default ${spec.default})`);
        return undefined;
      }
      if (rule && !rule.pattern.test(value)) {
        throw new ConfigError(`${label} ${rule.describe}, not "${value.slice(0, 80)}"`);
      }
      return value;
    },
  };
}

/** A boolean option in Go syntax; false when not given. */
export function bool(spec: OptionDoc<boolean>): OptionSpec<boolean> {
  return {
    ...spec,
    kind: "boolean",
    read(value, label) {
      const parsed = parseGoBoolean(value ?? "false");
      if (parsed === undefined) throw new ConfigError(`${label} must be true or false, not "${value}"`);
      return parsed;
    },
  };
}

/** How a numeric option's text is checked and named in its error. */
interface NumberSyntax {
  /** How `--help` shows it. */
  kind: "integer" | "number";
  /** The whole text must match. */
  pattern: RegExp;
  /** The value in words, for "must be … from min to max". */
  noun: string;
}

const WHOLE: NumberSyntax = { kind: "integer", pattern: /^-?\d+$/, noun: "a whole number" };
const DECIMAL: NumberSyntax = { kind: "number", pattern: /^\d+(\.\d+)?$/, noun: "a number" };

function numberIn(
  spec: OptionDoc<number>,
  range: { min: number; max: number },
  syntax: NumberSyntax,
): OptionSpec<number> {
  return {
    ...spec,
    kind: syntax.kind,
    read(value, label) {
      const parsed = syntax.pattern.test(value ?? "") ? Number(value) : NaN;
      if (!(parsed >= range.min && parsed <= range.max)) {
        throw new ConfigError(`${label} must be ${syntax.noun} from ${range.min} to ${range.max}, not "${value}"`);
      }
      return parsed;
    },
  };
}

/** A whole-number option within `range` (inclusive). */
export function whole(spec: OptionDoc<number>, range: { min: number; max: number }): OptionSpec<number> {
  return numberIn(spec, range, WHOLE);
}

/** A whole-number option within `range` that may be left unset (undefined). */
export function optionalWhole(
  spec: OptionDoc<number | undefined>,
  range: { min: number; max: number },
): OptionSpec<number | undefined> {
  const inner = whole(spec as OptionDoc<number>, range);
  return { ...spec, kind: "integer", read: (value, label) => (value ? inner.read(value, label) : undefined) };
}

/** A non-negative decimal option within `range` (inclusive). */
export function decimal(spec: OptionDoc<number>, range: { min: number; max: number }): OptionSpec<number> {
  return numberIn(spec, range, DECIMAL);
}

/** A Go-style duration option, read into milliseconds within `range` (inclusive). */
export function duration(spec: OptionDoc<number>, range: { minMs: number; maxMs: number }): OptionSpec<number> {
  return {
    ...spec,
    kind: "duration",
    read(value, label) {
      const ms = parseDuration(value ?? "");
      if (ms === undefined || ms < range.minMs || ms > range.maxMs) {
        throw new ConfigError(
          `${label} must be a duration like 15s or 5m between ${range.minMs}ms and ${range.maxMs / 1000}s, ` +
            `not "${value}"`,
        );
      }
      return ms;
    },
  };
}

/** An option taking one of `allowed`, after `normalise` (e.g. lower-casing, or a fallback for an empty value). */
export function choice<T extends string>(
  spec: OptionDoc<T>,
  allowed: readonly T[],
  normalise: (value: string) => string = (v) => v,
): OptionSpec<T> {
  return {
    ...spec,
    kind: "string",
    read(value, label) {
      const normal = normalise(value ?? "");
      if (!(allowed as readonly string[]).includes(normal)) {
        throw new ConfigError(`${label} must be ${orList(allowed)}, not "${normal.slice(0, 40)}"`);
      }
      return normal as T;
    },
  };
}

function orList(values: readonly string[]): string {
  return values.length === 2 ? values.join(" or ") : `${values.slice(0, -1).join(", ")} or ${values.at(-1)}`;
}
