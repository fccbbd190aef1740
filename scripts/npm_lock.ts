/**
 * The npm packages of deno.lock (v5): name, version, integrity, dependencies, and whether deno.json names them —
 * what the build knows of its npm dependencies without a scanner.
 *
 * @module
 */
import * as v from "valibot";

const LockFile = v.object({
  version: v.string(),
  specifiers: v.optional(v.record(v.string(), v.string()), {}),
  npm: v.optional(
    v.record(v.string(), v.object({ integrity: v.string(), dependencies: v.optional(v.array(v.string()), []) })),
    {},
  ),
});

/** An npm package of deno.lock. */
export interface LockedNpmPackage {
  /** The lock's key, e.g. `@jsep-plugin/regex@1.1.0_jsep@1.6.0` (peer dependencies after `_`). */
  key: string;
  /** Package name. */
  name: string;
  /** Version. */
  version: string;
  /** npm integrity, `sha512-…`. */
  integrity: string;
  /** Lock keys of its dependencies. */
  dependencies: string[];
  /** Whether deno.json names it (a `specifiers` entry). */
  direct: boolean;
}

function splitNameVersion(key: string): { name: string; version: string } {
  const at = key.indexOf("@", 1);
  if (at < 0) throw new Error(`deno.lock has an npm entry without a version: ${key}`);
  return { name: key.slice(0, at), version: key.slice(at + 1).split("_")[0] };
}

/**
 * The npm packages of a deno.lock text, sorted by key; a dependency named without a version (the lock's short form)
 * is resolved to the package of that name.
 *
 * @throws when the lock is not a Deno lock file, or an entry has no sha512 integrity.
 */
export function lockedNpmPackages(lockText: string): LockedNpmPackage[] {
  const parsed = v.safeParse(LockFile, JSON.parse(lockText));
  if (!parsed.success) throw new Error("deno.lock is not a Deno lock file (no version, specifiers and npm)");
  const lock = parsed.output;
  const direct = new Set(
    Object.entries(lock.specifiers).filter(([s]) => s.startsWith("npm:")).map(([s, version]) => {
      const { name } = splitNameVersion(s.slice("npm:".length));
      return `${name}@${version}`;
    }),
  );
  const keys = Object.keys(lock.npm).sort();
  return keys.map((key) => {
    const entry = lock.npm[key];
    if (!entry.integrity.startsWith("sha512-")) throw new Error(`deno.lock has no sha512 integrity for ${key}`);
    const { name, version } = splitNameVersion(key);
    const dependencies = entry.dependencies.map((dependency) =>
      keys.includes(dependency) ? dependency : keys.find((k) => splitNameVersion(k).name === dependency) ?? dependency
    );
    return { key, name, version, integrity: entry.integrity, dependencies, direct: direct.has(`${name}@${version}`) };
  });
}
