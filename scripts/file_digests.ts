/**
 * Digests of files, streamed (the runtime binary is about 95 MB): SHA-256 for the pins and the SBOM, SHA-1 because
 * SPDX 2.3 requires one for every file it lists.
 *
 * @module
 */
import { createHash } from "node:crypto";

/** The hex digest of the file at `path` with `algorithm` (`sha256` or `sha1`). */
export async function fileDigest(path: string, algorithm: "sha256" | "sha1"): Promise<string> {
  const hash = createHash(algorithm);
  using file = await Deno.open(path);
  for await (const chunk of file.readable) hash.update(chunk);
  return hash.digest("hex");
}
