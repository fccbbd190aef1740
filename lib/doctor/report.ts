/**
 * The doctor's report: one {@linkcode Finding} per check — its status (pass, fail, warn or skip), a one-line result
 * and, when it does not pass, what to do (failures and warnings always carry a fix; a skip carries one when the user
 * can act on it directly) — and how it is printed: a checklist for people (`✓` pass, `✗` fail, `!` warn, `−` skip,
 * the fix indented under its line, a summary line) or one JSON document (`--output=json`). Both pass through secret
 * redaction, so a registered secret (the Ankra Cloud token) never reaches the output.
 *
 * @module
 */
import { redact } from "../log.ts";

/** How a check came out: `fail` makes the doctor exit 1; `warn` and `skip` do not. */
export type FindingStatus = "pass" | "fail" | "warn" | "skip";

/** One checked thing. */
export interface Finding {
  /** Stable identifier, e.g. `token-operate` (for scripts reading `--output=json`). */
  id: string;
  /** What was checked, e.g. "API token may make changes". */
  title: string;
  /** The outcome. */
  status: FindingStatus;
  /** One line: what was found. */
  result: string;
  /** What to do, when not passing (may hold several lines). */
  fix?: string;
}

/** The identity of a check: its id and title. */
export interface CheckName {
  /** Stable identifier. */
  id: string;
  /** What is checked. */
  title: string;
}

/** A passing finding. */
export function pass(check: CheckName, result: string): Finding {
  return { ...check, status: "pass", result };
}

/** A failing finding: `fix` says what to do. */
export function fail(check: CheckName, result: string, fix: string): Finding {
  return { ...check, status: "fail", result, fix };
}

/** A warning: works now, but `fix` says what would break and what to do. */
export function warn(check: CheckName, result: string, fix: string): Finding {
  return { ...check, status: "warn", result, fix };
}

/** A check that could not be made: `result` says why; `fix` when the user can act on it directly. */
export function skip(check: CheckName, result: string, fix?: string): Finding {
  return fix === undefined ? { ...check, status: "skip", result } : { ...check, status: "skip", result, fix };
}

/** The doctor's whole answer, as `--output=json` prints it. */
export interface DoctorReport {
  /** The program's version, e.g. `v0.2.0`. */
  version: string;
  /** True when no finding failed (warnings and skips do not count). */
  ok: boolean;
  /** Every finding in checklist order. */
  findings: Finding[];
}

/** Builds the report of `findings`. */
export function doctorReport(version: string, findings: Finding[]): DoctorReport {
  return { version, ok: findings.every((f) => f.status !== "fail"), findings };
}

/** The exit code of a report: 0 when nothing failed, 1 otherwise. */
export function exitCode(report: DoctorReport): number {
  return report.ok ? 0 : 1;
}

/** Names in a sentence: at most `limit` of them, then "and N more". */
export function nameList(names: string[], limit = 10): string {
  if (names.length <= limit) return names.join(", ");
  return `${names.slice(0, limit).join(", ")} and ${names.length - limit} more`;
}

/** `count` with the noun in singular or plural ("1 node", "3 nodes"). */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

/** The mark of each status in the checklist. */
const STATUS_MARKS: Record<FindingStatus, string> = { pass: "✓", fail: "✗", warn: "!", skip: "−" };

const FIX_INDENT = "    ";

/** Counts of findings by status. */
function statusCounts(report: DoctorReport): Record<FindingStatus, number> {
  const counts: Record<FindingStatus, number> = { pass: 0, fail: 0, warn: 0, skip: 0 };
  for (const finding of report.findings) counts[finding.status]++;
  return counts;
}

/** The closing line: the counts and what they mean for installing. */
export function summaryLine(report: DoctorReport): string {
  const counts = statusCounts(report);
  const parts = [
    `${counts.pass} passed`,
    `${counts.fail} failed`,
    `${counts.warn} ${counts.warn === 1 ? "warning" : "warnings"}`,
    `${counts.skip} skipped`,
  ];
  const verdict = counts.fail > 0
    ? "fix the failures above, then run the doctor again"
    : counts.warn > 0
    ? "ready, with the warnings above"
    : "ready";
  return `${parts.join(", ")}: ${verdict}`;
}

/** The checklist as text (ends with a newline). */
export function formatText(report: DoctorReport, heading?: string): string {
  const lines: string[] = [];
  if (heading) lines.push(heading, "");
  for (const finding of report.findings) {
    lines.push(`${STATUS_MARKS[finding.status]} ${finding.title}: ${finding.result}`);
    if (finding.fix && finding.status !== "pass") {
      for (const line of finding.fix.split("\n")) lines.push(FIX_INDENT + line);
    }
  }
  lines.push("", summaryLine(report));
  return redact(lines.join("\n")) + "\n";
}

/** The report as one JSON document (ends with a newline). */
export function formatJson(report: DoctorReport): string {
  const document = {
    version: report.version,
    ok: report.ok,
    findings: report.findings.map((f) => ({
      id: f.id,
      title: f.title,
      status: f.status,
      result: f.result,
      ...(f.fix && f.status !== "pass" ? { fix: f.fix } : {}),
    })),
  };
  return redact(JSON.stringify(document, null, 2)) + "\n";
}
