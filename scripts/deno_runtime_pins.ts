/**
 * The pinned Deno runtime, `scripts/deno_runtime.pins`, read and validated: each npm package's version, its npm
 * integrity (the SRI `sha512-…` of its .tgz) and, for the two platform packages, the SHA-256 of the `deno` binary in
 * it. scripts/deno_runtime.sh checks installs and release builds against the same file; the image builder, the
 * Containerfile's runtime step (scripts/image/fetch_pinned_runtime.ts) and the SBOM read it here.
 *
 * @module
 */
import * as v from "valibot";
import { fileDigest } from "./file_digests.ts";

/** The pins file. */
export const PINS_PATH = new URL("./deno_runtime.pins", import.meta.url).pathname;

const PinLine = v.strictObject({
  name: v.pipe(v.string(), v.regex(/^(@[a-z0-9-]+\/)?[a-z0-9][a-z0-9._-]*$/)),
  version: v.pipe(v.string(), v.regex(/^\d+\.\d+\.\d+$/)),
  architecture: v.picklist(["amd64", "arm64", "-"]),
  integrity: v.pipe(v.string(), v.regex(/^sha512-[A-Za-z0-9+/]{86}==$/)),
  sha256: v.pipe(v.string(), v.regex(/^([0-9a-f]{64}|-)$/)),
});

/** One pinned npm package. */
export interface RuntimePin {
  /** npm package name, e.g. `@deno/linux-x64-glibc`. */
  name: string;
  /** Its version, the Deno version. */
  version: string;
  /** `amd64` or `arm64` for a platform package; absent for `deno` itself. */
  architecture?: "amd64" | "arm64";
  /** The npm integrity of its .tgz, `sha512-<base64>`. */
  integrity: string;
  /** SHA-256 (hex) of `package/deno`, for a platform package. */
  binarySha256?: string;
}

/**
 * Parses the text of a pins file (`#` comments; one `name version architecture integrity sha256` line per package).
 *
 * @throws naming the line, when a line has the wrong shape, a package is named twice, or versions differ.
 */
export function parseRuntimePins(text: string): RuntimePin[] {
  const pins: RuntimePin[] = [];
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "" || line.startsWith("#")) return;
    const [name, version, architecture, integrity, sha256, ...rest] = line.trim().split(/\s+/);
    const parsed = v.safeParse(PinLine, { name, version, architecture, integrity, sha256 });
    if (!parsed.success || rest.length > 0) {
      throw new Error(
        `scripts/deno_runtime.pins line ${index + 1} is not "package version architecture integrity sha256": ${line}`,
      );
    }
    const pin = parsed.output;
    if (pins.some((p) => p.name === pin.name)) throw new Error(`scripts/deno_runtime.pins names ${pin.name} twice`);
    pins.push({
      name: pin.name,
      version: pin.version,
      integrity: pin.integrity,
      ...(pin.architecture !== "-" ? { architecture: pin.architecture } : {}),
      ...(pin.sha256 !== "-" ? { binarySha256: pin.sha256 } : {}),
    });
  });
  const versions = new Set(pins.map((p) => p.version));
  if (versions.size !== 1) throw new Error(`scripts/deno_runtime.pins mixes versions: ${[...versions].join(", ")}`);
  return pins;
}

/** The pins of this checkout. */
export function readRuntimePins(path = PINS_PATH): RuntimePin[] {
  return parseRuntimePins(Deno.readTextFileSync(path));
}

/** The platform package pinned for `architecture`; throws when there is none or it has no binary checksum. */
export function runtimePinFor(
  pins: readonly RuntimePin[],
  architecture: string,
): RuntimePin & { binarySha256: string } {
  const pin = pins.find((p) => p.architecture === architecture);
  if (!pin?.binarySha256) throw new Error(`scripts/deno_runtime.pins pins no Deno binary for ${architecture}`);
  return pin as RuntimePin & { binarySha256: string };
}

/** The hex digest inside an SRI integrity string (`sha512-<base64>` → 128 hex digits). */
export function integrityHex(integrity: string): string {
  const base64 = integrity.replace(/^sha512-/, "");
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Checks that the Deno binary at `path` is the one pinned for `architecture`.
 *
 * @throws naming the file, both digests and what to do, when it is not.
 */
export async function checkRuntimeBinary(path: string, architecture: string): Promise<void> {
  const pin = runtimePinFor(readRuntimePins(), architecture);
  const actual = await fileDigest(path, "sha256");
  if (actual !== pin.binarySha256) {
    throw new Error(
      `${path} has SHA-256 ${actual}, but scripts/deno_runtime.pins pins ${pin.binarySha256} for ${pin.name}: ` +
        "this is not the pinned Deno runtime; rebuild the release with `bash scripts/build.sh`",
    );
  }
}
