/**
 * Which exported names of lib/ no other module imports, read from the source text alone: an export that only its own
 * file uses is a private name spelled as a public one. Imports are counted from every module of the import graph
 * (`tests/support/layout/import_graph.ts`): named and type imports, namespace imports (`ns.Name`), re-exports, and
 * dynamic `import("…")` of a module whose exported name the importing file mentions.
 *
 * @module
 */
import { type ImportGraph, readImportGraph, resolveSpecifier } from "./import_graph.ts";

const DECLARED =
  /^export\s+(?:declare\s+)?(?:async\s+)?(?:abstract\s+)?(?:function\*?|class|const|let|var|type|interface|enum)\s+([\w$]+)/gm;
const LISTED = /^export\s+(?:type\s+)?\{([^}]*)\}\s*(?:from\s*["']([^"']+)["'])?/gm;
const IMPORTED = /^[ \t]*import\s+(?:type\s+)?([^;]*?)\s+from\s*["'](\.{1,2}\/[^"']+)["']/gm;
const DYNAMIC = /import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

function listedNames(list: string): { name: string; as: string }[] {
  return list.split(",").map((part) => part.trim().replace(/^type\s+/, "")).filter(Boolean).map((part) => {
    const [name, as] = part.split(/\s+as\s+/).map((word) => word.trim());
    return { name, as: as ?? name };
  });
}

/** The names module `source` exports: declarations (`export const X`, …) and lists (`export { X }`). */
export function exportedNames(source: string): string[] {
  const names = new Set<string>();
  for (const match of source.matchAll(DECLARED)) names.add(match[1]);
  for (const match of source.matchAll(LISTED)) for (const { as } of listedNames(match[1])) names.add(as);
  return [...names];
}

/**
 * Every exported name of a module under `lib/` that no other module of `graph` imports, as `<path>: <name>`, sorted.
 * `root` is the repository (a path ending in `/`).
 */
export function exportsUsedOnlyInTheirOwnFile(root: string, graph: ImportGraph = readImportGraph(root)): string[] {
  const exported = new Map<string, string[]>();
  const sources = new Map<string, string>();
  for (const module of graph.keys()) {
    const source = Deno.readTextFileSync(`${root}${module}`);
    sources.set(module, source);
    if (module.startsWith("lib/")) exported.set(module, exportedNames(source));
  }
  const used = new Map<string, Set<string>>();
  const use = (module: string, name: string) => {
    if (!used.has(module)) used.set(module, new Set());
    used.get(module)!.add(name);
  };
  for (const [module, source] of sources) {
    for (const [, clause, specifier] of source.matchAll(IMPORTED)) {
      const target = resolveSpecifier(module, specifier);
      const namespace = /\*\s+as\s+([\w$]+)/.exec(clause);
      if (namespace) {
        for (const [, name] of source.matchAll(new RegExp(`\\b${namespace[1]}\\.([\\w$]+)`, "g"))) use(target, name);
      }
      const braces = /\{([^}]*)\}/.exec(clause);
      if (braces) { for (const { name } of listedNames(braces[1])) use(target, name); }
      if (/^[\w$]+\s*(,|$)/.test(clause.trim())) use(target, "default");
    }
    for (const [, list, specifier] of source.matchAll(LISTED)) {
      if (specifier) { for (const { name } of listedNames(list)) use(resolveSpecifier(module, specifier), name); }
    }
    for (const [, specifier] of source.matchAll(DYNAMIC)) {
      const target = resolveSpecifier(module, specifier);
      for (const name of exported.get(target) ?? []) {
        if (new RegExp(`\\b${name.replace("$", "\\$")}\\b`).test(source)) use(target, name);
      }
    }
  }
  const unused: string[] = [];
  for (const [module, names] of exported) {
    for (const name of names) if (!used.get(module)?.has(name)) unused.push(`${module}: ${name}`);
  }
  return unused.sort();
}
