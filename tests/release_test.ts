/**
 * The release artifacts (scripts/build.sh): reproducible to the byte, checksummed, and runnable as they will be
 * installed — as an unprivileged user with no environment, from read-only directories.
 *
 * Builds twice (in parallel, about a minute on two cores) into temporary directories; `deno compile` is left out
 * (`--no-compile`): it needs Deno's download site.
 */
import assert from "node:assert/strict";
import { VERSION } from "../lib/version.ts";
import { freePort } from "./support/control_plane.ts";
import { TEST_TOKEN } from "./support/simulator.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const NONROOT = ["--reuid=65532", "--regid=65532", "--clear-groups"];
const ARTIFACTS = [
  `ankra-cloud-ccm-${VERSION}-linux-amd64.tar.gz`,
  `ankra-cloud-ccm-${VERSION}-linux-arm64.tar.gz`,
  `ankra-cloud-simulator-${VERSION}-linux-amd64.tar.gz`,
  `ankra-cloud-simulator-${VERSION}-linux-arm64.tar.gz`,
];

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

async function build(out: string): Promise<{ seconds: number; log: string }> {
  const started = performance.now();
  const result = await run("bash", ["scripts/build.sh", "--no-compile", "--out", out]);
  assert.equal(result.code, 0, `scripts/build.sh failed:\n${result.stdout}${result.stderr}`);
  return { seconds: (performance.now() - started) / 1000, log: result.stdout + result.stderr };
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
    const [first, second] = await Promise.all([build(`${dir}/first`), build(`${dir}/second`)]);
    console.log(`release builds: ${first.seconds.toFixed(1)} s and ${second.seconds.toFixed(1)} s (in parallel)`);

    await t.step("building twice gives the same SHA256SUMS, naming every artifact", async () => {
      const sums = await Deno.readTextFile(`${dir}/first/SHA256SUMS`);
      assert.equal(await Deno.readTextFile(`${dir}/second/SHA256SUMS`), sums);
      const named = sums.trim().split("\n").map((line) => line.split(/\s+/)[1]);
      assert.deepEqual(named, [...ARTIFACTS].sort());
      assert.match(first.log, /bundle on the Deno [0-9.]+ runtime from npm/, "the build says which path made what");
    });

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
