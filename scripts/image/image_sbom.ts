/**
 * The image's SBOM (SPDX 2.3 JSON), `ankra-cloud-ccm-<version>-image.spdx.json` beside the OCI layout (with the
 * default `--out`, in dist/ beside SHA256SUMS): the index, each platform's image, its Debian packages as apt
 * downloaded them, the Deno runtime and the controller bundle, and deno.lock's npm packages (scripts/spdx_sbom.ts).
 * The runtime is checked against scripts/deno_runtime.pins on the way.
 *
 * @module
 */
import { VERSION } from "../../lib/version.ts";
import { checkRuntimeBinary, readRuntimePins, runtimePinFor } from "../deno_runtime_pins.ts";
import { fileDigest } from "../file_digests.ts";
import { lockedNpmPackages } from "../npm_lock.ts";
import { type DebianFacts, imageSbom, type ProgramFacts, type RuntimeBinaryFacts } from "../spdx_sbom.ts";

const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");

/** What one platform's release contributes, read while its files are unpacked. */
export interface PlatformContents {
  /** The runtime binary, as the image holds it. */
  binary: RuntimeBinaryFacts;
  /** The controller bundle. */
  program: ProgramFacts;
  /** `debian-<VERSION_ID>` of the base, for the Debian package URLs. */
  distro: string;
}

/** `debian-<VERSION_ID>` from an os-release text (the base's). */
export function debianDistro(osRelease: string): string {
  const id = osRelease.match(/^VERSION_ID="?([^"\n]+)"?$/m)?.[1];
  if (!id) throw new Error("the image base's /etc/os-release has no VERSION_ID: check the base-files package");
  return `debian-${id}`;
}

/**
 * Checks the runtime `<lib>/deno` of `architecture` against the pins and reads what the SBOM says of it, the bundle
 * `<lib>/ankra-cloud-ccm.js` and the base `<base>/etc/os-release`; `imagePath` is where the image puts the runtime.
 *
 * @throws when the runtime is not the pinned one.
 */
export async function platformContents(
  paths: { lib: string; base: string; imagePath: string },
  architecture: string,
): Promise<PlatformContents> {
  await checkRuntimeBinary(`${paths.lib}/deno`, architecture);
  return {
    binary: {
      path: paths.imagePath.replace(/^\//, ""),
      scope: `linux-${architecture}`,
      sha1: await fileDigest(`${paths.lib}/deno`, "sha1"),
      sha256: runtimePinFor(readRuntimePins(), architecture).binarySha256,
    },
    program: {
      name: "ankra-cloud-ccm",
      version: VERSION,
      bundleSha256: await fileDigest(`${paths.lib}/ankra-cloud-ccm.js`, "sha256"),
    },
    distro: debianDistro(await Deno.readTextFile(`${paths.base}/etc/os-release`)),
  };
}

/** The SBOM's path for the layout `out`: beside it. */
export function imageSbomPath(out: string): string {
  const parent = out.replace(/\/+$/, "").replace(/\/[^/]*$/, "") || ".";
  return `${parent}/ankra-cloud-ccm-${VERSION}-image.spdx.json`;
}

/** Writes the image's SBOM for the layout `out`; returns its path. */
export async function writeImageSbom(
  out: string,
  facts: {
    sourceDateEpoch: number;
    indexDigest: string;
    platforms: {
      architecture: string;
      manifestDigest: string;
      debianPackages: DebianFacts[];
      contents: PlatformContents;
    }[];
  },
): Promise<string> {
  const pins = readRuntimePins();
  const document = imageSbom({
    version: VERSION,
    sourceDateEpoch: facts.sourceDateEpoch,
    indexDigest: facts.indexDigest,
    platforms: facts.platforms.map((p) => ({
      architecture: p.architecture,
      manifestDigest: p.manifestDigest,
      debianPackages: p.debianPackages,
      runtime: runtimePinFor(pins, p.architecture),
      binary: p.contents.binary,
    })),
    program: facts.platforms[0].contents.program,
    distro: facts.platforms[0].contents.distro,
    lock: lockedNpmPackages(await Deno.readTextFile(`${ROOT}/deno.lock`)),
  });
  const path = imageSbomPath(out);
  await Deno.writeTextFile(path, JSON.stringify(document, null, 2) + "\n");
  return path;
}
