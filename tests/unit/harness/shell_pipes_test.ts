/**
 * The project's shell scripts never pipe a command into a reader that stops early (`head`, `grep -q`, `grep -m`).
 * Under `set -o pipefail` the writer then dies of SIGPIPE when it writes after the reader left, and the pipeline fails
 * at random: `etcd --version | head -1` failed 33 times in 300 on a loaded machine and stopped a fresh machine's build
 * of the test binaries with no message. Reading the whole output (`sed -n 1p`, a variable) cannot fail that way.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../../", import.meta.url);

/** A pipe (not `||`) into head, grep -q or grep -m (alone or among other flags, e.g. `-qE`, `-m1`). */
const EARLY_READER =
  /(?<![|])\|(?![|])\s*(head\b|grep\s+(?:-[A-Za-z]*[qm][A-Za-z0-9]*|--quiet|--silent|--max-count)\b)/;

/** Every line of `text` that pipes into an early reader, as `path:line: text`. */
function earlyReaderPipes(path: string, text: string): string[] {
  return text.split("\n").flatMap((line, index) =>
    !line.trimStart().startsWith("#") && EARLY_READER.test(line) ? [`${path}:${index + 1}: ${line.trim()}`] : []
  );
}

/** The project's shell scripts: every `*.sh` outside node_modules and .git, `.ci/run` and the git hooks in `.githooks/`. */
async function shellScripts(dir = ROOT, prefix = ""): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${prefix}${entry.name}`;
    if (entry.isDirectory && entry.name !== "node_modules" && entry.name !== ".git") {
      found.push(...await shellScripts(new URL(`${entry.name}/`, dir), `${path}/`));
    } else if (entry.isFile && (entry.name.endsWith(".sh") || path === ".ci/run" || prefix === ".githooks/")) {
      found.push(path);
    }
  }
  return found;
}

Deno.test("the rule finds the pipes that fail under pipefail and leaves the safe ones alone", () => {
  const script = [
    '"$STAGE/etcd" --version | head -1 >&2',
    'deno --version | grep -q "^deno 2"',
    "x | grep -m1 y",
    "x | grep -qE y",
    "# a comment | head -1",
    "deno --version | sed -n 1p",
    "x || head -1 y",
    "grep -m1 'url (' \"$log\" | sed 's/a/b/'",
    'reported="$(deno --version)"',
  ].join("\n");
  assert.deepEqual(earlyReaderPipes("s.sh", script), [
    's.sh:1: "$STAGE/etcd" --version | head -1 >&2',
    's.sh:2: deno --version | grep -q "^deno 2"',
    "s.sh:3: x | grep -m1 y",
    "s.sh:4: x | grep -qE y",
  ]);
});

Deno.test("no shell script of the project pipes into head, grep -q or grep -m (SIGPIPE under pipefail)", async () => {
  const scripts = await shellScripts();
  assert.ok(
    scripts.includes(".ci/run") && scripts.includes("scripts/test_binaries.sh") &&
      scripts.includes(".githooks/pre-commit"),
    scripts.join(", "),
  );
  const found: string[] = [];
  for (const path of scripts) found.push(...earlyReaderPipes(path, await Deno.readTextFile(new URL(path, ROOT))));
  assert.deepEqual(found, [], `read the whole output instead (sed -n 1p, or a variable):\n${found.join("\n")}`);
});
