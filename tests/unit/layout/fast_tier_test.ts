/**
 * The fast tier keeps its promise (README): no test under tests/unit/ starts a process or reaches beyond loopback —
 * the runtime enforces that (scripts/run_unit_tests.ts's permissions; tests/integration/fast_tier_permissions_test.ts
 * proves the refusals) — and none sleeps a fixed time (a wait on time belongs on a fake clock), which this reads from
 * the test files.
 */
import assert from "node:assert/strict";
import { UNIT_TEST_PERMISSIONS } from "../../../scripts/run_unit_tests.ts";

const UNIT = new URL("../", import.meta.url).pathname;
/** A promise resolved by a timer of a fixed, non-zero time, or a sleep of one. */
const SLEEPS =
  /setTimeout\(\s*(?:resolve|r|res|done)\s*,\s*[1-9][\d_]*\s*\)|\b(?:abortableSleep|delay|sleep)\(\s*[1-9][\d_]*\s*[,)]/;

/** The test files of the fast tier, this one (which spells the patterns) left out. */
function* testFiles(dir: string, prefix = ""): Generator<string> {
  for (const entry of Deno.readDirSync(`${dir}${prefix}`)) {
    if (entry.isDirectory) yield* testFiles(dir, `${prefix}${entry.name}/`);
    else if (entry.name.endsWith(".ts") && `${prefix}${entry.name}` !== "layout/fast_tier_test.ts") {
      yield `${prefix}${entry.name}`;
    }
  }
}

/** Lines of `source` matching `pattern`, comments left out. */
function matching(source: string, pattern: RegExp): string[] {
  return source.split("\n").map((line, i) => [line, i] as const)
    .filter(([line]) => !/^\s*(\/\/|\*)/.test(line) && pattern.test(line))
    .map(([line, i]) => `${i + 1}: ${line.trim()}`);
}

Deno.test("the fast tier runs with no process, no native code and the network on loopback alone", () => {
  assert.ok(UNIT_TEST_PERMISSIONS.includes("--deny-run"), UNIT_TEST_PERMISSIONS.join(" "));
  assert.ok(UNIT_TEST_PERMISSIONS.includes("--deny-ffi"), UNIT_TEST_PERMISSIONS.join(" "));
  assert.deepEqual(UNIT_TEST_PERMISSIONS.filter((p) => /^--allow-(all|run|ffi)\b|^-A$/.test(p)), []);
  const net = UNIT_TEST_PERMISSIONS.filter((p) => p.startsWith("--allow-net"));
  assert.deepEqual(net, ["--allow-net=127.0.0.1,localhost,[::1]"], "loopback only");
});

Deno.test("no test of the fast tier sleeps a fixed time", () => {
  const found = [...testFiles(UNIT)].flatMap((file) =>
    matching(Deno.readTextFileSync(`${UNIT}${file}`), SLEEPS)
      // A sleep on a fake clock (`{ clock }`) takes no time.
      .filter((line) => !/\{ clock \}/.test(line))
      .map((line) => `tests/unit/${file}:${line}`)
  );
  assert.deepEqual(found, [], "wait for a signal, or run the code on a fake clock");
});

Deno.test("the pattern finds a fixed sleep, and leaves a zero-length turn alone", () => {
  assert.match("await new Promise((resolve) => setTimeout(resolve, 10));", SLEEPS);
  assert.match("await abortableSleep(100);", SLEEPS);
  assert.doesNotMatch("await new Promise((resolve) => setTimeout(resolve, 0));", SLEEPS);
  assert.doesNotMatch("const timer = setTimeout(() => reject(new Error('late')), 5_000);", SLEEPS);
});
