/**
 * The pinned Deno runtime (scripts/deno_runtime.pins) and where it is checked: the shell checks of
 * scripts/deno_runtime.sh refuse a file with one flipped byte, naming both digests; scripts/deno.sh replaces an
 * install whose binary was changed, and installs with no package script run; the Containerfile names every base
 * image by digest, its Deno tag at the pinned version, and takes its runtime from the pinned npm package through
 * scripts/image/fetch_pinned_runtime.ts (tests/integration/fetch_pinned_runtime_test.ts runs that script).
 *
 * The scripts/deno.sh test installs into a temporary directory with `npm pack` from the machine's npm registry, as
 * every setup does (npm's cache usually holds the packages already).
 */
import assert from "node:assert/strict";
import { integrityHex, parseRuntimePins, readRuntimePins, runtimePinFor } from "../../scripts/deno_runtime_pins.ts";
import { fileDigest } from "../../scripts/file_digests.ts";
import { DENO_PATH } from "../../scripts/image/ccm_image.ts";

const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");

async function bash(script: string, env: Record<string, string> = {}): Promise<{ code: number; text: string }> {
  const output = await new Deno.Command("bash", {
    args: ["-c", script],
    cwd: ROOT,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, text: decoder.decode(output.stdout) + decoder.decode(output.stderr) };
}

async function flipByte(path: string, offset: number): Promise<void> {
  const bytes = await Deno.readFile(path);
  bytes[offset] ^= 0xff;
  await Deno.writeFile(path, bytes);
}

Deno.test("the pins name deno and both platform packages at one version, each platform with its binary's SHA-256", () => {
  const pins = readRuntimePins();
  assert.deepEqual(pins.map((p) => p.name), ["deno", "@deno/linux-x64-glibc", "@deno/linux-arm64-glibc"]);
  assert.deepEqual(new Set(pins.map((p) => p.version)), new Set(["2.9.6"]));
  assert.equal(runtimePinFor(pins, "amd64").name, "@deno/linux-x64-glibc");
  assert.equal(runtimePinFor(pins, "arm64").name, "@deno/linux-arm64-glibc");
  for (const pin of pins) assert.match(integrityHex(pin.integrity), /^[0-9a-f]{128}$/);
  assert.equal(pins[0].binarySha256, undefined, "the deno package carries no binary");
});

Deno.test("a pins line of another shape, a package named twice or two versions are refused, naming the problem", () => {
  const line = (name: string, version = "2.9.6") =>
    `${name} ${version} amd64 sha512-${"A".repeat(86)}== ${"a".repeat(64)}`;
  assert.throws(() => parseRuntimePins(`deno 2.9.6 - sha512-short -\n`), /line 1 is not "package version/);
  assert.throws(() => parseRuntimePins(`# c\n${line("x")}\n${line("x")}\n`), /names x twice/);
  assert.throws(() => parseRuntimePins(`${line("x")}\n${line("y", "2.9.7")}\n`), /mixes versions: 2\.9\.6, 2\.9\.7/);
  assert.throws(() => runtimePinFor(parseRuntimePins(`${line("x")}\n`), "arm64"), /no Deno binary for arm64/);
});

Deno.test("the shell checks refuse a file with one flipped byte and agree with the TypeScript digests", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ccm-pins-" });
  try {
    const tgz = `${dir}/fake.tgz`;
    const binary = `${dir}/deno`;
    await Deno.writeFile(tgz, crypto.getRandomValues(new Uint8Array(4096)));
    await Deno.writeFile(binary, crypto.getRandomValues(new Uint8Array(4096)));
    const integrity = (await bash(`source scripts/deno_runtime.sh && _npm_integrity_of ${tgz}`)).text;
    const sha256 = await fileDigest(binary, "sha256");
    assert.equal(integrityHex(integrity), await sha512Hex(tgz), "the SRI form of the shell is npm's");
    const pins = `${dir}/pins`;
    await Deno.writeTextFile(pins, `@deno/linux-x64-glibc 2.9.6 amd64 ${integrity} ${sha256}\n`);
    const env = { DENO_RUNTIME_PINS: pins, DENO_RUNTIME_CALLER: "test" };
    const check = `source scripts/deno_runtime.sh && check_npm_tarball @deno/linux-x64-glibc ${tgz} && ` +
      `check_runtime_binary @deno/linux-x64-glibc ${binary}`;
    assert.equal((await bash(check, env)).code, 0, "the pinned bytes pass");
    await flipByte(tgz, 2000);
    const badTgz = await bash(check, env);
    assert.equal(badTgz.code, 1);
    assert.match(
      badTgz.text,
      new RegExp(`^test: ${tgz} \\(@deno/linux-x64-glibc\\) has npm integrity sha512-\\S+, but`),
    );
    assert.ok(badTgz.text.includes(`pins ${integrity}`), badTgz.text);
    await flipByte(tgz, 2000);
    await flipByte(binary, 0);
    const badBinary = await bash(check, env);
    assert.equal(badBinary.code, 1);
    assert.match(badBinary.text, new RegExp(`has SHA-256 [0-9a-f]{64}, but scripts/deno_runtime.pins pins ${sha256}`));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

async function sha512Hex(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-512", await Deno.readFile(path));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("scripts/deno.sh installs the pinned binary with no package script run, and replaces a changed one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ccm-deno-install-" });
  try {
    const env = { DENO_INSTALL_CACHE: `${dir}/cache` };
    const first = await bash("bash scripts/deno.sh", env);
    assert.equal(first.code, 0, first.text);
    const bin = first.text.trim().split("\n").pop()!;
    assert.equal(bin, `${dir}/cache/node_modules/deno/deno`, "where scripts/env.sh expects it");
    const arch = Deno.build.arch === "x86_64" ? "amd64" : "arm64";
    const pinned = runtimePinFor(readRuntimePins(), arch).binarySha256;
    assert.equal(await fileDigest(bin, "sha256"), pinned);
    // npm would have made node_modules/.bin and run the deno package's install.cjs; neither happened.
    assert.ok(!(await exists(`${dir}/cache/node_modules/.bin`)), "no npm install ran");
    await flipByte(bin, 4096);
    const again = await bash("bash scripts/deno.sh", env);
    assert.equal(again.code, 0, again.text);
    assert.equal(await fileDigest(bin, "sha256"), pinned, "the changed binary was replaced by the pinned one");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("every FROM of the Containerfile names its base by digest, the Deno one at the pinned version", async () => {
  const containerfile = await Deno.readTextFile(`${ROOT}/Containerfile`);
  const version = containerfile.match(/^ARG DENO_VERSION=(\S+)$/m)?.[1];
  assert.equal(version, readRuntimePins()[0].version, "ARG DENO_VERSION is the pinned runtime's version");
  const froms = containerfile.split("\n").filter((line) => /^FROM\s/i.test(line));
  assert.equal(froms.length, 2, "the bundle and runtime stage, the final image");
  for (const from of froms) {
    const image = from.split(/\s+/).find((word, i, words) => i > 0 && !word.startsWith("--") && words[i - 1] !== "AS");
    assert.match(image ?? "", /^[a-z0-9./-]+(:[^@\s]+)?@sha256:[0-9a-f]{64}$/, `${from} names its image by digest`);
  }
  assert.match(
    froms[0],
    /^FROM --platform=\$BUILDPLATFORM docker\.io\/denoland\/deno:\$\{DENO_VERSION\}@\S+ AS bundle$/,
  );
  assert.doesNotMatch(containerfile, /denoland\/deno:bin-/, "the runtime does not come from Deno's bin image");
});

Deno.test("the Containerfile's runtime: the target's pinned npm package, checked, then copied", async () => {
  const containerfile = await Deno.readTextFile(`${ROOT}/Containerfile`);
  const lines = containerfile.replace(/\\\n/g, " ").split("\n").filter((line) => !line.startsWith("#"));
  assert.ok(lines.includes("ARG TARGETARCH"), "the target platform's architecture");
  assert.ok(lines.includes("ARG NPM_REGISTRY=https://registry.npmjs.org"), "npm's registry unless a mirror is named");
  const run = lines.find((line) => line.startsWith("RUN ") && line.includes(" scripts/image/fetch_pinned_runtime.ts "));
  assert.ok(run, "a RUN fetches the runtime");
  assert.match(run, /--architecture="\$TARGETARCH" --registry="\$NPM_REGISTRY" --out=\/out\/runtime(\s|$)/);
  assert.match(
    run,
    /deno run --allow-net="\$registry_host" --allow-read=scripts\/deno_runtime\.pins --allow-write=\/out\/runtime /,
  );
  assert.ok(lines.includes(`COPY --from=bundle /out/runtime/deno ${DENO_PATH}`), "only the checked binary is copied");
  // The stage runs on the build platform: the ARG and the fetch come after the bundle (shared by every platform),
  // and before the final image's FROM.
  const at = (predicate: (line: string) => boolean) => lines.findIndex(predicate);
  assert.ok(at((l) => l.includes("deno bundle")) < at((l) => l === "ARG TARGETARCH"));
  assert.ok(at((l) => l === run) < at((l) => l.startsWith("FROM gcr.io/")));

  // Every module the script loads is copied into the stage, with the pins.
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "scripts/image/fetch_pinned_runtime.ts"],
    cwd: ROOT,
    stdout: "piped",
  }).output();
  const modules = (JSON.parse(new TextDecoder().decode(info.stdout)).modules as { specifier: string }[])
    .map((m) => m.specifier)
    .filter((specifier) => specifier.startsWith("file:"))
    .map((specifier) => new URL(specifier).pathname.slice(ROOT.length + 1));
  assert.ok(modules.includes("scripts/deno_runtime_pins.ts"), modules.join(", "));
  const copied = lines.filter((line) => /^COPY (?!--from)/.test(line)).flatMap((line) => {
    const words = line.split(/\s+/).slice(1);
    const target = words.pop()!;
    return words.map((source) =>
      target.endsWith("/") ? `${target}${source.slice(source.lastIndexOf("/") + 1)}` : target
    );
  });
  for (const file of [...modules, "scripts/deno_runtime.pins"]) {
    assert.ok(copied.some((path) => file === path || file.startsWith(`${path}/`)), `${file} is copied`);
  }
});
