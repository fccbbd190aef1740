/**
 * How the doctor's report is printed: a checklist for people (`✓` pass, `✗` fail, `!` warn, `−` skip, the fix
 * indented under its line, a summary line) or one JSON document (`--output=json`). Both pass through secret
 * redaction, so a registered secret (the Ankra Cloud token) never reaches the output.
 *
 * @module
 */
import { redact } from "../log.ts";
import type { DoctorReport, FindingStatus } from "./finding.ts";

/** The mark of each status in the checklist. */
export const STATUS_MARKS: Record<FindingStatus, string> = { pass: "✓", fail: "✗", warn: "!", skip: "−" };

const FIX_INDENT = "    ";

/** Counts of findings by status. */
export function statusCounts(report: DoctorReport): Record<FindingStatus, number> {
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
