/**
 * How an `http` frontend reads a connection's requests: heads parsed wherever the bytes split, bodies of both
 * framings passed through unchanged, tunnels after an upgrade, malformed or oversized heads refused, and the head
 * the member receives with the forwarding headers.
 */
import assert from "node:assert/strict";
import {
  forwardedHead,
  MAX_HEAD_BYTES,
  type RequestPiece,
  RequestStream,
} from "../../../simulator/data_plane/http_request_stream.ts";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const bytes = (s: string) => new TextEncoder().encode(s);

/** Feeds `input` in pieces of `size` bytes; the heads' targets and the data passed, in order. */
function feed(input: string, size: number): { heads: string[]; data: string; errors: string[] } {
  const stream = new RequestStream();
  const all: RequestPiece[] = [];
  const raw = bytes(input);
  for (let i = 0; i < raw.length; i += size) all.push(...stream.push(raw.slice(i, i + size)));
  const heads = all.flatMap((p) => (p.kind === "head" ? [`${p.head.method} ${p.head.target}`] : []));
  const data = all.flatMap((p) => (p.kind === "data" ? [text(p.bytes)] : [])).join("");
  const errors = all.flatMap((p) => (p.kind === "error" ? [p.detail] : []));
  return { heads, data, errors };
}

const PIPELINE = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n" +
  "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" +
  "\r\nPUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n\r\n3;ext=1\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nX-T: 1\r\n\r\n" +
  "GET /d HTTP/1.0\r\n\r\n";

Deno.test("pipelined requests of both framings are found wherever the bytes split", () => {
  for (const size of [1, 2, 3, 7, 16, 1000]) {
    const { heads, data, errors } = feed(PIPELINE, size);
    assert.deepEqual(heads, ["GET /a", "POST /b", "PUT /c", "GET /d"], `split every ${size} bytes`);
    assert.equal(data, "hello" + "3;ext=1\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nX-T: 1\r\n\r\n", `split ${size}`);
    assert.deepEqual(errors, []);
  }
});

Deno.test("Transfer-Encoding wins over Content-Length, which the member does not receive", () => {
  const stream = new RequestStream();
  const [head] = stream.push(bytes("PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n\r\n"));
  assert.equal(head.kind, "head");
  if (head.kind !== "head") return;
  assert.deepEqual(head.head.headers, [["Transfer-Encoding", "chunked"]]);
});

Deno.test("after an Upgrade request everything is a tunnel", () => {
  const { heads, data } = feed(
    "GET /ws HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\nGET /not-a-request HTTP/1.1\r\n\r\n",
    5,
  );
  assert.deepEqual(heads, ["GET /ws"]);
  assert.equal(data, "GET /not-a-request HTTP/1.1\r\n\r\n");
});

Deno.test("a malformed or oversized head is an error, and nothing follows it", () => {
  for (
    const [input, detail] of [
      ["BAD\r\n\r\n", /bad request line/],
      ["GET / HTTP/1.1\r\nno colon here\r\n\r\n", /bad header line/],
      ["POST / HTTP/1.1\r\nContent-Length: 1, 2\r\n\r\n", /bad Content-Length/],
      ["POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", /must end with chunked/],
      ["POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", /bad chunk size/],
      [`GET / HTTP/1.1\r\nX: ${"y".repeat(MAX_HEAD_BYTES)}`, /larger than 32 KiB/],
    ] as const
  ) {
    const { errors, heads } = feed(input + "GET /after HTTP/1.1\r\n\r\n", 4096);
    assert.equal(errors.length, 1, input.slice(0, 30));
    assert.match(errors[0], detail);
    assert.ok(!heads.includes("GET /after"), "nothing is read after the error");
  }
});

Deno.test("the member's head: X-Forwarded-For appended, X-Forwarded-Proto replaced, the rest as sent", () => {
  const stream = new RequestStream();
  const [piece] = stream.push(bytes(
    "GET /p?q=1 HTTP/1.1\r\nHost: example.com\r\nX-Forwarded-For: 198.51.100.7\r\nX-Forwarded-Proto: https\r\n\r\n",
  ));
  assert.equal(piece.kind, "head");
  if (piece.kind !== "head") return;
  assert.equal(
    text(forwardedHead(piece.head, { client: "127.0.0.1", proto: "http" })),
    "GET /p?q=1 HTTP/1.1\r\nHost: example.com\r\nX-Forwarded-For: 198.51.100.7\r\nX-Forwarded-For: 127.0.0.1\r\n" +
      "X-Forwarded-Proto: http\r\n\r\n",
  );
});
