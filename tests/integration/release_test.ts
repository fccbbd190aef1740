/**
 * The release artifacts (scripts/build.sh): reproducible to the byte, checksummed, described by an SBOM, built only
 * on the pinned Deno runtime, and runnable as they will be installed — as an unprivileged user with no environment,
 * from read-only directories.
 *
 * Builds twice (in parallel, about a minute on two cores) into temporary directories, once with the runtime from
 * `npm pack` and once from a directory of the same .tgz files (`--runtime-from`); `deno compile` is left out
 * (`--no-compile`): it needs Deno's download site. Builds given a runtime with one flipped byte stop before their
 * first step, so they take seconds.
 */
import assert from "node:assert/strict";
import { VERSION } from "../../lib/version.ts";
import { integrityHex, readRuntimePins, runtimePinFor } from "../../scripts/deno_runtime_pins.ts";
import { lockedNpmPackages } from "../../scripts/npm_lock.ts";
import type { SpdxDocument } from "../../scripts/spdx_sbom.ts";
import { freePort } from "../support/control_plane/control_plane.ts";
import { TEST_TOKEN } from "../support/cloud/simulator.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const NONROOT = ["--reuid=65532", "--regid=65532", "--clear-groups"];
const ARTIFACTS = [
  `ankra-cloud-ccm-${VERSION}-linux-amd64.tar.gz`,
  `ankra-cloud-ccm-${VERSION}-linux-arm64.tar.gz`,
  `ankra-cloud-simulator-${VERSION}-linux-amd64.tar.gz`,
  `ankra-cloud-simulator-${VERSION}-linux-arm64.tar.gz`,
];
const SBOM = `ankra-cloud-ccm-${VERSION}.spdx.json`;
const PINS = readRuntimePins();

interface Output {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(command: string, args: string[], options: { cwd?: string } = {}): Promise<Output> {
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(command, { args, cwd: options.cwd ?? ROOT, stdout: "piped", stderr: "piped" })
      .output();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new Error(`${command} is not installed: install it (apt-get install util-linux coreutils tar gzip)`);
    }
    throw error;
  }
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

/** Runs `argv` as uid/gid 65532 with an empty environment (`env -i`), in `cwd`. */
function runAsNonroot(argv: string[], cwd: string): Promise<Output> {
  return run("env", ["-i", "setpriv", ...NONROOT, ...argv], { cwd });
}

async function build(out: string, extra: string[] = []): Promise<{ seconds: number; log: string }> {
  const started = performance.now();
  const result = await run("bash", ["scripts/build.sh", "--no-compile", "--out", out, ...extra]);
  assert.equal(result.code, 0, `scripts/build.sh failed:\n${result.stdout}${result.stderr}`);
  return { seconds: (performance.now() - started) / 1000, log: result.stdout + result.stderr };
}

/** The two platform packages' .tgz files from `npm pack --ignore-scripts` into `dir` (npm's cache usually has them). */
async function packRuntime(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  const specs = ["amd64", "arm64"].map((a) => `${runtimePinFor(PINS, a).name}@${PINS[0].version}`);
  const pack = await run("npm", [
    "pack",
    "--ignore-scripts",
    "--prefer-offline",
    "--silent",
    "--pack-destination",
    dir,
    ...specs,
  ]);
  assert.equal(pack.code, 0, pack.stderr);
}

function tgzName(architecture: string): string {
  return `${runtimePinFor(PINS, architecture).name.replace(/^@/, "").replace("/", "-")}-${PINS[0].version}.tgz`;
}

async function flipByte(path: string, offset: number): Promise<void> {
  const bytes = await Deno.readFile(path);
  bytes[offset] ^= 0xff;
  await Deno.writeFile(path, bytes);
}

/** Extracts `tarball` into `dir`, then takes every write permission away (the directory included). */
async function readOnlyInstall(tarball: string, dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  const extract = await run("tar", ["-xzf", tarball, "-C", dir]);
  assert.equal(extract.code, 0, extract.stderr);
  const chmod = await run("chmod", ["-R", "a-w", dir]);
  assert.equal(chmod.code, 0, chmod.stderr);
}

async function isEmptyDirectory(dir: string): Promise<boolean> {
  for await (const _ of Deno.readDir(dir)) return false;
  return true;
}

Deno.test("the release artifacts are reproducible, checksummed and run with no HOME, as nonroot, read-only", async (t) => {
  assert.equal(Deno.uid(), 0, "this test switches to uid 65532 with setpriv: run it as root (as CI does)");
  const dir = await Deno.makeTempDir({ prefix: "ccm-release-" });
  // uid 65532 must reach the installs below; everything under them is made read-only.
  await Deno.chmod(dir, 0o755);
  try {
    const runtime = `${dir}/runtime`;
    await packRuntime(runtime);
    const [first, second] = await Promise.all([
      build(`${dir}/first`),
      build(`${dir}/second`, ["--runtime-from", runtime]),
    ]);
    console.log(`release builds: ${first.seconds.toFixed(1)} s and ${second.seconds.toFixed(1)} s (in parallel)`);

    await t.step("building twice gives the same SHA256SUMS, naming every artifact", async () => {
      const sums = await Deno.readTextFile(`${dir}/first/SHA256SUMS`);
      assert.equal(await Deno.readTextFile(`${dir}/second/SHA256SUMS`), sums);
      const named = sums.trim().split("\n").map((line) => line.split(/\s+/)[1]);
      assert.deepEqual(named, [...ARTIFACTS, SBOM].sort());
      assert.match(first.log, /bundle on the Deno [0-9.]+ runtime from npm/, "the build says which path made what");
    });

    await t.step(
      "the SBOM describes each tarball by its checksum, the runtime and every npm package of deno.lock",
      async () => {
        const document = JSON.parse(await Deno.readTextFile(`${dir}/first/${SBOM}`)) as SpdxDocument;
        assert.equal(document.spdxVersion, "SPDX-2.3");
        const sums = new Map(
          (await Deno.readTextFile(`${dir}/first/SHA256SUMS`)).trim().split("\n").map((line) => {
            const [sum, name] = line.split(/\s+/);
            return [name, sum];
          }),
        );
        const described = document.relationships.filter((r) => r.relationshipType === "DESCRIBES")
          .map((r) => document.packages.find((p) => p.SPDXID === r.relatedSpdxElement)!);
        assert.deepEqual(described.map((p) => p.name).sort(), [...ARTIFACTS].sort());
        for (const archive of described) assert.equal(archive.checksums![0].checksumValue, sums.get(archive.name));
        for (const architecture of ["amd64", "arm64"]) {
          const pin = runtimePinFor(PINS, architecture);
          const runtime = document.packages.find((p) => p.name === pin.name && p.versionInfo === pin.version);
          assert.equal(
            runtime?.checksums?.[0].checksumValue,
            integrityHex(pin.integrity),
            `${pin.name} and its integrity`,
          );
          const binaries = document.files.filter((f) => f.fileName.includes(`-linux-${architecture}/lib/`));
          assert.equal(binaries.length, 2, "the runtime binary of the controller's and the simulator's tarball");
          for (const file of binaries) assert.ok(file.checksums.some((c) => c.checksumValue === pin.binarySha256));
        }
        for (const pkg of lockedNpmPackages(await Deno.readTextFile(`${ROOT}deno.lock`))) {
          const listed = document.packages.find((p) => p.name === pkg.name && p.versionInfo === pkg.version);
          assert.equal(
            listed?.checksums?.[0].checksumValue,
            integrityHex(pkg.integrity),
            `${pkg.key} and its integrity`,
          );
        }
      },
    );

    await t.step("a flipped byte in the packed runtime stops the build before it writes anything", async () => {
      const flipped = `${dir}/flipped`;
      await Deno.mkdir(flipped);
      for (const architecture of ["amd64", "arm64"]) {
        await Deno.copyFile(`${runtime}/${tgzName(architecture)}`, `${flipped}/${tgzName(architecture)}`);
      }
      await flipByte(`${flipped}/${tgzName("arm64")}`, 1_000_000);
      const out = `${dir}/flipped-out`;
      const result = await run("bash", ["scripts/build.sh", "--no-compile", "--out", out, "--runtime-from", flipped]);
      assert.notEqual(result.code, 0, "the build fails");
      assert.match(
        result.stderr,
        new RegExp(`^build: \\S+/${tgzName("arm64")} \\(@deno/linux-arm64-glibc\\) has npm integrity sha512-`, "m"),
      );
      assert.ok(result.stderr.includes(`pins ${runtimePinFor(PINS, "arm64").integrity}`), result.stderr);
      assert.deepEqual([...Deno.readDirSync(out)], [], "no artifact, no SHA256SUMS");
    });

    await t.step(
      "a runtime binary other than the pinned one stops the build, even in a .tgz of the pinned integrity",
      async () => {
        // A .tgz re-packed around a changed binary, and a copy of the pins that trusts that .tgz: the binary's own
        // SHA-256 is what refuses it.
        const repacked = `${dir}/repacked`;
        await Deno.mkdir(`${repacked}/unpacked`, { recursive: true });
        await Deno.copyFile(`${runtime}/${tgzName("arm64")}`, `${repacked}/${tgzName("arm64")}`);
        const untar = await run("tar", ["-xzf", `${runtime}/${tgzName("amd64")}`, "-C", `${repacked}/unpacked`]);
        assert.equal(untar.code, 0, untar.stderr);
        await flipByte(`${repacked}/unpacked/package/deno`, 1_000_000);
        const tar = await run("tar", [
          "-czf",
          `${repacked}/${tgzName("amd64")}`,
          "-C",
          `${repacked}/unpacked`,
          "package",
        ]);
        assert.equal(tar.code, 0, tar.stderr);
        const integrity = await run("bash", [
          "-c",
          `source scripts/deno_runtime.sh && _npm_integrity_of ${repacked}/${tgzName("amd64")}`,
        ]);
        const pins = (await Deno.readTextFile(`${ROOT}scripts/deno_runtime.pins`))
          .replace(runtimePinFor(PINS, "amd64").integrity, integrity.stdout.trim());
        await Deno.writeTextFile(`${repacked}/pins`, pins);
        const out = `${dir}/repacked-out`;
        const result = await run("env", [
          `DENO_RUNTIME_PINS=${repacked}/pins`,
          "bash",
          "scripts/build.sh",
          "--no-compile",
          "--out",
          out,
          "--runtime-from",
          repacked,
        ]);
        assert.notEqual(result.code, 0, "the build fails");
        assert.match(result.stderr, /package\/deno \(@deno\/linux-x64-glibc\) has SHA-256 [0-9a-f]{64}, but/);
        assert.ok(result.stderr.includes(`pins ${runtimePinFor(PINS, "amd64").binarySha256}`), result.stderr);
        assert.deepEqual([...Deno.readDirSync(out)], [], "no artifact, no SHA256SUMS");
      },
    );

    await t.step("sha256sum -c accepts SHA256SUMS", async () => {
      const check = await run("sha256sum", ["-c", "SHA256SUMS"], { cwd: `${dir}/first` });
      assert.equal(check.code, 0, check.stdout + check.stderr);
    });

    await t.step("the tarballs have fixed mtimes, 0:0 owners and sorted entries", async () => {
      const listing = await run("tar", ["--numeric-owner", "-tvzf", `${dir}/first/${ARTIFACTS[0]}`]);
      const lines = listing.stdout.trim().split("\n");
      const owners = new Set(lines.map((line) => line.split(/\s+/)[1]));
      const times = new Set(lines.map((line) => line.split(/\s+/).slice(3, 5).join(" ")));
      assert.deepEqual([...owners], ["0/0"]);
      assert.equal(times.size, 1, `one mtime for every entry, not ${[...times].join(", ")}`);
      const names = lines.map((line) => line.split(/\s+/).slice(5).join(" "));
      assert.deepEqual(names, [...names].sort());
    });

    const installs = `${dir}/installs`;
    await Deno.mkdir(installs);
    await Deno.chmod(installs, 0o755);
    await readOnlyInstall(`${dir}/first/${ARTIFACTS[0]}`, `${installs}/ccm`);
    await readOnlyInstall(`${dir}/first/${ARTIFACTS[2]}`, `${installs}/simulator`);
    const ccmRoot = `${installs}/ccm/ankra-cloud-ccm-${VERSION}-linux-amd64`;
    const simulatorRoot = `${installs}/simulator/ankra-cloud-simulator-${VERSION}-linux-amd64`;

    await t.step(
      "the amd64 launcher prints its version under env -i as uid 65532 from a read-only install",
      async () => {
        const result = await runAsNonroot([`${ccmRoot}/bin/ankra-cloud-ccm`, "--version"], ccmRoot);
        assert.equal(result.code, 0, result.stderr);
        assert.equal(result.stdout, `ankra-cloud-ccm ${VERSION}\n`);
        assert.equal(result.stderr, "", "no warnings about caches or HOME");
        assert.ok(await isEmptyDirectory(`${ccmRoot}/lib/ankra-cloud-ccm/deno-dir`), "DENO_DIR stays empty");
      },
    );

    await t.step("the launcher also works through a symlink, as from /usr/local/bin", async () => {
      const links = `${dir}/links`;
      await Deno.mkdir(links);
      await Deno.chmod(links, 0o755);
      await Deno.symlink(`${ccmRoot}/bin/ankra-cloud-ccm`, `${links}/ankra-cloud-ccm`);
      const result = await runAsNonroot([`${links}/ankra-cloud-ccm`, "--version"], "/");
      assert.equal(result.stdout, `ankra-cloud-ccm ${VERSION}\n`, result.stderr);
    });

    await t.step("the simulator artifact prints its help and serves the API as uid 65532", async () => {
      const launcher = `${simulatorRoot}/bin/ankra-cloud-simulator`;
      const help = await runAsNonroot([launcher, "--help"], simulatorRoot);
      assert.equal(help.code, 0, help.stderr);
      assert.match(help.stdout, /^ankra-cloud-simulator: /);
      const port = freePort();
      const child = new Deno.Command("env", {
        args: ["-i", "setpriv", ...NONROOT, launcher, `--listen=127.0.0.1:${port}`, `--token=${TEST_TOKEN}`],
        cwd: simulatorRoot,
        stdout: "null",
        stderr: "piped",
      }).spawn();
      try {
        let status = 0;
        for (let attempt = 0; attempt < 100 && status !== 200; attempt++) {
          try {
            const response = await fetch(`http://127.0.0.1:${port}/v1/zones`, {
              headers: { authorization: `Bearer ${TEST_TOKEN}` },
            });
            await response.body?.cancel();
            status = response.status;
          } catch {
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
        assert.equal(status, 200, "GET /v1/zones on the simulator artifact");
      } finally {
        child.kill("SIGTERM");
        await child.status;
        await child.stderr.cancel();
      }
    });
  } finally {
    await run("chmod", ["-R", "u+w", dir]);
    await Deno.remove(dir, { recursive: true });
  }
});
