/**
 * Builds the ankra-cloud-ccm image for linux/amd64 and linux/arm64 without a container engine, as an OCI image
 * layout directory (default `dist/image/`) holding one image index tagged with the release version:
 *
 *     bash scripts/build.sh && deno run -A scripts/image/build_image.ts [--dist=dist] [--out=DIR] [--json]
 *
 * Each platform's image has three layers, built from the release tarball's contents:
 * 1. the Debian base (`debian_base.ts`): glibc, libgcc, the CA bundle, passwd/group, os-release;
 * 2. the Deno runtime (changes with the Deno version only);
 * 3. the controller bundle and its empty DENO_DIR (changes with every release).
 *
 * The runtime must be the pinned one (scripts/deno_runtime.pins: the SHA-256 of each platform's `deno`), or the build
 * stops. Beside the layout it writes the image's SBOM (`image_sbom.ts`; SPDX 2.3 JSON).
 *
 * Everything is deterministic: layers are GNU tar archives sorted by name with one mtime (SOURCE_DATE_EPOCH: the
 * environment's, else the last commit's time, else 2024-01-01) and 0:0 owners (65532 for /home/nonroot), gzip'd
 * with `gzip -n` (`layer_tar.ts`); JSON documents have sorted keys. Two builds from the same sources and the same
 * Debian packages give the same index digest. Push it with
 * `skopeo copy --all --preserve-digests oci:dist/image:<version> docker://<registry>/…`.
 *
 * @module
 */
import { VERSION } from "../../lib/version.ts";
import {
  BUNDLE_PATH,
  DENO_DIR,
  DENO_PATH,
  ENTRYPOINT,
  ENV,
  EXPOSED_PORT,
  imageLabels,
  rfc3339,
  USER,
} from "./ccm_image.ts";
import {
  BASE_OWNERS,
  buildDebianBase,
  type DebianArchitecture,
  type DebianPackage,
  packageList,
} from "./debian_base.ts";
import { type LayerBlob, type OwnerOverrides, writeGzipLayer } from "./layer_tar.ts";
import { runTool } from "./run_tool.ts";
import { type PlatformContents, platformContents, writeImageSbom } from "./image_sbom.ts";
import {
  ANNOTATION_REF_NAME,
  blobDirectory,
  createLayout,
  type Descriptor,
  MEDIA_TYPE_CONFIG,
  MEDIA_TYPE_INDEX,
  MEDIA_TYPE_LAYER_GZIP,
  MEDIA_TYPE_MANIFEST,
  type Platform,
  writeJsonBlob,
  writeLayoutIndex,
} from "./oci_layout.ts";

const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");

/** The platforms built, in the index's order. */
export const PLATFORMS: readonly { architecture: DebianArchitecture; variant?: string }[] = [
  { architecture: "amd64" },
  { architecture: "arm64", variant: "v8" },
];

/** Where a build reads and writes. */
export interface BuildImageOptions {
  /** Directory holding the release tarballs (scripts/build.sh's output). */
  dist: string;
  /** The OCI layout to write (replaced). */
  out: string;
  /** Cache of downloaded Debian packages. */
  debianCache: string;
}

/** One platform's image in a build. */
export interface PlatformImage {
  /** `amd64` or `arm64`. */
  architecture: string;
  /** The platform manifest. */
  manifest: Descriptor;
  /** The image configuration. */
  config: Descriptor;
  /** Layers, bottom first. */
  layers: LayerBlob[];
  /** Compressed size: manifest, config and layers, bytes (what a pull transfers). */
  compressedSize: number;
  /** Uncompressed size of the layers, bytes (what the unpacked root file system holds, roughly). */
  uncompressedSize: number;
  /** The Debian packages of the base. */
  debianPackages: DebianPackage[];
}

/** The result of a build. */
export interface ImageBuild {
  /** The layout directory. */
  layout: string;
  /** The tag (`org.opencontainers.image.ref.name`) of the index in the layout: the release version. */
  tag: string;
  /** The image index: the digest a registry shows for the tag. */
  index: Descriptor;
  /** Per platform. */
  platforms: PlatformImage[];
  /** SOURCE_DATE_EPOCH used. */
  sourceDateEpoch: number;
  /** The SBOM written beside the layout. */
  sbom: string;
}

async function output(command: string, args: string[], cwd = ROOT): Promise<string | undefined> {
  try {
    const result = await new Deno.Command(command, { args, cwd, stdout: "piped", stderr: "null" }).output();
    return result.success ? new TextDecoder().decode(result.stdout).trim() : undefined;
  } catch {
    return undefined;
  }
}

/** SOURCE_DATE_EPOCH from the environment, else the last commit's time, else 2024-01-01 (as scripts/build.sh). */
export async function sourceDateEpoch(): Promise<number> {
  const fromEnv = Deno.env.get("SOURCE_DATE_EPOCH");
  const text = fromEnv ?? await output("git", ["log", "-1", "--format=%ct"]) ?? "1704067200";
  const seconds = Number(text);
  if (!Number.isInteger(seconds) || seconds < 0) {
    throw new Error(`SOURCE_DATE_EPOCH is not a number of seconds: ${text}`);
  }
  return seconds;
}

/** The tree of one layer: `files` maps image paths to [source or undefined for a directory, mode]. */
async function stageTree(dir: string, files: [path: string, source: string | undefined, mode: number][]) {
  for (const [path, source] of files) {
    const target = `${dir}${path}`;
    if (source === undefined) {
      await Deno.mkdir(target, { recursive: true });
    } else {
      await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), { recursive: true });
      await Deno.copyFile(source, target);
    }
  }
  await runTool("find", [dir, "-mindepth", "1", "-type", "d", "-exec", "chmod", "0755", "{}", "+"]);
  for (const [path, , mode] of files) await Deno.chmod(`${dir}${path}`, mode);
}

/** Prepared trees of one platform, before their layers are written. */
interface PreparedPlatform {
  platform: Platform;
  debianPackages: DebianPackage[];
  denoVersion: string;
  trees: { dir: string; owners?: OwnerOverrides; createdBy: string }[];
  /** The checked runtime, the bundle and the base, for the SBOM. */
  contents: PlatformContents;
}

async function preparePlatform(
  architecture: DebianArchitecture,
  variant: string | undefined,
  work: string,
  options: BuildImageOptions,
): Promise<PreparedPlatform> {
  const name = `ankra-cloud-ccm-${VERSION}-linux-${architecture}`;
  const tarball = `${options.dist}/${name}.tar.gz`;
  try {
    await Deno.stat(tarball);
  } catch {
    throw new Error(`${tarball} is missing: build the release first with \`bash scripts/build.sh\``);
  }
  const release = `${work}/release-${architecture}`;
  await Deno.mkdir(release, { recursive: true });
  await runTool("tar", ["-xzf", tarball, "-C", release]);
  const lib = `${release}/${name}/lib/ankra-cloud-ccm`;
  const launcher = await Deno.readTextFile(`${release}/${name}/bin/ankra-cloud-ccm`);
  const denoVersion = launcher.match(/Deno runtime \(([^)]+)\)/)?.[1];
  if (!denoVersion) throw new Error(`the launcher in ${tarball} does not name its Deno version: rebuild the release`);

  const base = `${work}/base-${architecture}`;
  await Deno.mkdir(base, { recursive: true });
  const debianPackages = await buildDebianBase(architecture, base, {
    cacheDir: options.debianCache,
    workDir: `${work}/debs-${architecture}`,
  });
  // The runtime must be the pinned one; what the SBOM needs is read while the release is unpacked.
  const contents = await platformContents({ lib, base, imagePath: DENO_PATH }, architecture);
  const runtime = `${work}/runtime-${architecture}`;
  await stageTree(runtime, [[DENO_PATH, `${lib}/deno`, 0o755]]);
  const app = `${work}/app-${architecture}`;
  await stageTree(app, [[BUNDLE_PATH, `${lib}/ankra-cloud-ccm.js`, 0o644], [DENO_DIR, undefined, 0o555]]);
  return {
    platform: { architecture, os: "linux", ...(variant ? { variant } : {}) },
    debianPackages,
    denoVersion,
    contents,
    trees: [
      { dir: base, owners: BASE_OWNERS, createdBy: `debian base: ${packageList(debianPackages)}` },
      { dir: runtime, createdBy: `deno ${denoVersion} runtime (npm)` },
      { dir: app, createdBy: `ankra-cloud-ccm ${VERSION} bundle` },
    ],
  };
}

/** Where the sources of a build stand: the commit and its time. */
export interface SourceFacts {
  /** Git commit of the sources, or `unknown`. */
  revision: string;
  /** SOURCE_DATE_EPOCH, seconds. */
  sourceDateEpoch: number;
}

/** What one platform's image configuration is made of. */
export interface ImageConfigParts {
  /** The platform. */
  platform: Platform;
  /** Diff IDs of the layers, bottom first, each with the history line that made it. */
  layers: { diffId: string; createdBy: string }[];
  /** `name=version …` of the base's Debian packages. */
  debianPackages: string;
  /** Version of the Deno runtime. */
  denoVersion: string;
}

/** The OCI image configuration of one platform: {@linkcode VERSION}'s labels, the entrypoint, env, user and port. */
export function imageConfig(parts: ImageConfigParts, facts: SourceFacts): Record<string, unknown> {
  const created = rfc3339(facts.sourceDateEpoch);
  return {
    created,
    ...parts.platform,
    config: {
      User: USER,
      ExposedPorts: { [EXPOSED_PORT]: {} },
      Env: [...ENV],
      Entrypoint: [...ENTRYPOINT],
      WorkingDir: "/",
      Labels: imageLabels({
        version: VERSION,
        revision: facts.revision,
        sourceDateEpoch: facts.sourceDateEpoch,
        debianPackages: parts.debianPackages,
        denoVersion: parts.denoVersion,
      }),
    },
    rootfs: { type: "layers", diff_ids: parts.layers.map((layer) => layer.diffId) },
    history: parts.layers.map((layer) => ({ created, created_by: layer.createdBy })),
  };
}

/**
 * Writes the image index of the platform `manifests` into `layout` and tags it {@linkcode VERSION} in the layout's
 * `index.json` (what `skopeo copy oci:<layout>:<version>` and the chart's default image tag resolve).
 */
export async function writeImageIndex(
  layout: string,
  manifests: Descriptor[],
  facts: SourceFacts,
): Promise<Descriptor> {
  const index = await writeJsonBlob(layout, MEDIA_TYPE_INDEX, {
    schemaVersion: 2,
    mediaType: MEDIA_TYPE_INDEX,
    manifests,
    annotations: {
      "org.opencontainers.image.created": rfc3339(facts.sourceDateEpoch),
      "org.opencontainers.image.revision": facts.revision,
      "org.opencontainers.image.source": "https://github.com/ankraio/ankra-cloud-ccm",
      "org.opencontainers.image.title": "ankra-cloud-ccm",
      "org.opencontainers.image.version": VERSION,
    },
  });
  await writeLayoutIndex(layout, [{ ...index, annotations: { [ANNOTATION_REF_NAME]: VERSION } }]);
  return index;
}

async function writePlatform(prepared: PreparedPlatform, layout: string, facts: SourceFacts): Promise<PlatformImage> {
  const layers: LayerBlob[] = [];
  for (const tree of prepared.trees) {
    layers.push(
      await writeGzipLayer(tree.dir, blobDirectory(layout), { mtime: facts.sourceDateEpoch, owners: tree.owners }),
    );
  }
  const config = await writeJsonBlob(
    layout,
    MEDIA_TYPE_CONFIG,
    imageConfig({
      platform: prepared.platform,
      layers: layers.map((layer, i) => ({ diffId: layer.diffId, createdBy: prepared.trees[i].createdBy })),
      debianPackages: packageList(prepared.debianPackages),
      denoVersion: prepared.denoVersion,
    }, facts),
  );
  const manifest = await writeJsonBlob(layout, MEDIA_TYPE_MANIFEST, {
    schemaVersion: 2,
    mediaType: MEDIA_TYPE_MANIFEST,
    config,
    layers: layers.map((layer) => ({ mediaType: MEDIA_TYPE_LAYER_GZIP, digest: layer.digest, size: layer.size })),
  });
  return {
    architecture: prepared.platform.architecture,
    manifest: { ...manifest, platform: prepared.platform },
    config,
    layers,
    compressedSize: manifest.size + config.size + layers.reduce((sum, layer) => sum + layer.size, 0),
    uncompressedSize: layers.reduce((sum, layer) => sum + layer.uncompressedSize, 0),
    debianPackages: prepared.debianPackages,
  };
}

/** Builds the image index and its platform images into `options.out`. */
export async function buildImage(options: BuildImageOptions): Promise<ImageBuild> {
  const epoch = await sourceDateEpoch();
  const revision = await output("git", ["rev-parse", "HEAD"]) ?? "unknown";
  const work = await Deno.makeTempDir({ prefix: "ccm-image-" });
  try {
    await createLayout(options.out);
    // Trees one platform after the other (apt must not run twice at once); layers of both platforms in parallel.
    const prepared: PreparedPlatform[] = [];
    for (const { architecture, variant } of PLATFORMS) {
      prepared.push(await preparePlatform(architecture, variant, work, options));
    }
    const platforms = await Promise.all(
      prepared.map((p) => writePlatform(p, options.out, { revision, sourceDateEpoch: epoch })),
    );
    const index = await writeImageIndex(options.out, platforms.map((p) => p.manifest), {
      revision,
      sourceDateEpoch: epoch,
    });
    const sbom = await writeImageSbom(options.out, {
      sourceDateEpoch: epoch,
      indexDigest: index.digest,
      platforms: platforms.map((p, i) => ({
        architecture: p.architecture,
        manifestDigest: p.manifest.digest,
        debianPackages: p.debianPackages,
        contents: prepared[i].contents,
      })),
    });
    return { layout: options.out, tag: VERSION, index, platforms, sourceDateEpoch: epoch, sbom };
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}

function mebibytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function flag(args: string[], name: string): string | undefined {
  const prefix = `--${name}=`;
  return args.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

if (import.meta.main) {
  const args = Deno.args;
  const unknown = args.filter((a) => !/^--(dist|out|debian-cache)=/.test(a) && a !== "--json");
  if (unknown.length > 0) {
    console.error(`build_image: unknown argument ${unknown[0]} (use --dist=DIR --out=DIR --debian-cache=DIR --json)`);
    Deno.exit(2);
  }
  const dist = flag(args, "dist") ?? `${ROOT}/dist`;
  const home = Deno.env.get("XDG_CACHE_HOME") ?? (Deno.env.get("HOME") ? `${Deno.env.get("HOME")}/.cache` : "/tmp");
  const started = performance.now();
  const build = await buildImage({
    dist,
    out: flag(args, "out") ?? `${dist}/image`,
    debianCache: flag(args, "debian-cache") ?? `${home}/ankra-cloud-ccm/debian-packages`,
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (args.includes("--json")) {
    console.log(JSON.stringify({ ...build, seconds: Number(seconds) }, null, 2));
  } else {
    console.log(`image: ${build.layout} (OCI layout, tag ${build.tag}) in ${seconds} s`);
    console.log(`image: index ${build.index.digest}`);
    console.log(`image: SBOM ${build.sbom}`);
    for (const p of build.platforms) {
      console.log(
        `image: linux/${p.architecture} ${p.manifest.digest}: ${mebibytes(p.compressedSize)} compressed, ` +
          `${mebibytes(p.uncompressedSize)} uncompressed; ${packageList(p.debianPackages)}`,
      );
    }
  }
}
