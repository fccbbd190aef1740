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

/** True while `pid` runs (a zombie waiting for its parent counts as gone). */
async function running(pid: number): Promise<boolean> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`).catch(() => "");
  return stat !== "" && !/^\d+ \(.*\) Z/.test(stat);
}

/** Starts the program with the loopback data plane and one running load balancer; its HAProxy master and worker. */
async function withHaproxy(seed: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", SIMULATOR, "--token-from-env", "--listen=127.0.0.1:0", `--seed=${seed}`],
    env: { ANKRA_CLOUD_TOKEN: TOKEN },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!/listening on (\S+) /.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the simulator ended: ${out}`);
    out += value;
  }
  (async () => {
    while (!(await reader.read()).done) { /* drained */ }
  })().catch(() => {});
  const url = /listening on (\S+) /.exec(out)![1];
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  const created = await fetch(`${url}/v1/load-balancers`, {
    method: "POST",
    headers,
    body: JSON.stringify({ zone: "de-fsn1", name: "owned", network_id: "net-lo", high_availability: false }),
  });
  const id = (await created.json()).load_balancer.id;
  let haproxy: { pid: number; master_socket: string } | undefined;
  for (let i = 0; i < 100 && !haproxy; i++) {
    const state = await (await fetch(`${url}/_simulator/state`)).json();
    haproxy = state.load_balancers.find((lb: { id: string }) => lb.id === id)?.haproxy ?? undefined;
    if (!haproxy) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.ok(haproxy, "the running load balancer has its HAProxy");
  const conn = await Deno.connect({ transport: "unix", path: haproxy.master_socket });
  await conn.write(new TextEncoder().encode("show proc\n"));
  await conn.closeWrite();
  const worker = Number(/# workers\n(\d+)/.exec(await new Response(conn.readable).text())![1]);
  assert.ok(await running(haproxy.pid) && await running(worker));
  return { child, pids: [haproxy.pid, worker] };
}

Deno.test("no HAProxy outlives the simulator: gone after SIGTERM, and within 5 s of a SIGKILL", async () => {
  const seed = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(
    seed,
    JSON.stringify({
      zones: [{ name: "de-fsn1", region: "eu-central" }],
      networks: [{ id: "net-lo", name: "lo", zone: "de-fsn1", cidr: "127.78.0.0/16", ula_prefix: "fd64:7:0:1::/64" }],
      settings: { data_plane: "loopback", loopback_ipv4_range: "127.78.113.0/24", load_balancer_create_delay_ms: 50 },
    }),
  );
  try {
    const terminated = await withHaproxy(seed);
    terminated.child.kill("SIGTERM");
    assert.equal((await terminated.child.status).code, 0);
    for (const pid of terminated.pids) assert.ok(!(await running(pid)), `HAProxy ${pid} ended with the simulator`);

    const killed = await withHaproxy(seed);
    killed.child.kill("SIGKILL");
    await killed.child.status;
    const at = performance.now();
    for (const pid of killed.pids) {
      while (await running(pid)) {
        assert.ok(performance.now() - at < 5_000, `HAProxy ${pid} still runs 5 s after the simulator was killed`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    console.log(
      `after SIGKILL, HAProxy's master and worker were gone within ${(performance.now() - at).toFixed(0)} ms`,
    );
  } finally {
    await Deno.remove(seed);
  }
});
