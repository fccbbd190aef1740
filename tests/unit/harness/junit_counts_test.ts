/**
 * The test runners' closing lines, read from a JUnit report as Deno writes it (taken from a real run of three tests:
 * one failing with markup in its name and message, one passing, one whose step fails).
 */
import assert from "node:assert/strict";
import { countJunit, describeFailures, MESSAGE_LINES } from "../../../scripts/junit_counts.ts";

const REPORT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="deno test" tests="4" failures="3" errors="0" time="0.013">
    <testsuite name="./x_test.ts" tests="4" disabled="0" errors="0" failures="3">
        <testcase name="a &lt;b&gt; &amp; &quot;c&quot;" classname="./x_test.ts" time="0.002" line="1" col="6">
            <failure message="Uncaught Error: boom &amp; &lt;this&gt;
second line">Error: boom &amp; &lt;this&gt;
second line
Deno.test(&quot;a &lt;b&gt;&quot;, () =&gt; { throw new Error(&quot;boom&quot;); });
                                         ^
    at file:///tmp/jt/x_test.ts:1:42
    at line six
    at line seven</failure>
        </testcase>
        <testcase name="fine" classname="./x_test.ts" time="0.000" line="2" col="6">
        </testcase>
        <testcase name="outer" classname="./x_test.ts" time="0.001" line="3" col="6">
            <failure message="1 test step failed">1 test step failed.</failure>
        </testcase>
        <testcase name="outer &gt; inner" classname="./x_test.ts" time="0.001" line="3" col="43">
            <failure message="Uncaught Error: step broke">Error: step broke</failure>
        </testcase>
    </testsuite>
</testsuites>`;

Deno.test("a JUnit report's counts and failed tests: names and messages unescaped, the message cut to its first lines", () => {
  const counts = countJunit(REPORT);
  assert.deepEqual([counts.passed, counts.failed, counts.skipped], [1, 3, 0]);
  assert.deepEqual(counts.failures.map((f) => [f.file, f.name]), [
    ["./x_test.ts", 'a <b> & "c"'],
    ["./x_test.ts", "outer"],
    ["./x_test.ts", "outer > inner"],
  ]);
  const first = counts.failures[0].message.split("\n");
  assert.equal(first.length, MESSAGE_LINES);
  assert.equal(first[0], "Error: boom & <this>");
  assert.ok(!counts.failures[0].message.includes("line seven"), "lines past the limit are left out");
});

Deno.test("the closing list names each failed test with its message indented, and is empty when none failed", () => {
  const text = describeFailures(countJunit(REPORT).failures);
  assert.match(text, /^✗ \.\/x_test\.ts => a <b> & "c"\n {4}Error: boom & <this>\n {4}second line/);
  assert.match(text, /\n✗ \.\/x_test\.ts => outer > inner\n {4}Error: step broke$/);
  assert.equal(describeFailures(countJunit(REPORT.replace(/<failure[\s\S]*?<\/failure>/g, "")).failures), "");
});
