/**
 * The fast tier's promise is kept by the runtime, not by reading its files: a test run with its permissions
 * (scripts/run_unit_tests.ts) that starts a process, loads native code or listens beyond loopback is refused with
 * `NotCapable`, while loopback stays open (the in-process simulator and fake API servers need it). The probe only
 * listens: nothing is sent anywhere.
 */
import assert from "node:assert/strict";
import { unitTestArgs } from "../../scripts/run_unit_tests.ts";

const PROBE = `
import assert from "node:assert/strict";
Deno.test("starting a process is refused", () => {
  assert.throws(() => new Deno.Command("true").spawn(), Deno.errors.NotCapable);
});
Deno.test("loading native code is refused", () => {
  assert.throws(() => Deno.dlopen("libc.so.6", {}), Deno.errors.NotCapable);
});
Deno.test("listening beyond loopback is refused", () => {
  assert.throws(() => Deno.listen({ hostname: "0.0.0.0", port: 0 }), Deno.errors.NotCapable);
});
Deno.test("loopback is open", () => {
  Deno.listen({ hostname: "127.0.0.1", port: 0 }).close();
});
`;

Deno.test("the fast tier's permissions refuse processes, native code and the network beyond loopback", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ccm-fast-tier-probe-" });
  try {
    await Deno.writeTextFile(`${dir}/probe_test.ts`, PROBE);
    // The fast tier's own arguments, with the probe in place of tests/unit/.
    const args = unitTestArgs(`${dir}/junit.xml`).filter((a) => a !== "tests/unit/").concat(`${dir}/probe_test.ts`);
    const output = await new Deno.Command(Deno.execPath(), { args, stdout: "piped", stderr: "piped" }).output();
    const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, text);
    assert.match(text, /4 passed/, text);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
