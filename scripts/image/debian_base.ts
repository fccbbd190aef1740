/**
 * The image's base, made from Debian packages without a container engine: `apt-get download` the packages for one
 * architecture, unpack them with `dpkg-deb -x`, keep only what the Deno runtime needs, and write the files their
 * maintainer scripts would have made (no postinst runs): the CA bundle, `/etc/passwd`, `/etc/group`,
 * `/etc/nsswitch.conf`. Each package's control paragraph goes into `/var/lib/dpkg/status.d/<package>` (where
 * distroless images keep theirs, so scanners find the versions), and its `copyright` file stays.
 *
 * The packages come from this machine's apt sources (Debian 12 here): the versions are whatever apt's candidate is,
 * recorded in the image. Downloads are kept in a cache outside the clone, keyed by file name and checked by SHA256.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { runTool } from "./run_tool.ts";

/** A Debian architecture this image is built for. */
export type DebianArchitecture = "amd64" | "arm64";

/** What the image keeps of one package. */
interface PackageRecipe {
  /** Package name. */
  name: string;
  /** `Architecture: all` packages are the same for every architecture. */
  architectureIndependent?: boolean;
  /** Paths (relative, no leading `/`) to keep, besides `usr/share/doc/<name>/copyright`. */
  keep: RegExp[];
}

/**
 * The packages of the base, and what each contributes:
 * - `libc6`: the dynamic loader and the shared libraries (Deno links libc, libm, libdl, librt, libpthread);
 * - `libgcc-s1`: `libgcc_s.so.1` (Deno links it for unwinding); its copyright lives in `gcc-12-base`;
 * - `ca-certificates`: the Mozilla roots, concatenated here into `/etc/ssl/certs/ca-certificates.crt`;
 * - `base-files`: `/etc/os-release` and `/etc/debian_version`, so scanners know the distribution.
 */
const RECIPES: PackageRecipe[] = [
  { name: "base-files", keep: [/^etc\/os-release$/, /^usr\/lib\/os-release$/, /^etc\/debian_version$/] },
  { name: "ca-certificates", architectureIndependent: true, keep: [] },
  { name: "gcc-12-base", keep: [] },
  { name: "libc6", keep: [/^lib(64)?\/([^/]+\/)?(ld-linux[^/]*|lib[^/]*\.so(\.[0-9]+)*)$/] },
  { name: "libgcc-s1", keep: [/^lib\/[^/]+\/libgcc_s\.so\.1$/] },
];

/** A Debian package that went into the base. */
export interface DebianPackage {
  /** Package name. */
  name: string;
  /** Exact version, e.g. `2.36-9+deb12u14`. */
  version: string;
  /** `amd64`, `arm64` or `all`. */
  architecture: string;
  /** SHA256 of the `.deb`. */
  sha256: string;
}

/** The user the image runs as. */
export const NONROOT = { name: "nonroot", uid: 65532, gid: 65532, home: "/home/nonroot" } as const;

/** Files of the base whose owner is not root, for the layer writer. */
export const BASE_OWNERS: Record<string, [number, number]> = {
  "home/nonroot": [NONROOT.uid, NONROOT.gid],
};

/** Parses `apt-cache show` / `dpkg-deb -f` output into one field map per paragraph. */
function controlParagraphs(text: string): Record<string, string>[] {
  const paragraphs: Record<string, string>[] = [];
  let fields: Record<string, string> = {};
  let last = "";
  for (const line of text.split("\n")) {
    if (line === "") {
      if (Object.keys(fields).length > 0) paragraphs.push(fields);
      fields = {};
      continue;
    }
    if (/^\s/.test(line) && last) {
      fields[last] += `\n${line}`;
      continue;
    }
    const colon = line.indexOf(":");
    if (colon > 0) {
      last = line.slice(0, colon);
      fields[last] = line.slice(colon + 1).trim();
    }
  }
  if (Object.keys(fields).length > 0) paragraphs.push(fields);
  return paragraphs;
}

function aptSpec(recipe: PackageRecipe, architecture: DebianArchitecture): string {
  return `${recipe.name}:${recipe.architectureIndependent ? "all" : architecture}`;
}

/** apt's candidate of every recipe for `architecture`, in one `apt-cache show` (each call takes about a second). */
async function candidates(architecture: DebianArchitecture): Promise<Map<string, Record<string, string>>> {
  const specs = RECIPES.map((recipe) => aptSpec(recipe, architecture));
  const text = await runTool("apt-cache", ["show", "--no-all-versions", ...specs]);
  const found = new Map<string, Record<string, string>>();
  for (const fields of controlParagraphs(text)) {
    const recipe = RECIPES.find((r) => r.name === fields.Package);
    if (recipe && [architecture, "all"].includes(fields.Architecture ?? "")) found.set(recipe.name, fields);
  }
  return found;
}

/**
 * apt's candidates for `architecture`. When apt does not know them all: for a foreign architecture
 * `dpkg --add-architecture` first, then `apt-get update` (once per machine, root only), and ask again.
 *
 * @throws when apt still lacks a package, or this process cannot run dpkg/apt-get as root.
 */
export async function aptCandidates(architecture: DebianArchitecture): Promise<Map<string, Record<string, string>>> {
  const known = await candidates(architecture).catch(() => new Map<string, Record<string, string>>());
  if (known.size === RECIPES.length) return known;
  const native = (await runTool("dpkg", ["--print-architecture"])).trim();
  const foreign = (await runTool("dpkg", ["--print-foreign-architectures"])).split("\n").map((s) => s.trim());
  const addArchitecture = native !== architecture && !foreign.includes(architecture);
  const steps = `${addArchitecture ? `dpkg --add-architecture ${architecture} && ` : ""}apt-get update`;
  if (Deno.uid() !== 0) {
    throw new Error(`apt does not know the ${architecture} base packages: run \`${steps}\` as root`);
  }
  console.error(`image: ${steps} (apt does not know the ${architecture} base packages yet)`);
  if (addArchitecture) await runTool("dpkg", ["--add-architecture", architecture]);
  await runTool("apt-get", ["update", "-qq"]);
  const found = await candidates(architecture);
  const missing = RECIPES.filter((recipe) => !found.has(recipe.name)).map((recipe) => aptSpec(recipe, architecture));
  if (missing.length > 0) {
    throw new Error(`apt has no candidate for ${missing.join(", ")}: check /etc/apt/sources.list`);
  }
  return found;
}

/** Downloads (or finds in `cacheDir`) the candidate `.deb` of `recipe` described by apt's `fields`. */
async function downloadPackage(
  recipe: PackageRecipe,
  architecture: DebianArchitecture,
  fields: Record<string, string> | undefined,
  cacheDir: string,
): Promise<{ file: string; package: DebianPackage }> {
  const spec = aptSpec(recipe, architecture);
  const { Version: version, Filename: filename, SHA256: sha256 } = fields ?? {};
  if (!version || !filename || !sha256) {
    throw new Error(`apt-cache show ${spec} gave no version, file name and SHA256: run apt-get update`);
  }
  const file = `${cacheDir}/${filename.split("/").pop()}`;
  if (await fileSha256(file) !== sha256) {
    // apt checks the download against the signed index; the sandbox user is root because the cache is root's.
    await runTool("apt-get", ["download", "-qq", "-o", "APT::Sandbox::User=root", `${spec}=${version}`], {
      cwd: cacheDir,
    });
    const actual = await fileSha256(file);
    if (actual !== sha256) throw new Error(`${file} has SHA256 ${actual}, apt's index says ${sha256}`);
  }
  return {
    file,
    package: { name: recipe.name, version, architecture: fields?.Architecture ?? architecture, sha256 },
  };
}

async function fileSha256(file: string): Promise<string | undefined> {
  try {
    const hash = createHash("sha256");
    using handle = await Deno.open(file);
    for await (const chunk of handle.readable) hash.update(chunk);
    return hash.digest("hex");
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

async function listTree(root: string, relative = ""): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(relative ? `${root}/${relative}` : root)) {
    const path = relative ? `${relative}/${entry.name}` : entry.name;
    found.push(path);
    if (entry.isDirectory && !entry.isSymlink) found.push(...await listTree(root, path));
  }
  return found.sort();
}

/** Copies one path (file or symlink, mode kept) from `from` into `to`, making parent directories 0755. */
async function copyPath(from: string, to: string, path: string): Promise<void> {
  const parent = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
  if (parent) await Deno.mkdir(`${to}/${parent}`, { recursive: true, mode: 0o755 });
  const info = await Deno.lstat(`${from}/${path}`);
  if (info.isSymlink) {
    await Deno.symlink(await Deno.readLink(`${from}/${path}`), `${to}/${path}`);
  } else {
    await Deno.copyFile(`${from}/${path}`, `${to}/${path}`);
    await Deno.chmod(`${to}/${path}`, (info.mode ?? 0o644) & 0o7777);
  }
}

/** Concatenates the Mozilla roots in file-name order, each ending in a newline: what update-ca-certificates makes. */
async function caBundle(unpacked: string): Promise<string> {
  const dir = `${unpacked}/usr/share/ca-certificates/mozilla`;
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) if (entry.name.endsWith(".crt")) names.push(entry.name);
  if (names.length === 0) throw new Error(`no certificates in ${dir}: the ca-certificates package looks wrong`);
  names.sort();
  const parts: string[] = [];
  for (const name of names) {
    const pem = await Deno.readTextFile(`${dir}/${name}`);
    parts.push(pem.endsWith("\n") ? pem : `${pem}\n`);
  }
  return parts.join("");
}

/**
 * Builds the base root file system for `architecture` into the empty directory `root` and returns the packages
 * it holds. Directory modes are 0755 except `/tmp` (1777) and the two homes (0700); file modes come from the
 * packages; generated files are 0644.
 */
export async function buildDebianBase(
  architecture: DebianArchitecture,
  root: string,
  options: { cacheDir: string; workDir: string },
): Promise<DebianPackage[]> {
  const available = await aptCandidates(architecture);
  await Deno.mkdir(options.cacheDir, { recursive: true });
  const packages: DebianPackage[] = [];
  for (const recipe of RECIPES) {
    const downloaded = await downloadPackage(recipe, architecture, available.get(recipe.name), options.cacheDir);
    const unpacked = `${options.workDir}/deb-${recipe.name}-${architecture}`;
    await Deno.mkdir(unpacked, { recursive: true });
    await runTool("dpkg-deb", ["-x", downloaded.file, unpacked]);
    const docDir = `usr/share/doc/${recipe.name}`;
    for (const path of await listTree(unpacked)) {
      const info = await Deno.lstat(`${unpacked}/${path}`);
      const isDocLink = path === docDir && info.isSymlink; // e.g. libgcc-s1's doc is gcc-12-base's
      if (info.isDirectory && !info.isSymlink) continue;
      if (isDocLink || path === `${docDir}/copyright` || recipe.keep.some((pattern) => pattern.test(path))) {
        await copyPath(unpacked, root, path);
      }
    }
    if (recipe.name === "ca-certificates") {
      await Deno.mkdir(`${root}/etc/ssl/certs`, { recursive: true });
      await Deno.writeTextFile(`${root}/etc/ssl/certs/ca-certificates.crt`, await caBundle(unpacked));
    }
    const control = (await runTool("dpkg-deb", ["-f", downloaded.file])).trimEnd();
    await Deno.mkdir(`${root}/var/lib/dpkg/status.d`, { recursive: true });
    await Deno.writeTextFile(`${root}/var/lib/dpkg/status.d/${recipe.name}`, `${control}\n`);
    packages.push(downloaded.package);
  }
  await Deno.writeTextFile(
    `${root}/etc/passwd`,
    "root:x:0:0:root:/root:/sbin/nologin\n" +
      "nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
      `${NONROOT.name}:x:${NONROOT.uid}:${NONROOT.gid}:${NONROOT.name}:${NONROOT.home}:/sbin/nologin\n`,
  );
  await Deno.writeTextFile(
    `${root}/etc/group`,
    `root:x:0:\nnobody:x:65534:\n${NONROOT.name}:x:${NONROOT.gid}:\n`,
  );
  await Deno.writeTextFile(`${root}/etc/nsswitch.conf`, "passwd: files\ngroup: files\nhosts: files dns\n");
  for (const dir of ["tmp", "root", NONROOT.home.slice(1)]) await Deno.mkdir(`${root}/${dir}`, { recursive: true });
  await normaliseModes(root);
  await Deno.chmod(`${root}/tmp`, 0o1777);
  await Deno.chmod(`${root}/root`, 0o700);
  await Deno.chmod(`${root}${NONROOT.home}`, 0o700);
  return packages;
}

/** Directories 0755; files the base generated (not from a package) 0644. */
async function normaliseModes(root: string): Promise<void> {
  for (const path of await listTree(root)) {
    const info = await Deno.lstat(`${root}/${path}`);
    if (info.isDirectory) await Deno.chmod(`${root}/${path}`, 0o755);
  }
  const generated = ["etc/passwd", "etc/group", "etc/nsswitch.conf", "etc/ssl/certs/ca-certificates.crt"];
  for await (const entry of Deno.readDir(`${root}/var/lib/dpkg/status.d`)) {
    generated.push(`var/lib/dpkg/status.d/${entry.name}`);
  }
  for (const path of generated) await Deno.chmod(`${root}/${path}`, 0o644);
}

/** `name=version` of each package, sorted: the image's label value. */
export function packageList(packages: DebianPackage[]): string {
  return packages.map((p) => `${p.name}=${p.version}`).sort().join(" ");
}
