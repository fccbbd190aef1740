/**
 * The fast tier keeps its promise (README): no test under tests/unit/ starts a process or sleeps a fixed time — a
 * process belongs in tests/integration/, a wait on time in a fake clock. Pure: reads the test files.
 */
import assert from "node:assert/strict";

const UNIT = new URL("../", import.meta.url).pathname;

/**
 * Files the data-plane work owns, whose one fixed wait (a member session's 300 ms) is being replaced there; they are
 * left to it.
 */
const OWNED_ELSEWHERE = /^simulator\/data_plane_/;

const STARTS_A_PROCESS = /new Deno\.Command\(|Deno\.run\(|\bspawn\(\)/;
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

Deno.test("no test of the fast tier starts a process", () => {
  const found = [...testFiles(UNIT)].flatMap((file) =>
    matching(Deno.readTextFileSync(`${UNIT}${file}`), STARTS_A_PROCESS).map((line) => `tests/unit/${file}:${line}`)
  );
  assert.deepEqual(found, [], "move these to tests/integration/");
});

Deno.test("no test of the fast tier sleeps a fixed time", () => {
  const found = [...testFiles(UNIT)].filter((file) => !OWNED_ELSEWHERE.test(file)).flatMap((file) =>
    matching(Deno.readTextFileSync(`${UNIT}${file}`), SLEEPS)
      // A sleep on a fake clock (`{ clock }`) takes no time.
      .filter((line) => !/\{ clock \}/.test(line))
      .map((line) => `tests/unit/${file}:${line}`)
  );
  assert.deepEqual(found, [], "wait for a signal, or run the code on a fake clock");
});

Deno.test("the patterns find a process and a fixed sleep, and leave a zero-length turn alone", () => {
  assert.match('const child = new Deno.Command("sh", { args }).spawn();', STARTS_A_PROCESS);
  assert.match("await new Promise((resolve) => setTimeout(resolve, 10));", SLEEPS);
  assert.match("await abortableSleep(100);", SLEEPS);
  assert.doesNotMatch("await new Promise((resolve) => setTimeout(resolve, 0));", SLEEPS);
  assert.doesNotMatch("const timer = setTimeout(() => reject(new Error('late')), 5_000);", SLEEPS);
});
