/**
 * One line of the doctor's checklist: a {@linkcode Finding} with its status (pass, fail, warn or skip), a one-line
 * result and, when it does not pass, what to do. Failures and warnings always carry a fix; a skip carries one when
 * the user can act on it directly (otherwise the finding it waits for does).
 *
 * @module
 */

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
