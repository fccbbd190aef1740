/**
 * The SBOM documents (scripts/spdx_sbom.ts) from the checkout's own deno.lock and pins: every npm package of the lock
 * with its version and integrity, the runtime with its npm integrity and its binary's SHA-256, the Debian packages of
 * the image with their purls; SPDX 2.3's required fields, unique ids, relationships between known elements, and the
 * same bytes for the same facts.
 */
import assert from "node:assert/strict";
import { integrityHex, readRuntimePins, runtimePinFor } from "../../../scripts/deno_runtime_pins.ts";
import { lockedNpmPackages } from "../../../scripts/npm_lock.ts";
import { imageSbom, releaseSbom, type SpdxDocument } from "../../../scripts/spdx_sbom.ts";

const ROOT = new URL("../../..", import.meta.url).pathname.replace(/\/$/, "");
const LOCK = lockedNpmPackages(await Deno.readTextFile(`${ROOT}/deno.lock`));
const PINS = readRuntimePins();
const HEX64 = "ab".repeat(32);

function binary(path: string, architecture: string, scope?: string) {
  return { path, sha1: "cd".repeat(20), sha256: runtimePinFor(PINS, architecture).binarySha256, scope };
}

function release(): SpdxDocument {
  return releaseSbom({
    version: "v9.9.9",
    sourceDateEpoch: 1704067200,
    lock: LOCK,
    archives: ["amd64", "arm64"].map((architecture) => ({
      file: `ankra-cloud-ccm-v9.9.9-linux-${architecture}.tar.gz`,
      sha256: HEX64,
      program: { name: "ankra-cloud-ccm", version: "v9.9.9", bundleSha256: HEX64 },
      runtime: runtimePinFor(PINS, architecture),
      binary: binary(`ankra-cloud-ccm-v9.9.9-linux-${architecture}/lib/ankra-cloud-ccm/deno`, architecture),
    })),
  });
}

/** SPDX 2.3's required fields, unique ids, and relationships only between elements of the document. */
function assertWellFormed(document: SpdxDocument): void {
  assert.equal(document.spdxVersion, "SPDX-2.3");
  assert.equal(document.dataLicense, "CC0-1.0");
  assert.equal(document.SPDXID, "SPDXRef-DOCUMENT");
  assert.match(document.documentNamespace, /^https:\/\/\S+-[0-9a-f]{64}$/);
  assert.match(document.creationInfo.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  const ids = [document.SPDXID, ...document.packages.map((p) => p.SPDXID), ...document.files.map((f) => f.SPDXID)];
  assert.equal(new Set(ids).size, ids.length, "every id once");
  for (const id of ids) assert.match(id, /^SPDXRef-[A-Za-z0-9.-]+$/);
  for (const r of document.relationships) {
    assert.ok(ids.includes(r.spdxElementId) && ids.includes(r.relatedSpdxElement), JSON.stringify(r));
  }
  for (const p of document.packages) {
    for (const field of ["name", "versionInfo", "downloadLocation", "licenseConcluded", "copyrightText"] as const) {
      assert.ok(p[field], `${p.SPDXID} has ${field}`);
    }
    for (const c of p.checksums ?? []) assert.match(c.checksumValue, /^[0-9a-f]+$/);
  }
  for (const f of document.files) assert.deepEqual(f.checksums.map((c) => c.algorithm), ["SHA1", "SHA256"]);
  assert.ok(document.relationships.some((r) => r.relationshipType === "DESCRIBES"));
}

Deno.test("deno.lock's npm packages are read with name, version, integrity and their dependencies", () => {
  const lock = JSON.parse(Deno.readTextFileSync(`${ROOT}/deno.lock`)) as { npm: Record<string, unknown> };
  assert.equal(LOCK.length, Object.keys(lock.npm).length);
  const hono = LOCK.find((p) => p.name === "hono")!;
  assert.equal(hono.direct, true, "named in deno.json");
  const plugin = LOCK.find((p) => p.name === "@jsep-plugin/regex")!;
  assert.equal(plugin.version, "1.1.0", "a peer dependency suffix is not part of the version");
  assert.ok(plugin.dependencies.every((d) => LOCK.some((p) => p.key === d)), "dependencies resolve to lock keys");
  assert.ok(LOCK.every((p) => p.integrity.startsWith("sha512-")));
});

Deno.test("the release SBOM lists the runtime and every npm package of deno.lock with its version and integrity", () => {
  const document = release();
  assertWellFormed(document);
  for (const pkg of LOCK) {
    const element = document.packages.find((p) => p.name === pkg.name && p.versionInfo === pkg.version);
    assert.ok(element, `${pkg.name}@${pkg.version} is listed`);
    assert.deepEqual(element.checksums, [{ algorithm: "SHA512", checksumValue: integrityHex(pkg.integrity) }]);
    assert.match(element.externalRefs![0].referenceLocator, /^pkg:npm\/(%40[a-z0-9-]+\/)?[a-z0-9._-]+@\S+$/);
  }
  for (const architecture of ["amd64", "arm64"]) {
    const pin = runtimePinFor(PINS, architecture);
    const runtime = document.packages.find((p) => p.name === pin.name)!;
    assert.equal(runtime.versionInfo, pin.version);
    assert.deepEqual(runtime.checksums, [{ algorithm: "SHA512", checksumValue: integrityHex(pin.integrity) }]);
    const file = document.files.find((f) => f.fileName.includes(`linux-${architecture}/lib/ankra-cloud-ccm/deno`))!;
    assert.equal(file.checksums.find((c) => c.algorithm === "SHA256")?.checksumValue, pin.binarySha256);
    assert.ok(
      document.relationships.some((r) =>
        r.spdxElementId === file.SPDXID && r.relationshipType === "EXPANDED_FROM_ARCHIVE" &&
        r.relatedSpdxElement === runtime.SPDXID
      ),
    );
  }
  const described = document.relationships.filter((r) => r.relationshipType === "DESCRIBES");
  assert.equal(described.length, 2, "each tarball is described");
  assert.equal(JSON.stringify(release()), JSON.stringify(document), "the same facts give the same document");
});

Deno.test("the image SBOM lists each platform's Debian packages with purls, the runtime and the npm packages", () => {
  const debs = (architecture: string) => [
    { name: "libc6", version: "2.36-9+deb12u14", architecture, sha256: HEX64 },
    { name: "ca-certificates", version: "20250419~deb12u2", architecture: "all", sha256: HEX64 },
  ];
  const document = imageSbom({
    version: "v9.9.9",
    sourceDateEpoch: 1704067200,
    indexDigest: `sha256:${HEX64}`,
    platforms: ["amd64", "arm64"].map((architecture) => ({
      architecture,
      manifestDigest: `sha256:${architecture === "amd64" ? "01" : "02"}${"0".repeat(62)}`,
      debianPackages: debs(architecture),
      runtime: runtimePinFor(PINS, architecture),
      binary: binary("usr/local/lib/ankra-cloud-ccm/deno", architecture, `linux-${architecture}`),
    })),
    program: { name: "ankra-cloud-ccm", version: "v9.9.9", bundleSha256: HEX64 },
    lock: LOCK,
    distro: "debian-12",
  });
  assertWellFormed(document);
  const libc = document.packages.filter((p) => p.name === "libc6");
  assert.deepEqual(libc.map((p) => p.externalRefs![0].referenceLocator), [
    "pkg:deb/debian/libc6@2.36-9%2Bdeb12u14?arch=amd64&distro=debian-12",
    "pkg:deb/debian/libc6@2.36-9%2Bdeb12u14?arch=arm64&distro=debian-12",
  ]);
  assert.equal(document.packages.filter((p) => p.name === "ca-certificates").length, 1, "an `all` package once");
  assert.equal(document.files.length, 2, "one runtime binary per platform");
  assert.ok(LOCK.every((pkg) => document.packages.some((p) => p.name === pkg.name && p.versionInfo === pkg.version)));
  const index = document.packages.find((p) => p.primaryPackagePurpose === "CONTAINER" && p.name === "ankra-cloud-ccm");
  assert.equal(index?.checksums?.[0].checksumValue, HEX64, "the index by its digest");
});
