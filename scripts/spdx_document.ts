/**
 * The SPDX 2.3 document model this project writes, and a builder that keeps each element once: packages (always
 * `filesAnalyzed: false`), files, relationships, and a reproducible document (`created` from SOURCE_DATE_EPOCH, the
 * namespace ending in the SHA-256 of the rest). scripts/spdx_sbom.ts makes the release's and the image's documents.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { integrityHex, type RuntimePin } from "./deno_runtime_pins.ts";
import type { LockedNpmPackage } from "./npm_lock.ts";

/** A checksum of a package or file. */
export interface SpdxChecksum {
  /** Algorithm. */
  algorithm: "SHA1" | "SHA256" | "SHA512";
  /** Lower-case hex. */
  checksumValue: string;
}

/** An SPDX package (always `filesAnalyzed: false`: files are listed as their own elements). */
export interface SpdxPackage {
  /** `SPDXRef-…`. */
  SPDXID: string;
  /** Name. */
  name: string;
  /** Version. */
  versionInfo: string;
  /** Where it comes from, or `NOASSERTION`. */
  downloadLocation: string;
  /** Files are not analysed. */
  filesAnalyzed: false;
  /** Checksums of the package's own file (the npm .tgz, the .deb, the tarball, the bundle). */
  checksums?: SpdxChecksum[];
  /** `NOASSERTION`. */
  licenseConcluded: string;
  /** The declared license, or `NOASSERTION`. */
  licenseDeclared: string;
  /** `NOASSERTION`. */
  copyrightText: string;
  /** `Organization: …` or `NOASSERTION`. */
  supplier: string;
  /** What it is. */
  primaryPackagePurpose: "APPLICATION" | "ARCHIVE" | "CONTAINER" | "LIBRARY" | "OPERATING-SYSTEM";
  /** Package URLs. */
  externalRefs?: { referenceCategory: "PACKAGE-MANAGER"; referenceType: "purl"; referenceLocator: string }[];
  /** Free text. */
  comment?: string;
}

/** An SPDX file. */
export interface SpdxFile {
  /** `SPDXRef-…`. */
  SPDXID: string;
  /** Path, `./`-relative. */
  fileName: string;
  /** SHA1 (required by SPDX 2.3) and SHA256. */
  checksums: SpdxChecksum[];
  /** `NOASSERTION`. */
  licenseConcluded: string;
  /** `NOASSERTION`. */
  copyrightText: string;
}

/** A relationship between two elements. */
export interface SpdxRelationship {
  /** From. */
  spdxElementId: string;
  /** Kind. */
  relationshipType: string;
  /** To. */
  relatedSpdxElement: string;
}

/** An SPDX 2.3 document. */
export interface SpdxDocument {
  /** Always `SPDX-2.3`. */
  spdxVersion: "SPDX-2.3";
  /** The document's own license, as SPDX requires. */
  dataLicense: "CC0-1.0";
  /** The document's id. */
  SPDXID: "SPDXRef-DOCUMENT";
  /** E.g. `ankra-cloud-ccm-v0.2.0`. */
  name: string;
  /** A URI unique to this document: the name and the SHA-256 of the rest. */
  documentNamespace: string;
  /** When (SOURCE_DATE_EPOCH) and by what. */
  creationInfo: { created: string; creators: string[]; comment?: string };
  /** Every package. */
  packages: SpdxPackage[];
  /** Every file. */
  files: SpdxFile[];
  /** `DESCRIBES` first, then the rest. */
  relationships: SpdxRelationship[];
}

/** An SPDX element id from parts: letters, digits, `.` and `-` only. */
export function spdxId(...parts: string[]): string {
  return `SPDXRef-${parts.join("-").replace(/[^A-Za-z0-9.-]+/g, "-").replace(/^-+|-+$/g, "")}`;
}

/** The package URL of an npm package (`pkg:npm/%40scope/name@version`). */
export function npmPurl(name: string, version: string): string {
  return `pkg:npm/${name.replace(/^@/, "%40")}@${version}`;
}

const UNKNOWN = "NOASSERTION";

/** A package's fields that are the same for every package here: nothing asserted but what is known. */
export function basePackage(fields: Pick<SpdxPackage, "SPDXID" | "name" | "versionInfo" | "primaryPackagePurpose">) {
  return {
    ...fields,
    downloadLocation: UNKNOWN,
    filesAnalyzed: false as const,
    licenseConcluded: UNKNOWN,
    licenseDeclared: UNKNOWN,
    copyrightText: UNKNOWN,
    supplier: UNKNOWN,
  };
}

/** The SPDX package of an npm package: its integrity as a SHA512 checksum, its purl. */
export function npmElement(pkg: { name: string; version: string; integrity: string }): SpdxPackage {
  return {
    ...basePackage({
      SPDXID: spdxId("npm", pkg.name, pkg.version),
      name: pkg.name,
      versionInfo: pkg.version,
      primaryPackagePurpose: "LIBRARY",
    }),
    checksums: [{ algorithm: "SHA512", checksumValue: integrityHex(pkg.integrity) }],
    externalRefs: [{
      referenceCategory: "PACKAGE-MANAGER",
      referenceType: "purl",
      referenceLocator: npmPurl(pkg.name, pkg.version),
    }],
  };
}

/** A program's bundle (`deno bundle` of main.ts or simulator/main.ts). */
export interface ProgramFacts {
  /** `ankra-cloud-ccm` or `ankra-cloud-simulator`. */
  name: string;
  /** Release version, e.g. `v0.2.0`. */
  version: string;
  /** SHA-256 of the bundle file. */
  bundleSha256: string;
}

/** The Deno binary as a file of an archive or image. */
export interface RuntimeBinaryFacts {
  /** Where it is, e.g. `ankra-cloud-ccm-v0.2.0-linux-amd64/lib/ankra-cloud-ccm/deno`. */
  path: string;
  /** What tells apart two files at the same path (the image's platform, e.g. `linux-arm64`). */
  scope?: string;
  /** Its SHA-1 (SPDX requires one). */
  sha1: string;
  /** Its pinned SHA-256. */
  sha256: string;
}

/** A builder that keeps each element once and records relationships. */
export class SpdxElements {
  /** Packages by id, in the order they were first added. */
  readonly packages = new Map<string, SpdxPackage>();
  /** Files by id. */
  readonly files = new Map<string, SpdxFile>();
  /** Relationships, each once. */
  readonly relationships: SpdxRelationship[] = [];

  /** Adds a package (again: nothing) and returns its id; throws when another package has the id. */
  add(element: SpdxPackage): string {
    const known = this.packages.get(element.SPDXID);
    if (known && JSON.stringify(known) !== JSON.stringify(element)) {
      throw new Error(`two different SBOM packages would share the id ${element.SPDXID}: give them distinct id parts`);
    }
    this.packages.set(element.SPDXID, element);
    return element.SPDXID;
  }

  /** Adds a file (again: nothing) and returns its id; throws when another file has the id. */
  addFile(file: SpdxFile): string {
    const known = this.files.get(file.SPDXID);
    if (known && JSON.stringify(known) !== JSON.stringify(file)) {
      throw new Error(`two different SBOM files would share the id ${file.SPDXID}: give them distinct scopes`);
    }
    this.files.set(file.SPDXID, file);
    return file.SPDXID;
  }

  /** Records that `from` stands in relationship `type` (SPDX's name, e.g. `CONTAINS`) to `to`, once. */
  relate(from: string, type: string, to: string): void {
    if (
      !this.relationships.some((r) =>
        r.spdxElementId === from && r.relationshipType === type && r.relatedSpdxElement === to
      )
    ) {
      this.relationships.push({ spdxElementId: from, relationshipType: type, relatedSpdxElement: to });
    }
  }

  /** The npm packages of the lock, each DEPENDS_ON its dependencies; `program` DEPENDS_ON the direct ones. */
  addLock(lock: readonly LockedNpmPackage[], program: string): void {
    const ids = new Map(lock.map((pkg) => [pkg.key, this.add(npmElement(pkg))]));
    for (const pkg of lock) {
      if (pkg.direct) this.relate(program, "DEPENDS_ON", ids.get(pkg.key)!);
      for (const dependency of pkg.dependencies) {
        const id = ids.get(dependency);
        if (id) this.relate(ids.get(pkg.key)!, "DEPENDS_ON", id);
      }
    }
  }

  /**
   * A program and its runtime (the npm package, and the binary expanded from it) inside `container`; `expandedFrom`:
   * the container is an archive the binary is unpacked from.
   */
  addProgram(
    container: string,
    program: ProgramFacts,
    runtime: { pin: RuntimePin; binary: RuntimeBinaryFacts; expandedFrom?: boolean },
    lock: readonly LockedNpmPackage[],
  ): void {
    const expandedFrom = runtime.expandedFrom ?? false;
    const programId = this.add({
      ...basePackage({
        SPDXID: spdxId("program", program.name, program.version, program.bundleSha256.slice(0, 12)),
        name: program.name,
        versionInfo: program.version,
        primaryPackagePurpose: "APPLICATION",
      }),
      licenseDeclared: "Apache-2.0",
      downloadLocation: "https://github.com/ankraio/ankra-cloud-ccm",
      checksums: [{ algorithm: "SHA256", checksumValue: program.bundleSha256 }],
      comment: "the program as one deno bundle file",
    });
    const runtimeId = this.add({
      ...npmElement(runtime.pin),
      primaryPackagePurpose: "APPLICATION",
      licenseDeclared: "MIT",
    });
    const binaryId = this.addFile({
      SPDXID: spdxId("file", ...(runtime.binary.scope ? [runtime.binary.scope] : []), runtime.binary.path),
      fileName: `./${runtime.binary.path}`,
      checksums: [
        { algorithm: "SHA1", checksumValue: runtime.binary.sha1 },
        { algorithm: "SHA256", checksumValue: runtime.binary.sha256 },
      ],
      licenseConcluded: UNKNOWN,
      copyrightText: UNKNOWN,
    });
    // A package with filesAnalyzed false may not CONTAIN files: the binary is named as expanded from the runtime's
    // .tgz (and, for a tarball, from the tarball itself).
    this.relate(container, "CONTAINS", programId);
    this.relate(container, "CONTAINS", runtimeId);
    this.relate(binaryId, "EXPANDED_FROM_ARCHIVE", runtimeId);
    if (expandedFrom) this.relate(binaryId, "EXPANDED_FROM_ARCHIVE", container);
    this.relate(runtimeId, "RUNTIME_DEPENDENCY_OF", programId);
    this.addLock(lock, programId);
  }

  /** The document, its namespace the SHA-256 of everything else. */
  document(name: string, created: string, described: string[], comment: string): SpdxDocument {
    const body: Omit<SpdxDocument, "documentNamespace"> = {
      spdxVersion: "SPDX-2.3",
      dataLicense: "CC0-1.0",
      SPDXID: "SPDXRef-DOCUMENT",
      name,
      creationInfo: { created, creators: ["Tool: ankra-cloud-ccm-build", "Organization: Ankra"], comment },
      packages: [...this.packages.values()],
      files: [...this.files.values()],
      relationships: [
        ...described.map((id) => ({
          spdxElementId: "SPDXRef-DOCUMENT",
          relationshipType: "DESCRIBES",
          relatedSpdxElement: id,
        })),
        ...this.relationships,
      ],
    };
    const digest = createHash("sha256").update(JSON.stringify(body)).digest("hex");
    const { spdxVersion, dataLicense, SPDXID, ...rest } = body;
    return {
      spdxVersion,
      dataLicense,
      SPDXID,
      documentNamespace: `https://github.com/ankraio/ankra-cloud-ccm/spdx/${name}-${digest}`,
      ...rest,
    };
  }
}

/** RFC 3339 (UTC, no fraction) of `epochSeconds`. */
export function spdxCreated(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}
