/**
 * The binary's command line, run as a user runs it: exit codes, one-line errors, help, version, and the token kept
 * out of every output.
 */
import assert from "node:assert/strict";
import { VERSION } from "../../lib/version.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const TOKEN = "act_dGhpcy1pcy1hLXNlY3JldC10b2tlbi1mb3ItY2xp";

async function run(args: string[], env: Record<string, string> = {}) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, ...args],
    env: { ANKRA_CLOUD_TOKEN: "", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

Deno.test("--version prints `ankra-cloud-ccm <version>` and exits 0", async () => {
  const result = await run(["--version"]);
  assert.equal(result.code, 0);
  assert.equal(result.stdout, `ankra-cloud-ccm ${VERSION}\n`);
});

Deno.test("--help exits 0 and lists flags and environment variables", async () => {
  const result = await run(["--help"]);
  assert.equal(result.code, 0);
  assert.match(result.stdout, /--cloud-provider/);
  assert.match(result.stdout, /ANKRA_CLOUD_TOKEN/);
});

Deno.test("a bad setting exits 2 with one line naming it", async () => {
  const result = await run(["--cloud-provider=aws"], { ANKRA_CLOUD_TOKEN: TOKEN });
  assert.equal(result.code, 2);
  assert.equal(result.stdout, "");
  assert.equal(result.stderr.trim().split("\n").length, 1);
  assert.match(result.stderr, /^ankra-cloud-ccm: --cloud-provider must be ankracloud, not "aws"/);
});

Deno.test("a missing token exits 2 naming ANKRA_CLOUD_TOKEN", async () => {
  const result = await run([]);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /ANKRA_CLOUD_TOKEN is not set/);
});

Deno.test("the token appears in no output, whatever goes wrong", async () => {
  const outputs = [
    await run(["--version"], { ANKRA_CLOUD_TOKEN: TOKEN }),
    await run(["--bogus=" + TOKEN], { ANKRA_CLOUD_TOKEN: TOKEN }),
    await run([], { ANKRA_CLOUD_TOKEN: TOKEN, ANKRA_CLOUD_API_URL: TOKEN }),
    await run([], { ANKRA_CLOUD_TOKEN: TOKEN, ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY: TOKEN }),
  ];
  for (const { stdout, stderr } of outputs) {
    assert.ok(!stdout.includes(TOKEN) && !stderr.includes(TOKEN), stderr);
  }
});

Deno.test("a start-up failure exits 1 cleanly even when nobody reads the output", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, "--kubeconfig=/nonexistent/kubeconfig"],
    env: { ANKRA_CLOUD_TOKEN: TOKEN },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  await child.stdout.cancel();
  await child.stderr.cancel();
  const status = await child.status;
  assert.equal(status.code, 1, "an unreadable kubeconfig fails cleanly, output closed or not");
});
