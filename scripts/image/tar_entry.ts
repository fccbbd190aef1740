/**
 * One file out of an uncompressed tar archive held in memory: enough of POSIX ustar, pax (`path=` records) and GNU
 * long names to find an entry by its path, as `npm pack` writes packages. Links, devices and directories are never
 * returned.
 *
 * @module
 */

const BLOCK = 512;
const decoder = new TextDecoder();

function field(header: Uint8Array, offset: number, length: number): string {
  const bytes = header.subarray(offset, offset + length);
  const end = bytes.indexOf(0);
  return decoder.decode(end === -1 ? bytes : bytes.subarray(0, end));
}

function octal(header: Uint8Array, offset: number, length: number, what: string): number {
  const text = field(header, offset, length).trim();
  if (!/^[0-7]+$/.test(text)) throw new Error(`the tar archive has an entry whose ${what} is not octal: "${text}"`);
  return parseInt(text, 8);
}

/** The `path` of a pax extended header's records (`<length> path=<value>\n`), if it has one. */
function paxPath(data: Uint8Array): string | undefined {
  for (const record of decoder.decode(data).split("\n")) {
    const match = /^\d+ path=(.*)$/s.exec(record);
    if (match) return match[1];
  }
  return undefined;
}

/**
 * The contents of the regular file at `path` (e.g. `package/deno`) in the tar archive `archive`, or undefined when
 * the archive has none; a leading `./` of entry names is ignored.
 *
 * @throws when the archive ends inside an entry or an entry's header is not a tar header.
 */
export function tarEntry<T extends ArrayBufferLike>(archive: Uint8Array<T>, path: string): Uint8Array<T> | undefined {
  let offset = 0;
  let longName: string | undefined;
  while (offset + BLOCK <= archive.length) {
    const header = archive.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) return undefined;
    const size = octal(header, 124, 12, "size");
    const type = String.fromCharCode(header[156] || 0x30);
    const start = offset + BLOCK;
    if (start + size > archive.length) throw new Error("the tar archive ends inside an entry: it is truncated");
    const data = archive.subarray(start, start + size);
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
    if (type === "x" || type === "L") {
      longName = type === "x" ? paxPath(data) ?? longName : field(data, 0, data.length);
      continue;
    }
    if (type === "g") continue;
    const prefix = field(header, 345, 155);
    const name = (longName ?? (prefix ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100)))
      .replace(/^\.\//, "");
    longName = undefined;
    if (name === path && (type === "0" || type === "7")) return data;
  }
  return undefined;
}
