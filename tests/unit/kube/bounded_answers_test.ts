/**
 * What a Kubernetes API answer can cost the client, whatever the server sends: an answer read whole is at most
 * 32 MiB, a streamed list page holds at most the items asked for and each item at most 8 Mi characters, a watch
 * event line likewise, a watch that falls silent past its timeout is ended, and `Retry-After` counts for at most
 * 5 minutes. The answers come from a small HTTPS server on 127.0.0.1, through the real client.
 */
import assert from "node:assert/strict";
import { KubeClient } from "../../../lib/kube/client.ts";
import { ANSWER_LIMIT_BYTES } from "../../../lib/kube/answer_limits.ts";
import { errorFromAnswer, KubeApiError } from "../../../lib/kube/errors.ts";
import { MAX_RETRY_AFTER_MS } from "../../../lib/retry_after.ts";
import { selfSignedServingCertificate } from "../../../lib/server/self_signed_certificate.ts";

const MIB = 1024 * 1024;
const tls = await selfSignedServingCertificate("localhost");

/** An HTTPS API server on 127.0.0.1 answering with `handler`, and a client of it. */
function localKube(handler: (request: Request) => Response, options: { watchIdleGraceMs?: number } = {}) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, cert: tls.cert, key: tls.key, onListen() {} }, handler);
  const client = new KubeClient({
    server: `https://127.0.0.1:${server.addr.port}`,
    caCerts: [tls.ca],
    auth: { kind: "none" },
    source: "test",
  }, { watchIdleGraceMs: options.watchIdleGraceMs });
  return {
    client,
    async [Symbol.asyncDispose]() {
      client.close();
      await server.shutdown();
    },
  };
}

/** `bytes` bytes of text made while it is read (64 KiB at a time), after `prefix`. */
function streamed(prefix: string, bytes: number, filler = " "): ReadableStream<Uint8Array> {
  const chunk = new TextEncoder().encode(filler.repeat(64 * 1024));
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent === 0) controller.enqueue(new TextEncoder().encode(prefix));
      else if (sent >= bytes) return controller.close();
      else controller.enqueue(chunk);
      sent += sent === 0 ? prefix.length : chunk.byteLength;
    },
  });
}

async function failure(promise: Promise<unknown>): Promise<KubeApiError> {
  const error = await promise.then(() => undefined, (cause) => cause);
  assert.ok(error instanceof KubeApiError, `expected a KubeApiError, got ${error}`);
  return error;
}

Deno.test("an answer larger than 32 MiB is refused as invalid_answer, naming the request", async () => {
  await using kube = localKube(() => new Response(streamed('{"kind":"Node","padding":"', ANSWER_LIMIT_BYTES + MIB)));
  const error = await failure(kube.client.get("/api/v1/nodes/big"));
  assert.equal(error.kind, "invalid_answer");
  assert.match(error.message, /^GET \/api\/v1\/nodes\/big: answer too large: more than the limit of 33554432 bytes/);
});

Deno.test("a streamed list page with more items than its limit is refused after the limit", async () => {
  const seen: unknown[] = [];
  await using kube = localKube(() =>
    Response.json({ kind: "NodeList", metadata: { resourceVersion: "7" }, items: [{ a: 1 }, { a: 2 }, { a: 3 }] })
  );
  const error = await failure(kube.client.listEach("/api/v1/nodes", { limit: 2 }, (item) => seen.push(item)));
  assert.equal(error.kind, "invalid_answer");
  assert.match(error.message, /a page of more than the 2 items asked for/);
  assert.equal(seen.length, 2);
});

Deno.test("a streamed list item larger than 8 Mi characters is refused without reading the rest", async () => {
  await using kube = localKube(() =>
    new Response(streamed('{"kind":"NodeList","metadata":{"resourceVersion":"7"},"items":[{"a":"', 40 * MIB, "x"))
  );
  const error = await failure(kube.client.listEach("/api/v1/nodes", {}, () => {}));
  assert.equal(error.kind, "invalid_answer");
  assert.match(error.message, /item 1 is larger than 8388608 characters/);
});

Deno.test("a watch event line larger than 8 Mi characters ends the watch as invalid_answer", async () => {
  await using kube = localKube(() => new Response(streamed('{"type":"ADDED","object":{"a":"', 40 * MIB, "x")));
  const events = kube.client.watch("/api/v1/nodes", { resourceVersion: "1" });
  const error = await failure((async () => {
    for await (const _ of events) { /* none arrives */ }
  })());
  assert.equal(error.kind, "invalid_answer");
  assert.match(error.message, /^WATCH \/api\/v1\/nodes: an event is larger than 8388608 characters/);
});

Deno.test("a watch that sends nothing past its timeout ends instead of hanging on a dead connection", async () => {
  await using kube = localKube(() => new Response(new ReadableStream({ start() {/* never a byte */} })), {
    watchIdleGraceMs: 200,
  });
  const started = performance.now();
  let events = 0;
  try {
    for await (const _ of kube.client.watch("/api/v1/nodes", { resourceVersion: "1", timeoutSeconds: 1 })) events++;
  } catch (cause) {
    assert.ok(cause instanceof KubeApiError && cause.kind === "network", String(cause));
  }
  const seconds = (performance.now() - started) / 1000;
  assert.equal(events, 0);
  assert.ok(seconds >= 1 && seconds < 10, `ended after ${seconds.toFixed(1)} s (timeout 1 s + 0.2 s)`);
});

Deno.test("Retry-After counts for at most 5 minutes", () => {
  const answer = new Response(null, { status: 429, headers: { "retry-after": "99999999" } });
  assert.equal(errorFromAnswer("GET", "/api/v1/nodes", answer, "").retryAfterMs, MAX_RETRY_AFTER_MS);
  const short = new Response(null, { status: 429, headers: { "retry-after": "2" } });
  assert.equal(errorFromAnswer("GET", "/api/v1/nodes", short, "").retryAfterMs, 2_000);
});
