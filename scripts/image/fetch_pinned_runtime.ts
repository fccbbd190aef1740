/**
 * The pinned Deno runtime of one platform, fetched from an npm registry and checked, for the `Containerfile` (which
 * has no npm): the platform package of scripts/deno_runtime.pins (`@deno/linux-x64-glibc` for amd64,
 * `@deno/linux-arm64-glibc` for arm64) is downloaded, its .tgz must have the pinned npm integrity before anything in
 * it is read, and its `package/deno` the pinned SHA-256 before it is written — the same checks as scripts/build.sh
 * (so the image's runtime is the release tarballs' bytes). Nothing of the package runs; only the binary is taken.
 *
 *     deno run --allow-net=registry.npmjs.org --allow-read=scripts/deno_runtime.pins --allow-write=OUT \
 *       scripts/image/fetch_pinned_runtime.ts --architecture=amd64|arm64 --out=OUT \
 *       [--registry=https://registry.npmjs.org] [--pins=scripts/deno_runtime.pins]
 *
 * It writes `OUT/deno` (mode 0755) and prints its path; on a mismatch it writes nothing, names both digests and exits
 * 1 (2 for a wrong command line).
 *
 * @module
 */
import { PINS_PATH, readRuntimePins, runtimePinFor } from "../deno_runtime_pins.ts";
import { tarEntry } from "./tar_entry.ts";

/** The npm registry the `Containerfile` fetches from unless `NPM_REGISTRY` names another (a mirror). */
export const DEFAULT_REGISTRY = "https://registry.npmjs.org";

/** Where and what to fetch. */
export interface FetchPinnedRuntimeOptions {
  /** Directory to write `deno` into (created if missing). */
  out: string;
  /** npm registry base URL; default {@linkcode DEFAULT_REGISTRY}. */
  registry?: string;
  /** The pins file; default scripts/deno_runtime.pins. */
  pinsPath?: string;
}

/** The runtime written. */
export interface FetchedRuntime {
  /** Path of the binary. */
  path: string;
  /** npm package it came from, e.g. `@deno/linux-x64-glibc`. */
  name: string;
  /** Its version. */
  version: string;
  /** SHA-256 (hex) of the binary: the pinned one. */
  sha256: string;
}

/**
 * The URL of the .tgz of `name@version` on `registry`, in the layout every npm registry serves
 * (`<registry>/@scope/name/-/name-<version>.tgz`).
 */
export function npmTarballUrl(registry: string, name: string, version: string): string {
  const base = name.slice(name.lastIndexOf("/") + 1);
  return `${registry.replace(/\/+$/, "")}/${name}/-/${base}-${version}.tgz`;
}

async function digest(algorithm: "SHA-256" | "SHA-512", bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest(algorithm, bytes));
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function sri(bytes: Uint8Array): string {
  return `sha512-${btoa(String.fromCharCode(...bytes))}`;
}

async function gunzip(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * Fetches the runtime pinned for `architecture` (`amd64` or `arm64`) into `options.out`.
 *
 * @throws naming the URL, the package and both digests, when the registry's .tgz or its binary is not the pinned one
 * (nothing is written then), or when the registry does not serve it.
 */
export async function fetchPinnedRuntime(
  architecture: string,
  options: FetchPinnedRuntimeOptions,
): Promise<FetchedRuntime> {
  const pinsPath = options.pinsPath ?? PINS_PATH;
  const pin = runtimePinFor(readRuntimePins(pinsPath), architecture);
  const url = npmTarballUrl(options.registry ?? DEFAULT_REGISTRY, pin.name, pin.version);
  const response = await fetch(url);
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(
      `GET ${url} answered HTTP ${response.status}: the registry does not serve ${pin.name} ${pin.version}; ` +
        "give NPM_REGISTRY an npm registry (or mirror) that does",
    );
  }
  const tgz = new Uint8Array(await response.arrayBuffer());
  const integrity = sri(await digest("SHA-512", tgz));
  if (integrity !== pin.integrity) {
    throw new Error(
      `${url} (${pin.name} ${pin.version}) has npm integrity ${integrity}, but ${pinsPath} pins ${pin.integrity}: ` +
        "these are not the pinned runtime's bytes (the registry or a mirror served other ones); nothing was written",
    );
  }
  const binary = tarEntry(await gunzip(tgz), "package/deno");
  if (!binary) throw new Error(`${url} (${pin.name} ${pin.version}) has no package/deno; nothing was written`);
  const sha256 = hex(await digest("SHA-256", binary));
  if (sha256 !== pin.binarySha256) {
    throw new Error(
      `package/deno of ${url} (${pin.name}) has SHA-256 ${sha256}, but ${pinsPath} pins ${pin.binarySha256}: ` +
        "this is not the pinned Deno binary; nothing was written",
    );
  }
  await Deno.mkdir(options.out, { recursive: true });
  const path = `${options.out.replace(/\/+$/, "")}/deno`;
  await Deno.writeFile(path, binary, { mode: 0o755 });
  await Deno.chmod(path, 0o755);
  return { path, name: pin.name, version: pin.version, sha256 };
}

function flag(args: readonly string[], name: string): string | undefined {
  const prefix = `--${name}=`;
  return args.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

if (import.meta.main) {
  const args = Deno.args;
  const unknown = args.find((a) => !/^--(architecture|out|registry|pins)=/.test(a));
  const architecture = flag(args, "architecture");
  const out = flag(args, "out");
  if (unknown !== undefined || !architecture || !out) {
    const problem = unknown !== undefined
      ? `unknown argument ${unknown}`
      : architecture === ""
      ? "--architecture is empty (the Containerfile passes TARGETARCH: build with BuildKit, buildah or podman)"
      : "--architecture and --out are required";
    console.error(
      `fetch_pinned_runtime: ${problem} (use --architecture=amd64|arm64 --out=DIR [--registry=URL] [--pins=FILE])`,
    );
    Deno.exit(2);
  }
  try {
    const runtime = await fetchPinnedRuntime(architecture, {
      out,
      registry: flag(args, "registry") || undefined,
      pinsPath: flag(args, "pins"),
    });
    console.log(
      `fetch_pinned_runtime: ${runtime.path} (${runtime.name} ${runtime.version}, SHA-256 ${runtime.sha256})`,
    );
  } catch (cause) {
    console.error(`fetch_pinned_runtime: ${cause instanceof Error ? cause.message : cause}`);
    Deno.exit(1);
  }
}
