/**
 * The closing line's numbers (`N passed, N failed`) and the failed tests from Deno's JUnit reports, for the test
 * runners (scripts/run_tests.ts, scripts/run_unit_tests.ts).
 *
 * @module
 */

/** Counts from a Deno JUnit report. */
export interface TestCounts {
  /** Tests that passed. */
  passed: number;
  /** Tests that failed or errored. */
  failed: number;
  /** Tests that were ignored. */
  skipped: number;
  /** Each failed test: its file, name and the first lines of its message (steps included). */
  failures: FailedTest[];
}

/** One failed test of a JUnit report. */
export interface FailedTest {
  /** The test file, as Deno names it (`./tests/…`). */
  file: string;
  /** The test's name (`outer > step` for a step). */
  name: string;
  /** The failure message's first lines (at most {@linkcode MESSAGE_LINES}), unescaped. */
  message: string;
}

/** How many lines of a failure's message the closing list repeats. */
export const MESSAGE_LINES = 6;

function unescapeXml(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");
}

function attribute(tag: string, name: string): string {
  return unescapeXml(new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1] ?? "");
}

/** Reads the totals of a Deno JUnit report (every test case, steps included). */
export function countJunit(xml: string): TestCounts {
  const cases = xml.match(/<testcase\b[\s\S]*?(?:\/>|<\/testcase>)/g) ?? [];
  let failed = 0;
  let skipped = 0;
  const failures: FailedTest[] = [];
  for (const testCase of cases) {
    if (/<failure\b|<error\b/.test(testCase)) {
      failed++;
      const open = /^<testcase\b[^>]*>/.exec(testCase)?.[0] ?? testCase;
      const body = /<(?:failure|error)\b[^>]*>([\s\S]*?)<\/(?:failure|error)>/.exec(testCase)?.[1] ??
        attribute(/<(?:failure|error)\b[^>]*>/.exec(testCase)?.[0] ?? "", "message");
      failures.push({
        file: attribute(open, "classname"),
        name: attribute(open, "name"),
        message: unescapeXml(body).split("\n").slice(0, MESSAGE_LINES).join("\n"),
      });
    } else if (/<skipped\b/.test(testCase)) skipped++;
  }
  return { passed: cases.length - failed - skipped, failed, skipped, failures };
}

/**
 * The failed tests of a run, for the end of its output where a reader of the last lines sees them: one block per
 * test (`✗ <file> => <name>` and its message's first lines, indented); empty when none failed.
 */
export function describeFailures(failures: readonly FailedTest[]): string {
  return failures.map((f) => `✗ ${f.file} => ${f.name}\n${f.message.replace(/^/gm, "    ")}`).join("\n");
}
