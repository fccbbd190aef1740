/**
 * The repository's import graph, read from the source text alone (no process, no module loading): which module
 * imports which through a static `import … from`, `import type … from`, side-effect `import "…"` or `export … from`
 * whose specifier is a relative path, and the cycles in it ({@linkcode importCycles}, a pure function over any graph).
 *
 * @module
 */

/** Module path (relative to the repository, `lib/log.ts`) → the modules it imports, in the same form. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** Directories and files whose modules make the graph ({@linkcode readImportGraph}'s default). */
export const GRAPH_ROOTS: readonly string[] = ["lib/", "simulator/", "scripts/", "bench/", "tests/", "main.ts"];

/**
 * A statement that names a module: `import …`, `import type …`, `import "…"`, `export … from`, at the start of a line
 * (comments and text inside strings start elsewhere), up to the quoted specifier after `from` (or `import` alone).
 */
const STATIC_SPECIFIER =
  /^[ \t]*(?:import[ \t]+(?:type[ \t]+)?(?:[\w$*{][^;]*?[ \t\n]from[ \t]*)?|export[ \t]+(?:type[ \t]+)?(?:\*(?:[ \t]+as[ \t]+[\w$]+)?|\{[^}]*\})[ \t\n]*from[ \t]*)["']([^"']+)["']/gm;

/** The relative specifiers (`./x.ts`, `../y/z.ts`) of `source`'s static imports and re-exports, type-only ones too. */
export function relativeImports(source: string): string[] {
  const specifiers: string[] = [];
  for (const match of source.matchAll(STATIC_SPECIFIER)) {
    if (match[1].startsWith("./") || match[1].startsWith("../")) specifiers.push(match[1]);
  }
  return specifiers;
}

/** `specifier` as imported by module `from`, as a repository path (`lib/kube/../log.ts` → `lib/log.ts`). */
export function resolveSpecifier(from: string, specifier: string): string {
  const parts = from.split("/").slice(0, -1);
  for (const part of specifier.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  return parts.join("/");
}

function modulesUnder(root: string, path: string): string[] {
  if (!path.endsWith("/")) return [path];
  const found: string[] = [];
  for (const entry of Deno.readDirSync(`${root}${path}`)) {
    if (entry.isDirectory) found.push(...modulesUnder(root, `${path}${entry.name}/`));
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry.name)) found.push(`${path}${entry.name}`);
  }
  return found;
}

/**
 * The import graph of the modules under `roots` (default {@linkcode GRAPH_ROOTS}) of the repository at `root` (a
 * path ending in `/`); an import of a module outside them (or of a file that does not exist) is left out.
 */
export function readImportGraph(root: string, roots: readonly string[] = GRAPH_ROOTS): ImportGraph {
  const modules = roots.flatMap((path) => modulesUnder(root, path)).sort();
  const known = new Set(modules);
  const graph = new Map<string, string[]>();
  for (const module of modules) {
    const imported = relativeImports(Deno.readTextFileSync(`${root}${module}`))
      .map((specifier) => resolveSpecifier(module, specifier))
      .filter((path) => known.has(path));
    graph.set(module, [...new Set(imported)]);
  }
  return graph;
}

/**
 * Every import cycle of `graph`, one per strongly connected group of modules (Tarjan's algorithm), each named as a
 * closed path from its first module in sorted order back to it (`a.ts → b.ts → a.ts`); a module importing itself is
 * a cycle of one. None for a graph without cycles.
 */
export function importCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const lowest = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const groups: string[][] = [];
  const visit = (module: string): void => {
    index.set(module, index.size);
    lowest.set(module, index.get(module)!);
    stack.push(module);
    onStack.add(module);
    for (const next of graph.get(module) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        lowest.set(module, Math.min(lowest.get(module)!, lowest.get(next)!));
      } else if (onStack.has(next)) {
        lowest.set(module, Math.min(lowest.get(module)!, index.get(next)!));
      }
    }
    if (lowest.get(module) !== index.get(module)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== module);
    if (group.length > 1 || (graph.get(module) ?? []).includes(module)) groups.push(group.sort());
  };
  for (const module of [...graph.keys()].sort()) if (!index.has(module)) visit(module);
  return groups.map((group) => closedPath(graph, group)).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** A shortest closed path through `group`'s first module, inside the group (breadth first). */
function closedPath(graph: ImportGraph, group: string[]): string[] {
  const members = new Set(group);
  const start = group[0];
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const module = queue.shift()!;
    for (const next of graph.get(module) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [module];
        for (let at = module; at !== start;) {
          at = cameFrom.get(at)!;
          path.unshift(at);
        }
        return [...path, start];
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, module);
        queue.push(next);
      }
    }
  }
  return [...group, start];
}
