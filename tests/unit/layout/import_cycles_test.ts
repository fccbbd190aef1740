/**
 * No module of the repository is part of an import cycle (type imports and re-exports included): a newcomer can read
 * the modules bottom-up. Pure: reads the source files, starts nothing.
 */
import assert from "node:assert/strict";
import {
  GRAPH_ROOTS,
  importCycles,
  readImportGraph,
  relativeImports,
  resolveSpecifier,
} from "../../support/layout/import_graph.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;

Deno.test("no import cycle among the modules of lib/, simulator/, scripts/, bench/, tests/ and main.ts", () => {
  const graph = readImportGraph(ROOT, GRAPH_ROOTS);
  assert.ok(graph.size > 300, `the graph holds the repository's modules (${graph.size})`);
  const cycles = importCycles(graph);
  assert.deepEqual(
    cycles.map((cycle) => cycle.join(" → ")),
    [],
    "each cycle is named; break it by moving what both sides need into a module below them",
  );
});

Deno.test("the cycle finder names a planted cycle, and only the modules on it", () => {
  const graph = new Map([
    ["a.ts", ["b.ts"]],
    ["b.ts", ["c.ts", "d.ts"]],
    ["c.ts", ["a.ts"]],
    ["d.ts", []],
    ["e.ts", ["a.ts", "e.ts"]],
  ]);
  assert.deepEqual(importCycles(graph), [["a.ts", "b.ts", "c.ts", "a.ts"], ["e.ts", "e.ts"]]);
  graph.set("c.ts", []);
  graph.set("e.ts", ["a.ts"]);
  assert.deepEqual(importCycles(graph), []);
});

Deno.test("type imports, side-effect imports and re-exports are edges; comments, strings and packages are not", () => {
  const source = [
    'import type { A } from "./a.ts";',
    "import { b,",
    '  c } from "../b.ts";',
    'import "./side_effect.ts";',
    'export { d } from "./d.ts";',
    'export type { E } from "./e.ts";',
    'export * as f from "./f.ts";',
    'import { parseArgs } from "node:util";',
    'import v from "valibot";',
    '// import { g } from "./g.ts";',
    "const text = \"import { h } from './h.ts'\";",
    'const later = await import("./dynamic.ts");',
  ].join("\n");
  assert.deepEqual(relativeImports(source), ["./a.ts", "../b.ts", "./side_effect.ts", "./d.ts", "./e.ts", "./f.ts"]);
  assert.equal(resolveSpecifier("lib/kube/informer.ts", "../runtime/./abort.ts"), "lib/runtime/abort.ts");
  assert.equal(resolveSpecifier("main.ts", "./lib/log.ts"), "lib/log.ts");
});
