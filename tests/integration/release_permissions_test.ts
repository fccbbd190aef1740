/**
 * The shipped launcher's permissions: the release tarball (scripts/build.sh, built once per test run and shared) runs a
 * probe in place of the controller's bundle — same launcher, same runtime, same flags — and the probe may not spawn a
 * process, write a file, load a library, read a file outside the allowed places or read another variable, while it
 * may read the directory of the files its command line and environment name.
 */
import assert from "node:assert/strict";
import { launcherPermissionFlags, V8_FLAGS_ARGUMENT } from "../../lib/runtime_permissions.ts";
import { controllerTarball } from "../support/image/release_build.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

const PROBE = `
const kubeconfig = Deno.args[0].replace(/^--kubeconfig=/, "");
const [, elsewhere, writable] = Deno.args;
const tries = {
  spawnProcess: () => new Deno.Command("/bin/sh", { args: ["-c", "true"] }).outputSync(),
  writeFile: () => Deno.writeTextFileSync(writable + "/written-by-the-probe", "x"),
  loadLibrary: () => Deno.dlopen("libc.so.6", {}),
  readElsewhere: () => Deno.readTextFileSync(elsewhere),
  readOtherVariable: () => Deno.env.get("HOME"),
  readKubeconfig: () => Deno.readTextFileSync(kubeconfig),
  readTokenFile: () => Deno.readTextFileSync(Deno.env.get("ANKRA_CLOUD_TOKEN_FILE")),
  hostname: () => Deno.hostname(),
};
const result = {};
for (const [name, attempt] of Object.entries(tries)) {
  try { attempt(); result[name] = "allowed"; } catch (e) { result[name] = e.name; }
}
console.log(JSON.stringify(result));
`;

async function run(command: string, args: string[], env?: Record<string, string>) {
  const output = await new Deno.Command(command, {
    args,
    cwd: ROOT,
    env,
    clearEnv: env !== undefined,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

Deno.test("the released launcher refuses to spawn, write or load a library, and reads only what it is given", async () => {
  const work = await Deno.makeTempDir({ prefix: "release-permissions-" });
  try {
    const tarball = await controllerTarball();
    const base = tarball.directory;
    const extracted = await run("tar", ["-xzf", tarball.path, "-C", work]);
    assert.equal(extracted.code, 0, extracted.stderr);
    const launcher = `${work}/${base}/bin/ankra-cloud-ccm`;
    const text = await Deno.readTextFile(launcher);
    assert.ok(
      text.includes(` run ${launcherPermissionFlags()} ${V8_FLAGS_ARGUMENT} --cached-only `),
      "the launcher runs with the one permission list and the one list of V8 flags",
    );
    assert.doesNotMatch(text, /--allow-all|--allow-run|--allow-write|--allow-ffi|\s-A\s/);

    // The probe in place of the bundle: the launcher runs it exactly as it runs the controller.
    await Deno.writeTextFile(`${work}/${base}/lib/ankra-cloud-ccm/ankra-cloud-ccm.js`, PROBE);
    const config = `${work}/kube/config`;
    const token = `${work}/secret/token`;
    await Deno.mkdir(`${work}/kube`);
    await Deno.mkdir(`${work}/secret`);
    await Deno.mkdir(`${work}/elsewhere`);
    await Deno.mkdir(`${work}/writable`);
    await Deno.writeTextFile(config, "apiVersion: v1\n");
    await Deno.writeTextFile(token, "act_probe\n");
    await Deno.writeTextFile(`${work}/elsewhere/file`, "not for the controller\n");
    const probe = await run(launcher, [`--kubeconfig=${config}`, `${work}/elsewhere/file`, `${work}/writable`], {
      ANKRA_CLOUD_TOKEN_FILE: token,
      HOME: work,
    });
    assert.equal(probe.code, 0, probe.stderr);
    const result = JSON.parse(probe.stdout.trim().split("\n").at(-1)!);
    assert.deepEqual(result, {
      spawnProcess: "NotCapable",
      writeFile: "NotCapable",
      loadLibrary: "NotCapable",
      readElsewhere: "NotCapable",
      readOtherVariable: "NotCapable",
      readKubeconfig: "allowed",
      readTokenFile: "allowed",
      hostname: "allowed",
    });
    await assert.rejects(Deno.lstat(`${work}/writable/written-by-the-probe`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});
