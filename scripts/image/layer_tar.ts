/**
 * Reproducible image layers made by Debian's GNU tar and gzip: a directory tree archived as POSIX tar with its
 * entries sorted by name, one mtime, numeric owners 0:0 (unless a path is given another owner), no user or group
 * names, no atime/ctime and extended headers named without the process id; then compressed with `gzip -n` (no name,
 * no time). The same tree gives the same bytes, so the same digests.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { runTool } from "./run_tool.ts";

/** Digests and sizes of a written layer blob. */
export interface LayerBlob {
  /** `sha256:…` of the compressed blob: the manifest's layer digest and the blob's file name. */
  digest: string;
  /** Size of the compressed blob in bytes. */
  size: number;
  /** `sha256:…` of the uncompressed tar: the config's `rootfs.diff_ids` entry. */
  diffId: string;
  /** Size of the uncompressed tar in bytes. */
  uncompressedSize: number;
}

/** Paths (relative, e.g. `home/nonroot`) owned by someone else than root, with everything below them. */
export type OwnerOverrides = Record<string, [uid: number, gid: number]>;

/** The GNU tar options that make an archive depend on the tree's names, contents and modes only. */
function reproducibleTarOptions(mtime: number): string[] {
  return [
    "--format=posix",
    "--sort=name",
    `--mtime=@${mtime}`,
    "--numeric-owner",
    "--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime",
  ];
}

async function fileSha256(file: string): Promise<{ digest: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  using handle = await Deno.open(file);
  for await (const chunk of handle.readable) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { digest: `sha256:${hash.digest("hex")}`, size };
}

/**
 * Archives the tree under `dir` (its contents, not `dir` itself) as a gzip'd layer into `blobDir` (an OCI layout's
 * `blobs/sha256`), named by its digest. Every entry gets `mtime` (seconds since the epoch) and owner 0:0, except the
 * paths in `owners`, which are appended after the rest with their own owner.
 *
 * @throws when tar or gzip is missing or fails.
 */
export async function writeGzipLayer(
  dir: string,
  blobDir: string,
  options: { mtime: number; owners?: OwnerOverrides },
): Promise<LayerBlob> {
  const work = await Deno.makeTempDir({ dir: blobDir, prefix: ".layer-" });
  try {
    const tar = `${work}/layer.tar`;
    const names: string[] = [];
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
    names.sort();
    const overrides = Object.entries(options.owners ?? {}).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
    const common = ["-C", dir, `--file=${tar}`, ...reproducibleTarOptions(options.mtime)];
    const excluded = overrides.map(([path]) => `--exclude=${path}`);
    await runTool("tar", ["--create", ...common, "--owner=0", "--group=0", "--anchored", ...excluded, "--", ...names]);
    for (const [path, [uid, gid]] of overrides) {
      await runTool("tar", ["--append", ...common, `--owner=${uid}`, `--group=${gid}`, "--", path]);
    }
    const uncompressed = await fileSha256(tar);
    await runTool("gzip", ["-n", tar]);
    const compressed = await fileSha256(`${tar}.gz`);
    const target = `${blobDir}/${compressed.digest.slice("sha256:".length)}`;
    await Deno.rename(`${tar}.gz`, target);
    await Deno.chmod(target, 0o644);
    return {
      digest: compressed.digest,
      size: compressed.size,
      diffId: uncompressed.digest,
      uncompressedSize: uncompressed.size,
    };
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}
