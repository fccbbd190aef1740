/**
 * The client side of an `http` frontend, read as HTTP/1.x requests one after another on a connection: each request's
 * head is parsed (so headers can be added), its body is passed through unchanged, framed by `Content-Length` or
 * chunked `Transfer-Encoding` (with `Transfer-Encoding` winning and `Content-Length` dropped, as RFC 9112 asks), and
 * after an `Upgrade` request or a `CONNECT` everything is a tunnel. A malformed head, or one over 32 KiB, is an error
 * the frontend answers with 400 before it closes.
 *
 * {@linkcode forwardedHead} renders a head for the member with `X-Forwarded-For` appended (earlier values kept, as
 * HAProxy's `option forwardfor` does) and `X-Forwarded-Proto` set. Pure: bytes in, pieces out.
 *
 * @module
 */

/** A parsed request head. */
export interface RequestHead {
  /** Method, e.g. `GET`. */
  method: string;
  /** Request target, e.g. `/path?x=1`. */
  target: string;
  /** `HTTP/1.1` or `HTTP/1.0`. */
  version: string;
  /** Header fields in order, names as sent. */
  headers: [string, string][];
}

/** What the stream yields: a head, bytes to pass on unchanged (body or tunnel), or an error to answer. */
export type RequestPiece =
  | { kind: "head"; head: RequestHead }
  | { kind: "data"; bytes: Uint8Array }
  | { kind: "error"; detail: string };

/** Most bytes of a request head. */
export const MAX_HEAD_BYTES = 32 * 1024;

type State =
  | { at: "head" }
  | { at: "length"; left: number }
  | { at: "chunk-size" }
  | { at: "chunk-data"; left: number }
  | { at: "chunk-end"; left: number }
  | { at: "trailers" }
  | { at: "tunnel" }
  | { at: "failed" };

const latin1 = new TextDecoder("latin1");
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The value of header `name` (case-insensitive; repeated fields joined with `, `), or undefined. */
export function headerValue(head: RequestHead, name: string): string | undefined {
  const lower = name.toLowerCase();
  const values = head.headers.filter(([n]) => n.toLowerCase() === lower).map(([, value]) => value);
  return values.length ? values.join(", ") : undefined;
}

/** Splits a connection's request bytes into heads and pass-through bytes. */
export class RequestStream {
  #state: State = { at: "head" };
  #buffer = new Uint8Array(0);

  /** The pieces `chunk` completes, in order. After an error nothing more is yielded. */
  push(chunk: Uint8Array): RequestPiece[] {
    const pieces: RequestPiece[] = [];
    const data = this.#buffer.length ? concat(this.#buffer, chunk) : chunk;
    this.#buffer = new Uint8Array(0);
    let start = 0;
    const emit = (end: number) => {
      if (end > start) pieces.push({ kind: "data", bytes: data.subarray(start, end) });
      start = end;
    };
    let i = 0;
    while (i < data.length) {
      const state = this.#state;
      if (state.at === "failed") return pieces;
      if (state.at === "tunnel") {
        i = data.length;
        emit(i);
      } else if (state.at === "head") {
        while (i < data.length - 1 && data[i] === 13 && data[i + 1] === 10) i += 2; // empty lines before a request
        start = i;
        const end = indexOfHeadEnd(data, i);
        if (end < 0) {
          if (data.length - i > MAX_HEAD_BYTES) return this.#fail(pieces, "the request head is larger than 32 KiB");
          this.#buffer = data.slice(i);
          return pieces;
        }
        if (end - i > MAX_HEAD_BYTES) return this.#fail(pieces, "the request head is larger than 32 KiB");
        const parsed = parseHead(latin1.decode(data.subarray(i, end)));
        if (typeof parsed === "string") return this.#fail(pieces, parsed);
        pieces.push({ kind: "head", head: parsed.head });
        i = end + 4;
        start = i;
        this.#state = parsed.next;
      } else if (state.at === "length") {
        const take = Math.min(state.left, data.length - i);
        i += take;
        emit(i);
        this.#state = state.left - take === 0 ? { at: "head" } : { at: "length", left: state.left - take };
      } else if (state.at === "chunk-data") {
        const take = Math.min(state.left, data.length - i);
        i += take;
        emit(i);
        this.#state = state.left - take === 0
          ? { at: "chunk-end", left: 2 }
          : { at: "chunk-data", left: state.left - take };
      } else if (state.at === "chunk-end") {
        const take = Math.min(state.left, data.length - i);
        i += take;
        emit(i);
        this.#state = state.left - take === 0 ? { at: "chunk-size" } : { at: "chunk-end", left: state.left - take };
      } else {
        const lineEnd = indexOfLineEnd(data, i);
        if (lineEnd < 0) {
          if (data.length - i > 4096) return this.#fail(pieces, "a chunk line is longer than 4 KiB");
          emit(i);
          this.#buffer = data.slice(i);
          return pieces;
        }
        const line = latin1.decode(data.subarray(i, lineEnd));
        i = lineEnd + 2;
        emit(i);
        if (state.at === "trailers") {
          if (line === "") this.#state = { at: "head" };
        } else {
          const size = /^([0-9A-Fa-f]{1,8})(;.*)?$/.exec(line);
          if (!size) return this.#fail(pieces, `bad chunk size line "${line.slice(0, 40)}"`);
          const left = parseInt(size[1], 16);
          this.#state = left === 0 ? { at: "trailers" } : { at: "chunk-data", left };
        }
      }
    }
    emit(i);
    return pieces;
  }

  #fail(pieces: RequestPiece[], detail: string): RequestPiece[] {
    this.#state = { at: "failed" };
    this.#buffer = new Uint8Array(0);
    pieces.push({ kind: "error", detail });
    return pieces;
  }
}

function parseHead(text: string): { head: RequestHead; next: State } | string {
  const lines = text.split("\r\n");
  const request = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) (HTTP\/1\.[01])$/.exec(lines[0]);
  if (!request) return `bad request line "${lines[0].slice(0, 60)}"`;
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon) : "";
    if (!TOKEN.test(name)) return `bad header line "${line.slice(0, 60)}"`;
    headers.push([name, line.slice(colon + 1).trim()]);
  }
  const head: RequestHead = { method: request[1], target: request[2], version: request[3], headers };
  const connection = (headerValue(head, "connection") ?? "").toLowerCase().split(",").map((t) => t.trim());
  if (head.method === "CONNECT" || (headerValue(head, "upgrade") && connection.includes("upgrade"))) {
    return { head, next: { at: "tunnel" } };
  }
  const encoding = headerValue(head, "transfer-encoding");
  if (encoding !== undefined) {
    const codings = encoding.toLowerCase().split(",").map((t) => t.trim());
    if (codings[codings.length - 1] !== "chunked") return "a request Transfer-Encoding must end with chunked";
    head.headers = head.headers.filter(([n]) => n.toLowerCase() !== "content-length");
    return { head, next: { at: "chunk-size" } };
  }
  const lengths = head.headers.filter(([n]) => n.toLowerCase() === "content-length").map(([, value]) => value);
  if (lengths.length === 0) return { head, next: { at: "head" } };
  const values = new Set(lengths.flatMap((value) => value.split(",").map((t) => t.trim())));
  const [only] = values;
  if (values.size !== 1 || !/^\d{1,15}$/.test(only)) return `bad Content-Length "${lengths.join(", ")}"`;
  const left = Number(only);
  return { head, next: left === 0 ? { at: "head" } : { at: "length", left } };
}

/** The head as the member receives it: `X-Forwarded-For: <client>` appended, `X-Forwarded-Proto` set. */
export function forwardedHead(head: RequestHead, forwarded: { client: string; proto: "http" | "https" }): Uint8Array {
  const kept = head.headers.filter(([name]) => name.toLowerCase() !== "x-forwarded-proto");
  const lines = [
    `${head.method} ${head.target} ${head.version}`,
    ...kept.map(([name, value]) => `${name}: ${value}`),
    `X-Forwarded-For: ${forwarded.client}`,
    `X-Forwarded-Proto: ${forwarded.proto}`,
  ];
  return latin1Bytes(lines.join("\r\n") + "\r\n\r\n");
}

/** Text whose characters are all below U+0100 as bytes (the head's own encoding). */
export function latin1Bytes(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i) & 0xff;
  return bytes;
}

function indexOfHeadEnd(data: Uint8Array, from: number): number {
  for (let i = from; i + 3 < data.length; i++) {
    if (data[i] === 13 && data[i + 1] === 10 && data[i + 2] === 13 && data[i + 3] === 10) return i;
  }
  return -1;
}

function indexOfLineEnd(data: Uint8Array, from: number): number {
  for (let i = from; i + 1 < data.length; i++) if (data[i] === 13 && data[i + 1] === 10) return i;
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
