/**
 * The simulator as its own program (`simulator/main.ts`, `deno task simulator`).
 */
import assert from "node:assert/strict";

const SIMULATOR = new URL("../../simulator/main.ts", import.meta.url).pathname;
const TOKEN = "act_c2ltdWxhdG9yLXByb2dyYW0tdGVzdC10b2tlbg";

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", SIMULATOR, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: output.code,
    stdout: new TextDecoder().decode(output.stdout),
    stderr: new TextDecoder().decode(output.stderr),
  };
}

Deno.test("the simulator program serves the API on the given address and stops on SIGTERM", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", SIMULATOR, "--listen=127.0.0.1:0", "--token-from-env"],
    env: { ANKRA_CLOUD_TOKEN: TOKEN },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!/listening on (http:\/\/\S+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  const url = /listening on (http:\/\/\S+)/.exec(text)?.[1];
  assert.ok(url, text);
  const zones = await fetch(`${url}/v1/zones`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(zones.status, 200);
  assert.deepEqual((await zones.json()).items.map((z: { name: string }) => z.name), ["de-fsn1"]);
  const anonymous = await fetch(`${url}/v1/zones`);
  assert.equal(anonymous.status, 401);
  await anonymous.body?.cancel();
  child.kill("SIGTERM");
  await reader.cancel();
  const status = await child.status;
  const stderr = new TextDecoder().decode((await new Response(child.stderr).arrayBuffer()) as ArrayBuffer);
  assert.equal(status.code, 0);
  assert.ok(!text.includes(TOKEN) && !stderr.includes(TOKEN));
});

Deno.test("the simulator program refuses a bad seed file with the field named", async () => {
  const seed = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(seed, JSON.stringify({ zones: [{ name: "Bad Zone", region: "x" }] }));
  const result = await run([`--seed=${seed}`, "--listen=127.0.0.1:0"]);
  await Deno.remove(seed);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /seed: field zones\.0\.name/);
});
