/**
 * Writes docs/upstream_flags.md from the upstream flag table (`lib/config/upstream_flags.ts`) and the option table
 * (`lib/config/options.ts`):
 *
 *     deno run --allow-write scripts/upstream_flag_docs.ts
 *
 * @module
 */
import type { OptionSpec } from "../lib/config/option_readers.ts";
import { OPTIONS } from "../lib/config/options.ts";
import { UPSTREAM_FLAGS, type UpstreamFlag } from "../lib/config/upstream_flags.ts";

const NONE = "—";

/** A default as a table cell: in code, or a dash for none. */
function defaultCell(value: string | undefined): string {
  return value ? `\`${value}\`` : NONE;
}

/** Upstream's default as its `--help` would show an empty one of this kind. */
function upstreamDefault(flag: UpstreamFlag): string {
  if (flag.default) return defaultCell(flag.default);
  const zero: Partial<Record<UpstreamFlag["kind"], string>> = { bool: "false", int: "0", float: "0", duration: "0s" };
  return defaultCell(zero[flag.kind]);
}

/** Flag names (with their values) and HTTP paths in a note, set in code. */
function codeSpans(note: string): string {
  return note
    .replace(/(?<![\w`-])--[a-z0-9-]+(=[^\s,;:)]+)?/g, (flag) => `\`${flag}\``)
    .replace(/(?<=^|[\s(])\/[a-z][a-z/]*/g, (path) => `\`${path}\``);
}

/** Every ordered selection of one or more of `items` (each at most once), comma-joined. */
function arrangements(items: string[]): string[] {
  if (items.length === 0) return [];
  return items.flatMap((item, i) => {
    const rest = items.filter((_, j) => j !== i);
    return [item, ...arrangements(rest).map((tail) => `${item},${tail}`)];
  });
}

/** When a flag is accepted without a warning, in words; "" when never. */
function silentWhen(flag: UpstreamFlag): string {
  const values = flag.silentValues ?? [];
  if (values.length === 0) return "";
  const longest = values.reduce((a, b) => (b.split(",").length > a.split(",").length ? b : a)).split(",");
  const all = arrangements(longest);
  if (longest.length > 2 && values.length === all.length && all.every((v) => values.includes(v))) {
    const names = longest.map((item) => `\`${item}\``);
    return `; silent when it names only ${names.slice(0, -1).join(", ")} and ${names.at(-1)}, or some of them, ` +
      "in any order";
  }
  return `; silent for ${values.map((v) => (v === "" ? "an empty value" : `\`${v}\``)).join(", ")}`;
}

/** What this controller does with an upstream flag, as a table cell. */
function effectCell(flag: UpstreamFlag): string {
  const refusedFor = flag.refusedValues?.map((v) => `\`${v}\``).join(", ");
  const effect = flag.effect === "refused"
    ? "**refused**"
    : refusedFor
    ? `**refused** for ${refusedFor}, otherwise ignored with a warning`
    : "ignored with a warning";
  return `${effect}: ${codeSpans(flag.note)}${silentWhen(flag)}`;
}

function table(header: string[], rows: string[][]): string[] {
  return [
    `| ${header.join(" | ")} |`,
    `| ${header.map(() => "---").join(" | ")} |`,
    ...rows.map((cells) => `| ${cells.map((c) => c.replaceAll("|", "\\|")).join(" | ")} |`),
  ];
}

/** The whole document. */
export function upstreamFlagDocument(): string {
  const options = (Object.values(OPTIONS) as OptionSpec<unknown>[]).filter((o) => o.flag);
  const implemented = options.filter((o) => o.upstream);
  const own = options.filter((o) => !o.upstream);
  return [
    "# Upstream cloud-controller-manager flags",
    "",
    "The Go controller was the stock Kubernetes `cloud-controller-manager` command, so it accepted every upstream flag;",
    "ankra-cloud-ccm accepts them all too, so command lines and Helm `extraArgs` written for it keep working. The table",
    "lists each upstream flag (Kubernetes 1.37) that this controller does not implement itself and what it does with",
    "it: a flag that changes nothing here is accepted with one warning at start-up (or silently, when its value is what",
    "this controller does anyway), and a flag whose meaning cannot be honoured stops start-up with one line saying why",
    "and what to do.",
    "",
    "Generated from the tables in `lib/config/upstream_flags.ts` and `lib/config/options.ts` (which also read the",
    "command line) by `deno run --allow-write scripts/upstream_flag_docs.ts`; a test checks that this page matches",
    "the code.",
    "",
    ...table(
      ["Flag", "Upstream default", "What ankra-cloud-ccm does"],
      UPSTREAM_FLAGS.map((flag) => [`\`--${flag.name}\``, upstreamDefault(flag), effectCell(flag)]),
    ),
    "",
    `“${NONE}” means upstream has no default (an empty value). Boolean flags may be given bare (\`--profiling\`) or`,
    "with a value (`--profiling=false`); list flags given more than once count as one comma-joined list.",
    "",
    "## Upstream flags this controller implements itself",
    "",
    "These keep their upstream meaning; the differences are:",
    "",
    ...table(
      ["Flag", "Upstream default", "ankra-cloud-ccm default", "Difference"],
      implemented.map((o) => [
        `\`--${o.flag}\``,
        defaultCell(o.upstream!.default),
        defaultCell(o.default),
        o.upstream!.difference ?? "none",
      ]),
    ),
    "",
    "## Flags only this controller has",
    "",
    ...table(
      ["Flag", "Environment variable", "Default", "What it does"],
      own.map((o) => [`\`--${o.flag}\``, o.env ? `\`${o.env}\`` : NONE, defaultCell(o.default), codeSpans(o.help)]),
    ),
    "",
  ].join("\n");
}

if (import.meta.main) {
  await Deno.writeTextFile(new URL("../docs/upstream_flags.md", import.meta.url), upstreamFlagDocument());
}
