/**
 * Software bills of materials (SPDX 2.3, JSON) of the release tarballs and of the image, made from what the build
 * already knows — no scanner: the npm packages `deno.lock` resolves (name, version, integrity, dependencies), the Deno
 * runtime of `scripts/deno_runtime.pins` (its npm integrity, and its binary's checksums as a file), the programs'
 * bundles, and for the image the Debian packages of its base (name, version, architecture, SHA-256 of the `.deb`).
 * Pure functions: scripts/write_release_sbom.ts and scripts/image/image_sbom.ts gather the facts and write the files.
 *
 * The npm packages are the whole resolution of `deno.lock`: every package the build may draw on. A bundle holds only
 * the modules its program imports (type-only imports such as `@kubernetes/client-node` add no code), so the list is
 * an upper bound.
 *
 * @module
 */
import type { RuntimePin } from "./deno_runtime_pins.ts";
import type { LockedNpmPackage } from "./npm_lock.ts";
import {
  basePackage,
  type ProgramFacts,
  type RuntimeBinaryFacts,
  spdxCreated,
  type SpdxDocument,
  SpdxElements,
  spdxId,
} from "./spdx_document.ts";

export type { ProgramFacts, RuntimeBinaryFacts, SpdxDocument } from "./spdx_document.ts";

/** One release tarball. */
export interface ArchiveFacts {
  /** File name in dist/. */
  file: string;
  /** Its SHA-256 (as in SHA256SUMS). */
  sha256: string;
  /** The program it holds. */
  program: ProgramFacts;
  /** The runtime's npm package. */
  runtime: RuntimePin;
  /** The runtime's binary inside it. */
  binary: RuntimeBinaryFacts;
}

/** What the release SBOM is made from. */
export interface ReleaseSbomFacts {
  /** Release version. */
  version: string;
  /** SOURCE_DATE_EPOCH. */
  sourceDateEpoch: number;
  /** The tarballs. */
  archives: ArchiveFacts[];
  /** deno.lock's npm packages. */
  lock: readonly LockedNpmPackage[];
}

/** The SBOM of the release tarballs: each tarball DESCRIBED, CONTAINS its program and runtime binary. */
export function releaseSbom(facts: ReleaseSbomFacts): SpdxDocument {
  const elements = new SpdxElements();
  const described = facts.archives.map((archive) => {
    const id = elements.add({
      ...basePackage({
        SPDXID: spdxId("archive", archive.file),
        name: archive.file,
        versionInfo: facts.version,
        primaryPackagePurpose: "ARCHIVE",
      }),
      checksums: [{ algorithm: "SHA256", checksumValue: archive.sha256 }],
    });
    const runtime = { pin: archive.runtime, binary: archive.binary, expandedFrom: true };
    elements.addProgram(id, archive.program, runtime, facts.lock);
    return id;
  });
  return elements.document(
    `ankra-cloud-ccm-${facts.version}`,
    spdxCreated(facts.sourceDateEpoch),
    described,
    "npm packages: the whole resolution of deno.lock (an upper bound of what the bundles hold); the Deno runtime " +
      "of scripts/deno_runtime.pins",
  );
}

/** A Debian package of the image's base. */
export interface DebianFacts {
  /** Name. */
  name: string;
  /** Version. */
  version: string;
  /** `amd64`, `arm64` or `all`. */
  architecture: string;
  /** SHA-256 of the `.deb`. */
  sha256: string;
}

/** What the image SBOM is made from. */
export interface ImageSbomFacts {
  /** Release version, the image tag. */
  version: string;
  /** SOURCE_DATE_EPOCH. */
  sourceDateEpoch: number;
  /** The image index digest, `sha256:…`. */
  indexDigest: string;
  /** Per platform. */
  platforms: {
    architecture: string;
    manifestDigest: string;
    debianPackages: DebianFacts[];
    runtime: RuntimePin;
    binary: RuntimeBinaryFacts;
  }[];
  /** The controller's bundle. */
  program: ProgramFacts;
  /** deno.lock's npm packages. */
  lock: readonly LockedNpmPackage[];
  /** `debian-12` (from base-files' version), for the Debian purls. */
  distro: string;
}

function digestHex(digest: string): string {
  return digest.replace(/^sha256:/, "");
}

/** The SBOM of the image: the index CONTAINS each platform's image, which CONTAINS its Debian packages and program. */
export function imageSbom(facts: ImageSbomFacts): SpdxDocument {
  const elements = new SpdxElements();
  const image = (name: string, digest: string, purpose: "CONTAINER") =>
    elements.add({
      ...basePackage({
        SPDXID: spdxId("image", name),
        name,
        versionInfo: facts.version,
        primaryPackagePurpose: purpose,
      }),
      checksums: [{ algorithm: "SHA256", checksumValue: digestHex(digest) }],
      externalRefs: [{
        referenceCategory: "PACKAGE-MANAGER",
        referenceType: "purl",
        referenceLocator: `pkg:oci/ankra-cloud-ccm@${encodeURIComponent(digest)}?tag=${facts.version}`,
      }],
    });
  const index = image("ankra-cloud-ccm", facts.indexDigest, "CONTAINER");
  for (const platform of facts.platforms) {
    const id = image(`ankra-cloud-ccm-linux-${platform.architecture}`, platform.manifestDigest, "CONTAINER");
    elements.relate(index, "CONTAINS", id);
    for (const deb of platform.debianPackages) {
      const debId = elements.add({
        ...basePackage({
          SPDXID: spdxId("deb", deb.name, deb.version, deb.architecture),
          name: deb.name,
          versionInfo: deb.version,
          primaryPackagePurpose: deb.name === "base-files" ? "OPERATING-SYSTEM" : "LIBRARY",
        }),
        supplier: "Organization: Debian",
        checksums: [{ algorithm: "SHA256", checksumValue: deb.sha256 }],
        externalRefs: [{
          referenceCategory: "PACKAGE-MANAGER",
          referenceType: "purl",
          referenceLocator: `pkg:deb/debian/${deb.name}@${encodeURIComponent(deb.version)}?arch=${deb.architecture}` +
            `&distro=${facts.distro}`,
        }],
      });
      elements.relate(id, "CONTAINS", debId);
    }
    elements.addProgram(id, facts.program, { pin: platform.runtime, binary: platform.binary }, facts.lock);
  }
  return elements.document(
    `ankra-cloud-ccm-${facts.version}-image`,
    spdxCreated(facts.sourceDateEpoch),
    [index],
    "Debian packages: the image base's, as downloaded by apt (SHA-256 of each .deb); npm packages: the whole " +
      "resolution of deno.lock (an upper bound of what the bundle holds); the Deno runtime of scripts/deno_runtime.pins",
  );
}
