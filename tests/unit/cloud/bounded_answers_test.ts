/**
 * What an Ankra Cloud answer can cost the controller, whatever the API (or whoever answers in its place) sends: an
 * announced body above 8 MiB is refused unread, a page holds at most the items asked for, and a small body that would
 * parse into millions of values is refused unparsed; the answers come from a small server on 127.0.0.1, in this
 * process. The memory and CPU time a huge body or a long `Retry-After` costs are measured in a process of their own:
 * tests/integration/cloud_answer_costs_test.ts.
 */
import assert from "node:assert/strict";
import { ANSWER_LIMIT_BYTES } from "../../../lib/cloud/answer_bounds.ts";
import { CloudApiError } from "../../../lib/cloud/errors.ts";
import { PAGE_LIMIT } from "../../../lib/cloud/cloud_api.ts";
import { TEST_TOKEN } from "../../support/cloud/simulator.ts";
import { AnkraCloudClient } from "../../../lib/cloud/client.ts";

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
