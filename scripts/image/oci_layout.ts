/**
 * An OCI image layout directory (image-spec `image-layout.md`): `oci-layout`, `index.json` and content-addressed
 * blobs under `blobs/sha256/`. JSON documents are written with their keys sorted at every level and no whitespace,
 * so the same content always has the same digest.
 *
 * @module
 */
import { createHash } from "node:crypto";

/** Media type of an OCI image index. */
export const MEDIA_TYPE_INDEX = "application/vnd.oci.image.index.v1+json";
/** Media type of an OCI image manifest. */
export const MEDIA_TYPE_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
/** Media type of an OCI image configuration. */
export const MEDIA_TYPE_CONFIG = "application/vnd.oci.image.config.v1+json";
/** Media type of a gzip'd tar layer. */
export const MEDIA_TYPE_LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip";
/** The annotation that names a tag in a layout's `index.json`. */
export const ANNOTATION_REF_NAME = "org.opencontainers.image.ref.name";

/** A content descriptor: what a manifest or index points at. */
export interface Descriptor {
  /** Media type of the referenced content. */
  mediaType: string;
  /** `sha256:…` of the content. */
  digest: string;
  /** Size of the content in bytes. */
  size: number;
  /** For manifests in an index: the platform they run on. */
  platform?: Platform;
  /** Annotations, e.g. {@linkcode ANNOTATION_REF_NAME}. */
  annotations?: Record<string, string>;
}

/** A platform, as an image index names it. */
export interface Platform {
  /** `amd64` or `arm64`. */
  architecture: string;
  /** Always `linux` here. */
  os: string;
  /** `v8` for arm64. */
  variant?: string;
}

/** `value` as JSON with object keys sorted at every level and no insignificant whitespace. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const child = (value as Record<string, unknown>)[key];
      if (child !== undefined) sorted[key] = sortKeys(child);
    }
    return sorted;
  }
  return value;
}

/** `sha256:<hex>` of `bytes`. */
export function sha256Digest(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** The directory of a layout's sha256 blobs. */
export function blobDirectory(layout: string): string {
  return `${layout}/blobs/sha256`;
}

/** The file of a blob in a layout. */
export function blobPath(layout: string, digest: string): string {
  const [algorithm, hex] = digest.split(":");
  if (algorithm !== "sha256" || !/^[0-9a-f]{64}$/.test(hex ?? "")) throw new Error(`not a sha256 digest: ${digest}`);
  return `${blobDirectory(layout)}/${hex}`;
}

/** Creates an empty layout at `layout` (removing whatever was there). */
export async function createLayout(layout: string): Promise<void> {
  await Deno.remove(layout, { recursive: true }).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
  await Deno.mkdir(blobDirectory(layout), { recursive: true });
  await Deno.writeTextFile(`${layout}/oci-layout`, canonicalJson({ imageLayoutVersion: "1.0.0" }));
}

/** Writes `document` as a canonical JSON blob into `layout` and returns its descriptor. */
export async function writeJsonBlob(layout: string, mediaType: string, document: unknown): Promise<Descriptor> {
  const bytes = new TextEncoder().encode(canonicalJson(document));
  const digest = sha256Digest(bytes);
  await Deno.writeFile(blobPath(layout, digest), bytes, { mode: 0o644 });
  return { mediaType, digest, size: bytes.length };
}

/** Writes the layout's `index.json`, listing `manifests` (each usually with a {@linkcode ANNOTATION_REF_NAME}). */
export async function writeLayoutIndex(layout: string, manifests: Descriptor[]): Promise<void> {
  await Deno.writeTextFile(
    `${layout}/index.json`,
    canonicalJson({ schemaVersion: 2, mediaType: MEDIA_TYPE_INDEX, manifests }),
  );
}

/** Reads and parses a JSON blob of a layout, checking its digest. */
export async function readJsonBlob<T>(layout: string, digest: string): Promise<T> {
  const bytes = await Deno.readFile(blobPath(layout, digest));
  const actual = sha256Digest(bytes);
  if (actual !== digest) throw new Error(`blob ${digest} in ${layout} has digest ${actual}: the layout is corrupt`);
  return JSON.parse(new TextDecoder().decode(bytes)) as T;
}

/** The descriptor that the layout's `index.json` names `ref` (its `org.opencontainers.image.ref.name`). */
export async function findReference(layout: string, ref: string): Promise<Descriptor> {
  const index = JSON.parse(await Deno.readTextFile(`${layout}/index.json`)) as { manifests: Descriptor[] };
  const found = index.manifests.find((m) => m.annotations?.[ANNOTATION_REF_NAME] === ref);
  if (!found) {
    const names = index.manifests.map((m) => m.annotations?.[ANNOTATION_REF_NAME] ?? "(unnamed)").join(", ");
    throw new Error(`${layout}/index.json has no reference ${ref} (it has: ${names})`);
  }
  return found;
}
