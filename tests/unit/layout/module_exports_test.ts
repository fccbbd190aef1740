/**
 * Every export of lib/ is imported by another module: a name only its own file uses is declared without `export`, so
 * a module's exports are the list of what the rest of the code base needs from it. Pure: reads the source files.
 */
import assert from "node:assert/strict";
import { exportedNames, exportsUsedOnlyInTheirOwnFile } from "../../support/layout/module_exports.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;

Deno.test("no export of lib/ is used only in its own file", () => {
  assert.deepEqual(exportsUsedOnlyInTheirOwnFile(ROOT), [], "drop `export` from these, or import them where needed");
});

Deno.test("exported names are read from declarations and export lists, re-exports included", () => {
  const source = [
    "export const A = 1;",
    "export async function b() {}",
    "export interface C {}",
    "export type D = string;",
    "export class E {}",
    "const f = 2;",
    "export { f as g };",
    'export type { H } from "./h.ts";',
    "// export const I = 3;",
  ].join("\n");
  assert.deepEqual(exportedNames(source).sort(), ["A", "C", "D", "E", "H", "b", "g"]);
});
