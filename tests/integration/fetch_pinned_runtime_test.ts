/**
 * scripts/image/fetch_pinned_runtime.ts, the Containerfile's runtime step, run as the Containerfile runs it (its own
 * `deno run` with only the network of the registry, reading the pins, writing the output directory): from this
 * machine's npm registry (`npm config get registry`; about 42 MB, usually from a nearby cache), it writes the pinned
 * binary; with a pins file whose integrity is not the registry's, it writes nothing and names both digests. The tar
 * reader is checked on archives made here.
 */
import assert from "node:assert/strict";
import { readRuntimePins, runtimePinFor } from "../../scripts/deno_runtime_pins.ts";
import { fileDigest } from "../../scripts/file_digests.ts";
import { DEFAULT_REGISTRY, npmTarballUrl } from "../../scripts/image/fetch_pinned_runtime.ts";
import { tarEntry } from "../../scripts/image/tar_entry.ts";

const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const SCRIPT = `${ROOT}/scripts/image/fetch_pinned_runtime.ts`;

async function npmRegistry(): Promise<string> {
  try {
    const output = await new Deno.Command("npm", { args: ["config", "get", "registry"], stdout: "piped" }).output();
    const registry = new TextDecoder().decode(output.stdout).trim();
    return output.success && registry ? registry : DEFAULT_REGISTRY;
  } catch {
    return DEFAULT_REGISTRY;
  }
}

/** Runs the script with the Containerfile's permissions; returns its exit code and output. */
async function fetchRuntime(registry: string, pins: string, out: string) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      `--allow-net=${new URL(registry).host}`,
      `--allow-read=${pins}`,
      `--allow-write=${out}`,
      "--no-prompt",
      SCRIPT,
      "--architecture=amd64",
      `--registry=${registry}`,
      `--out=${out}`,
      `--pins=${pins}`,
    ],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, text: decoder.decode(output.stdout) + decoder.decode(output.stderr) };
}

Deno.test("the runtime step writes the pinned amd64 binary, and nothing when the pins disagree", async () => {
  const registry = await npmRegistry();
  const dir = await Deno.makeTempDir({ prefix: "ccm-fetch-runtime-" });
  try {
    const pin = runtimePinFor(readRuntimePins(), "amd64");
    const pins = `${dir}/deno_runtime.pins`;
    await Deno.copyFile(`${ROOT}/scripts/deno_runtime.pins`, pins);
    const fetched = await fetchRuntime(registry, pins, `${dir}/good`);
    assert.equal(fetched.code, 0, fetched.text);
    assert.equal(await fileDigest(`${dir}/good/deno`, "sha256"), pin.binarySha256);
    assert.equal((await Deno.stat(`${dir}/good/deno`)).mode! & 0o777, 0o755);
    assert.ok(fetched.text.includes(`SHA-256 ${pin.binarySha256}`), fetched.text);

    // A pins file with another integrity for the package (one character of the digest changed).
    const changed = pin.integrity.slice(0, 20) + (pin.integrity[20] === "A" ? "B" : "A") + pin.integrity.slice(21);
    await Deno.writeTextFile(pins, (await Deno.readTextFile(pins)).replace(pin.integrity, changed));
    const refused = await fetchRuntime(registry, pins, `${dir}/bad`);
    assert.equal(refused.code, 1, refused.text);
    const url = npmTarballUrl(registry, pin.name, pin.version);
    assert.ok(refused.text.includes(`${url} (${pin.name} ${pin.version}) has npm integrity ${pin.integrity}`));
    assert.ok(refused.text.includes(`but ${pins} pins ${changed}`), refused.text);
    await assert.rejects(Deno.lstat(`${dir}/bad/deno`), Deno.errors.NotFound, "nothing was written");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("npm tarball URLs have the registry's layout, with or without a trailing slash", () => {
  assert.equal(
    npmTarballUrl("https://registry.npmjs.org/", "@deno/linux-arm64-glibc", "2.9.6"),
    "https://registry.npmjs.org/@deno/linux-arm64-glibc/-/linux-arm64-glibc-2.9.6.tgz",
  );
  assert.equal(
    npmTarballUrl("http://mirror:4873/npm", "deno", "2.9.6"),
    "http://mirror:4873/npm/deno/-/deno-2.9.6.tgz",
  );
});

Deno.test("the tar reader finds a file by its path, also under a long name, and only regular files", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ccm-tar-entry-" });
  try {
    // Over 100 characters: ustar splits it into prefix and name, GNU tar writes a long-name entry, pax a `path`.
    const long = `package/${"d".repeat(60)}/${"e".repeat(60)}/deno`;
    await Deno.mkdir(`${dir}/${long.slice(0, long.lastIndexOf("/"))}`, { recursive: true });
    await Deno.writeTextFile(`${dir}/${long}`, "long");
    await Deno.writeTextFile(`${dir}/package/deno`, "x".repeat(1000));
    await Deno.symlink("deno", `${dir}/package/link`);
    for (const format of ["gnu", "pax", "ustar"]) {
      const output = await new Deno.Command("tar", {
        args: [`--format=${format}`, "-cf", "-", "-C", dir, "package"],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
      assert.equal(new TextDecoder().decode(tarEntry(output.stdout, long)), "long", format);
      assert.equal(new TextDecoder().decode(tarEntry(output.stdout, "package/deno")), "x".repeat(1000), format);
      assert.equal(tarEntry(output.stdout, "package/link"), undefined, "a link is not a file");
      assert.equal(tarEntry(output.stdout, "package/missing"), undefined);
    }
    const one = await new Deno.Command("tar", { args: ["-cf", "-", "-C", dir, "package/deno"], stdout: "piped" })
      .output();
    assert.throws(() => tarEntry(one.stdout.subarray(0, 600), "package/deno"), /ends inside an entry: it is truncated/);
    const garbled = one.stdout.slice(0, 1024);
    garbled.set(new TextEncoder().encode("nine"), 124);
    assert.throws(() => tarEntry(garbled, "package/deno"), /whose size is not octal/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
