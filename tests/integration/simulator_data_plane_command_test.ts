/**
 * The simulator program's `--data-plane` flag and its warning when the control API listens beyond loopback.
 */
import assert from "node:assert/strict";

const SIMULATOR = new URL("../../simulator/main.ts", import.meta.url).pathname;
const TOKEN = "act_ZGF0YS1wbGFuZS1jb21tYW5kLXRlc3QtdG9rZW4";

/** Starts the program, reads standard output until it listens, stops it; its output and exit code. */
async function startAndStop(args: string[], whileRunning?: (url: string) => Promise<void>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", SIMULATOR, "--token-from-env", ...args],
    env: { ANKRA_CLOUD_TOKEN: TOKEN },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let stdout = "";
  while (!/listening on \S+ \(control API/.test(stdout)) {
    const { value, done } = await reader.read();
    if (done) break;
    stdout += value;
  }
  const url = /listening on (http:\/\/\S+) /.exec(stdout)?.[1];
  if (url) {
    // Every line printed at start is out once the first request is answered.
    await (await fetch(`${url.replace("0.0.0.0", "127.0.0.1")}/_simulator/counters`)).body?.cancel();
    await whileRunning?.(url.replace("0.0.0.0", "127.0.0.1"));
    child.kill("SIGTERM");
  }
  for (let next = await reader.read(); !next.done; next = await reader.read()) stdout += next.value;
  return { code: (await child.status).code, stdout, stderr: await stderr };
}

Deno.test("listening beyond loopback prints one warning about the control API; loopback prints none", async () => {
  const open = await startAndStop(["--listen=0.0.0.0:0"]);
  assert.equal(open.code, 0, open.stderr);
  const warnings = open.stderr.split("\n").filter((line) => line.includes("beyond loopback"));
  assert.equal(warnings.length, 1, open.stderr);
  assert.match(
    warnings[0],
    /^ankra-cloud-simulator: warning: listening on 0\.0\.0\.0, beyond loopback: the control API/,
  );
  const closed = await startAndStop(["--listen=127.0.0.1:0"]);
  assert.equal(closed.code, 0, closed.stderr);
  assert.doesNotMatch(closed.stderr, /beyond loopback/);
});

Deno.test("--data-plane=loopback serves the data plane and allows a seeded network inside 127.0.0.0/8", async () => {
  const seed = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(
    seed,
    JSON.stringify({
      zones: [{ name: "de-fsn1", region: "eu-central" }],
      networks: [{ id: "net-lo", name: "lo", zone: "de-fsn1", cidr: "127.77.0.0/16", ula_prefix: "fd64:7:0:1::/64" }],
      settings: { loopback_ipv4_range: "127.77.113.0/24" },
    }),
  );
  try {
    const run = await startAndStop(["--listen=127.0.0.1:0", `--seed=${seed}`, "--data-plane=loopback"], async (url) => {
      const state = await (await fetch(`${url}/_simulator/state`)).json();
      assert.deepEqual(state.data_plane, { mode: "loopback", listeners: [] });
      assert.equal(state.networks[0].cidr, "127.77.0.0/16");
    });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /data plane: loopback \(public IPv4 from 127\.77\.113\.0\/24/);
    const without = await startAndStop(["--listen=127.0.0.1:0", `--seed=${seed}`]);
    assert.equal(without.code, 2);
    assert.match(without.stderr, /network net-lo: cidr must be an RFC 1918 IPv4 prefix/);
  } finally {
    await Deno.remove(seed);
  }
});

Deno.test("--data-plane with an unknown mode exits 2 naming the modes", async () => {
  const bogus = await startAndStop(["--listen=127.0.0.1:0", "--data-plane=bogus"]);
  assert.equal(bogus.code, 2);
  assert.match(bogus.stderr, /--data-plane must be one of off, loopback, netns, not "bogus"/);
});
