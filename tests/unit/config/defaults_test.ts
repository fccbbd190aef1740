/**
 * The internal defaults live in one table (lib/defaults.ts): no module falls back to an inline timing or size.
 */
import assert from "node:assert/strict";
import { DEFAULTS } from "../../../lib/defaults.ts";

async function* sources(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) yield* sources(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

Deno.test("no module in lib/ falls back to an inline number of 100 or more: it names a DEFAULTS entry", async () => {
  const lib = new URL("../../../lib", import.meta.url).pathname;
  const inline: string[] = [];
  for await (const path of sources(lib)) {
    // The flags' own defaults are declared with the flags.
    if (path.includes("/lib/config/") || path.endsWith("/lib/defaults.ts")) continue;
    const lines = (await Deno.readTextFile(path)).split("\n");
    lines.forEach((line, i) => {
      if (/\?\?\s*\d[\d_]{2,}\b/.test(line)) inline.push(`${path.slice(lib.length + 1)}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(inline, [], "use lib/defaults.ts");
  assert.equal(DEFAULTS.provisioningPollMs, 1_000, "the provisioning poll the docs state");
});
