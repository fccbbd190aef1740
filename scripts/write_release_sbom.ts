/**
 * Writes the SBOM of the release tarballs, `<dist>/ankra-cloud-ccm-<version>.spdx.json` (SPDX 2.3 JSON), from the
 * trees scripts/build.sh packed (`<tree>/<name>-<version>-linux-<arch>/lib/<name>/{deno,<name>.js}`), the tarballs
 * in `<dist>`, deno.lock and scripts/deno_runtime.pins. Run by scripts/build.sh before it writes SHA256SUMS:
 *
 *     deno run --allow-read --allow-write --allow-env=SOURCE_DATE_EPOCH scripts/write_release_sbom.ts DIST TREE
 *
 * @module
 */
import { VERSION } from "../lib/version.ts";
import { checkRuntimeBinary, readRuntimePins, runtimePinFor } from "./deno_runtime_pins.ts";
import { fileDigest } from "./file_digests.ts";
import { lockedNpmPackages } from "./npm_lock.ts";
import { type ArchiveFacts, releaseSbom } from "./spdx_sbom.ts";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** The programs of a release, each packed for both architectures. */
export const PROGRAMS = ["ankra-cloud-ccm", "ankra-cloud-simulator"] as const;

/** The release SBOM's file name. */
export function releaseSbomName(version = VERSION): string {
  return `ankra-cloud-ccm-${version}.spdx.json`;
}

/** Gathers the facts of the four tarballs and writes the SBOM into `dist`; returns its path. */
export async function writeReleaseSbom(dist: string, tree: string, sourceDateEpoch: number): Promise<string> {
  const pins = readRuntimePins();
  const archives: ArchiveFacts[] = [];
  for (const name of PROGRAMS) {
    for (const architecture of ["amd64", "arm64"]) {
      const base = `${name}-${VERSION}-linux-${architecture}`;
      const runtime = runtimePinFor(pins, architecture);
      const binary = `${tree}/${base}/lib/${name}/deno`;
      await checkRuntimeBinary(binary, architecture);
      archives.push({
        file: `${base}.tar.gz`,
        sha256: await fileDigest(`${dist}/${base}.tar.gz`, "sha256"),
        program: {
          name,
          version: VERSION,
          bundleSha256: await fileDigest(`${tree}/${base}/lib/${name}/${name}.js`, "sha256"),
        },
        runtime,
        binary: {
          path: `${base}/lib/${name}/deno`,
          sha1: await fileDigest(binary, "sha1"),
          sha256: runtime.binarySha256,
        },
      });
    }
  }
  const document = releaseSbom({
    version: VERSION,
    sourceDateEpoch,
    archives,
    lock: lockedNpmPackages(await Deno.readTextFile(`${ROOT}/deno.lock`)),
  });
  const path = `${dist}/${releaseSbomName()}`;
  await Deno.writeTextFile(path, JSON.stringify(document, null, 2) + "\n");
  return path;
}

if (import.meta.main) {
  const [dist, tree] = Deno.args;
  const epoch = Number(Deno.env.get("SOURCE_DATE_EPOCH"));
  if (!dist || !tree || !Number.isInteger(epoch)) {
    console.error("write_release_sbom: usage: SOURCE_DATE_EPOCH=… write_release_sbom.ts DIST TREE (scripts/build.sh)");
    Deno.exit(2);
  }
  try {
    console.log(await writeReleaseSbom(dist, tree, epoch));
  } catch (error) {
    console.error(`write_release_sbom: ${error instanceof Error ? error.message : error}`);
    Deno.exit(1);
  }
}
