/**
 * Reproducible image layers: a directory tree written as a ustar archive with sorted entries, one fixed mtime,
 * numeric owners chosen per entry (0:0 unless said otherwise), no user or group names, then compressed with
 * `gzip -n` (no name, no time). The same tree gives the same bytes, so the same digests.
 *
 * @module
 */
import { createHash } from "node:crypto";

/** One entry of a layer. Paths are relative, without a leading `/` or `./`, and never end in `/`. */
export interface LayerEntry {
  /** Path inside the image, e.g. `etc/passwd`. */
  path: string;
  /** What the entry is. */
  type: "directory" | "file" | "symlink";
  /** Permission bits, including setuid/setgid/sticky (e.g. `0o1777` for `/tmp`). */
  mode: number;
  /** Numeric owner. */
  uid: number;
  /** Numeric group. */
  gid: number;
  /** For a file: where its bytes are read from. */
  source?: string;
  /** For a symlink: its target, as written. */
  linkTarget?: string;
}

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

/** Owners of paths that are not root's, e.g. `{ "home/nonroot": [65532, 65532] }`. */
export type OwnerOverrides = Record<string, [uid: number, gid: number]>;

/**
 * Walks `dir` and returns every entry below it, sorted by path (so parents come before their contents), with modes
 * from the file system and owners 0:0 unless `owners` names the path.
 *
 * @throws when the tree holds something a layer cannot carry (a device, a socket, a FIFO).
 */
export async function collectEntries(dir: string, options: { owners?: OwnerOverrides } = {}): Promise<LayerEntry[]> {
  const entries: LayerEntry[] = [];
  async function walk(relative: string): Promise<void> {
    const absolute = relative ? `${dir}/${relative}` : dir;
    const names: string[] = [];
    for await (const child of Deno.readDir(absolute)) names.push(child.name);
    names.sort();
    for (const name of names) {
      const path = relative ? `${relative}/${name}` : name;
      const info = await Deno.lstat(`${dir}/${path}`);
      const [uid, gid] = options.owners?.[path] ?? [0, 0];
      const mode = (info.mode ?? 0) & 0o7777;
      if (info.isSymlink) {
        entries.push({
          path,
          type: "symlink",
          mode: 0o777,
          uid,
          gid,
          linkTarget: await Deno.readLink(`${dir}/${path}`),
        });
      } else if (info.isDirectory) {
        entries.push({ path, type: "directory", mode, uid, gid });
        await walk(path);
      } else if (info.isFile) {
        entries.push({ path, type: "file", mode, uid, gid, source: `${dir}/${path}` });
      } else {
        throw new Error(`${dir}/${path} is neither a file, a directory nor a symlink: remove it from the layer`);
      }
    }
  }
  await walk("");
  return entries.sort((a, b) => compareBytes(a.path, b.path));
}

function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const BLOCK = 512;
const encoder = new TextEncoder();

/** Writes `value` as a NUL-terminated octal number of `width` bytes (ustar numeric field). */
function octal(header: Uint8Array, offset: number, width: number, value: number): void {
  const text = value.toString(8).padStart(width - 1, "0");
  if (text.length > width - 1) throw new Error(`tar field overflow: ${value} does not fit ${width - 1} octal digits`);
  header.set(encoder.encode(text), offset);
  header[offset + width - 1] = 0;
}

function text(header: Uint8Array, offset: number, width: number, value: string): void {
  const bytes = encoder.encode(value);
  if (bytes.length > width) throw new Error(`tar field overflow: "${value}" is longer than ${width} bytes`);
  header.set(bytes, offset);
}

/** Splits a path into ustar's prefix (≤ 155 bytes) and name (≤ 100 bytes) at a `/`. */
function splitPath(path: string): [prefix: string, name: string] {
  if (encoder.encode(path).length <= 100) return ["", path];
  for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (encoder.encode(prefix).length <= 155 && encoder.encode(name).length <= 100) return [prefix, name];
  }
  throw new Error(`path too long for a ustar layer: ${path}`);
}

/** The 512-byte ustar header of `entry`, whose file holds `size` bytes. */
export function ustarHeader(entry: LayerEntry, size: number, mtime: number): Uint8Array {
  const header = new Uint8Array(BLOCK);
  const [prefix, name] = splitPath(entry.type === "directory" ? `${entry.path}/` : entry.path);
  text(header, 0, 100, name);
  octal(header, 100, 8, entry.mode);
  octal(header, 108, 8, entry.uid);
  octal(header, 116, 8, entry.gid);
  octal(header, 124, 12, entry.type === "file" ? size : 0);
  octal(header, 136, 12, mtime);
  header.fill(0x20, 148, 156); // the checksum is computed with its own field as spaces
  header[156] = entry.type === "file" ? 0x30 : entry.type === "directory" ? 0x35 : 0x32;
  if (entry.type === "symlink") text(header, 157, 100, entry.linkTarget ?? "");
  text(header, 257, 6, "ustar");
  text(header, 263, 2, "00");
  octal(header, 329, 8, 0); // device major
  octal(header, 337, 8, 0); // device minor
  text(header, 345, 155, prefix);
  let sum = 0;
  for (const byte of header) sum += byte;
  const checksum = sum.toString(8).padStart(6, "0");
  header.set(encoder.encode(checksum), 148);
  header[154] = 0;
  header[155] = 0x20;
  return header;
}

/**
 * Writes `entries` as a gzip'd ustar layer into `blobDir` (an OCI layout's `blobs/sha256`), named by its digest.
 * Every entry gets `mtime` (seconds since the epoch); compression is `gzip -n` at its default level.
 *
 * @throws when gzip is missing or fails, or an entry cannot be written.
 */
export async function writeGzipLayer(
  entries: LayerEntry[],
  blobDir: string,
  options: { mtime: number },
): Promise<LayerBlob> {
  const temporary = await Deno.makeTempFile({ dir: blobDir, prefix: ".layer-" });
  const gzip = new Deno.Command("gzip", { args: ["-n", "-c"], stdin: "piped", stdout: "piped", stderr: "piped" })
    .spawn();
  const compressedHash = createHash("sha256");
  let size = 0;
  const output = await Deno.open(temporary, { write: true, truncate: true });
  const drained = (async () => {
    for await (const chunk of gzip.stdout) {
      compressedHash.update(chunk);
      size += chunk.length;
      let written = 0;
      while (written < chunk.length) written += await output.write(chunk.subarray(written));
    }
  })();
  const tarHash = createHash("sha256");
  let uncompressedSize = 0;
  const writer = gzip.stdin.getWriter();
  const emit = async (bytes: Uint8Array) => {
    tarHash.update(bytes);
    uncompressedSize += bytes.length;
    await writer.write(bytes);
  };
  try {
    for (const entry of entries) {
      if (entry.type !== "file") {
        await emit(ustarHeader(entry, 0, options.mtime));
        continue;
      }
      if (!entry.source) throw new Error(`layer entry ${entry.path} is a file without a source`);
      const fileSize = (await Deno.stat(entry.source)).size;
      await emit(ustarHeader(entry, fileSize, options.mtime));
      let copied = 0;
      const file = await Deno.open(entry.source);
      try {
        const buffer = new Uint8Array(1 << 20);
        for (let n = await file.read(buffer); n !== null; n = await file.read(buffer)) {
          copied += n;
          await emit(buffer.slice(0, n));
        }
      } finally {
        file.close();
      }
      if (copied !== fileSize) throw new Error(`${entry.source} changed while it was written into a layer`);
      const padding = (BLOCK - (fileSize % BLOCK)) % BLOCK;
      if (padding > 0) await emit(new Uint8Array(padding));
    }
    await emit(new Uint8Array(BLOCK * 2)); // the end-of-archive marker
    await writer.close();
    await drained;
  } finally {
    output.close();
  }
  const status = await gzip.status;
  const stderr = new TextDecoder().decode(await new Response(gzip.stderr).arrayBuffer());
  if (!status.success) {
    await Deno.remove(temporary).catch(() => {});
    throw new Error(`gzip -n failed while writing a layer: ${stderr.trim()} (install gzip)`);
  }
  const hex = compressedHash.digest("hex");
  await Deno.rename(temporary, `${blobDir}/${hex}`);
  await Deno.chmod(`${blobDir}/${hex}`, 0o644);
  return { digest: `sha256:${hex}`, size, diffId: `sha256:${tarHash.digest("hex")}`, uncompressedSize };
}
