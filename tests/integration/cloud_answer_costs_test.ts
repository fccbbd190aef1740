/**
 * What a huge Ankra Cloud answer and a long `Retry-After` cost the controller, measured in a separate process with the
 * real client (tests/support/cloud/cloud_probe.ts): a body is read up to 8 MiB and the process grows by under 20 MiB,
 * and a pause lasts at most 5 minutes with the parked callers neither sending nor spinning. The answers come from a
 * small server on 127.0.0.1 and from the simulator. The bounds that need no process are in
 * tests/unit/cloud/bounded_answers_test.ts.
 */
import assert from "node:assert/strict";
import { MAX_RETRY_AFTER_MS } from "../../lib/retry_after.ts";
import { startTestCloud, TEST_TOKEN } from "../support/cloud/simulator.ts";
import type { ProbeResult } from "../support/cloud/cloud_probe.ts";

const PROBE = new URL("../support/cloud/cloud_probe.ts", import.meta.url).pathname;
const MIB = 1024 * 1024;

/** Serves `handler` on a free 127.0.0.1 port until the returned server is disposed. */
function localApi(handler: (request: Request) => Response): Deno.HttpServer<Deno.NetAddr> & { url: string } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
  return Object.assign(server, { url: `http://127.0.0.1:${server.addr.port}` });
}

/** A body of `bytes` bytes of a JSON document, produced as it is read (the server holds one 64 KiB chunk). */
function hugeJson(bytes: number, produced: { bytes: number }): ReadableStream<Uint8Array> {
  const chunk = new TextEncoder().encode(" ".repeat(64 * 1024));
  const open = new TextEncoder().encode('{"server":{"id":"srv-1","padding":"');
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      const next = sent === 0 ? open : chunk;
      if (sent >= bytes) return controller.close();
      controller.enqueue(next);
      sent += next.byteLength;
      produced.bytes = sent;
    },
  });
}

async function probe(mode: "answer" | "retry-after", apiUrl: string, token = TEST_TOKEN) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", PROBE, mode, apiUrl, token],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, stderr);
  return { result: JSON.parse(stdout.trim().split("\n").at(-1)!) as ProbeResult, stderr };
}

Deno.test("a 50 MiB answer is refused as too large after the first 8 MiB, and the process grows by under 20 MiB", async () => {
  const produced = { bytes: 0 };
  await using api = localApi((request) =>
    request.url.endsWith("/warm-up")
      ? Response.json({ type: "about:blank", title: "Not Found", status: 404 }, { status: 404 })
      : new Response(hugeJson(50 * MIB, produced), { headers: { "content-type": "application/json" } })
  );
  const { result } = await probe("answer", api.url);
  assert.equal(result.kind, "invalid_answer");
  assert.match(result.message!, /^get_server: .*answer too large: more than the limit of 8388608 bytes/);
  assert.ok(result.growthMiB! < 20, `resident memory grew by ${result.growthMiB} MiB`);
  assert.ok(produced.bytes < 50 * MIB, `the server produced ${produced.bytes} bytes: the rest was not read`);
});

Deno.test("Retry-After: 99999999 pauses the calls for at most 5 minutes, and the parked callers neither send nor spin", async () => {
  await using cloud = await startTestCloud();
  cloud.simulator.sim.faults.add({ operation: "list_servers", status: 429, retry_after: 99_999_999, times: 1 });
  const { result, stderr } = await probe("retry-after", cloud.simulator.url);
  assert.equal(result.kind, "rate_limited");
  assert.ok(result.retryAfterMs! <= MAX_RETRY_AFTER_MS, `asked to wait ${result.retryAfterMs} ms`);
  assert.ok(
    result.pausedForMs! > MAX_RETRY_AFTER_MS - 60_000 && result.pausedForMs! <= MAX_RETRY_AFTER_MS,
    `the budget pauses for ${result.pausedForMs} ms`,
  );
  assert.equal(result.parked, 5, "the other callers wait for the pause");
  const calls = cloud.simulator.sim.log.filter((entry) => entry.operation === "list_servers").length;
  assert.equal(calls, 1, "nothing was sent during the pause");
  assert.ok(
    result.windowCpuSeconds! < 0.5 * result.windowSeconds!,
    `the process used ${result.windowCpuSeconds} s of CPU in ${result.windowSeconds} s while its callers waited`,
  );
  assert.doesNotMatch(stderr, /TimeoutOverflowWarning/);
});
