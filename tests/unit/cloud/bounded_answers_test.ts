/**
 * What an Ankra Cloud answer can cost the controller, whatever the API (or whoever answers in its place) sends: a
 * body is read up to 8 MiB, a page holds at most the items asked for, and `Retry-After` pauses the calls for at most
 * 5 minutes without spinning. The memory and the CPU time are measured in a separate process with the real client
 * (tests/unit/cloud/cloud_probe.ts); the answers come from a small server on 127.0.0.1 and from the simulator.
 */
import assert from "node:assert/strict";
import { ANSWER_LIMIT_BYTES, MAX_RETRY_AFTER_MS } from "../../../lib/cloud/answer_bounds.ts";
import { CloudApiError } from "../../../lib/cloud/errors.ts";
import { PAGE_LIMIT } from "../../../lib/cloud/cloud_api.ts";
import { startTestCloud, TEST_TOKEN } from "../../support/simulator.ts";
import { AnkraCloudClient } from "../../../lib/cloud/client.ts";
import type { ProbeResult } from "./cloud_probe.ts";

const PROBE = new URL("./cloud_probe.ts", import.meta.url).pathname;
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

Deno.test("an answer whose Content-Length is above the limit is refused before its body is read", async () => {
  const produced = { bytes: 0 };
  await using api = localApi(() =>
    new Response(hugeJson(50 * MIB, produced), {
      headers: { "content-type": "application/json", "content-length": String(50 * MIB) },
    })
  );
  const client = new AnkraCloudClient({ apiUrl: api.url, token: TEST_TOKEN }, { retry: { maxAttempts: 1 } });
  try {
    const error = await client.getServer("srv-1").then(() => undefined, (cause) => cause);
    assert.ok(error instanceof CloudApiError && error.kind === "invalid_answer", String(error));
    assert.match(error.message, /answer too large: Content-Length 52428800 bytes is more than the limit of 8388608/);
    assert.ok(produced.bytes < ANSWER_LIMIT_BYTES, `${produced.bytes} bytes were produced`);
  } finally {
    client.close();
  }
});

Deno.test("a list page with more items than asked for is refused, not read into the cache", async () => {
  let asked = "";
  await using api = localApi((request) => {
    asked = new URL(request.url).searchParams.get("limit") ?? "";
    const items = Array.from({ length: PAGE_LIMIT + 1 }, (_, i) => ({ id: `srv-${i}` }));
    return Response.json({ items, next_cursor: null });
  });
  const client = new AnkraCloudClient({ apiUrl: api.url, token: TEST_TOKEN }, { retry: { maxAttempts: 1 } });
  try {
    const error = await client.listServers().then(() => undefined, (cause) => cause);
    assert.equal(asked, String(PAGE_LIMIT));
    assert.ok(error instanceof CloudApiError && error.kind === "invalid_answer", String(error));
    assert.match(error.message, /list_servers: .* a page of 101 items, more than the 100 asked for/);
  } finally {
    client.close();
  }
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

Deno.test("a small answer that would parse into millions of values is refused unparsed", async () => {
  // 8 MiB of `{},` is 2.8 million objects: about 250 MiB once parsed.
  const items = "{},".repeat(Math.floor((ANSWER_LIMIT_BYTES - 100) / 3)) + "{}";
  await using api = localApi(() =>
    new Response(`{"items":[${items}],"next_cursor":null}`, { headers: { "content-type": "application/json" } })
  );
  const client = new AnkraCloudClient({ apiUrl: api.url, token: TEST_TOKEN }, { retry: { maxAttempts: 1 } });
  try {
    const error = await client.listServers().then(() => undefined, (cause) => cause);
    assert.ok(error instanceof CloudApiError && error.kind === "invalid_answer", String(error));
    assert.match(error.message, /answer too large: more than 200000 JSON values/);
  } finally {
    client.close();
  }
});
