/**
 * An `http` frontend's connection: the client's requests are read one after another (`http_request_stream.ts`); the
 * first one picks the member, which keeps the connection's later requests; each request head reaches it with
 * `X-Forwarded-For` and `X-Forwarded-Proto`; answers are passed back unchanged. The frontend itself answers — and then
 * closes — with a redirect to `https://` on a `redirect_to_https` frontend, 503 when no member may take the request,
 * and 400 for a request it cannot read.
 *
 * @module
 */
import type { Socket } from "node:net";
import { forwardedHead, headerValue, latin1Bytes, type RequestHead, RequestStream } from "./http_request_stream.ts";
import { endSocket, type OpenUpstream } from "./tcp_forwarding.ts";

/** How long a connection the frontend answered itself stays open for the client to read the answer (ms). */
const LINGER_MS = 1_000;

/** How an `http` frontend treats its connections. */
export interface HttpFrontendOptions {
  /** The client's address (for `X-Forwarded-For`). */
  clientAddress: string;
  /** `https` on a TLS frontend. */
  proto: "http" | "https";
  /** Answer every request with a redirect to `https://` instead of forwarding. */
  redirectToHttps: boolean;
  /** The frontend's address and port, for a redirect without a `Host` header. */
  authority: string;
  /** Opens the connection to the chosen member. */
  open: OpenUpstream;
}

/** The status line and headers the frontend answers with itself, closing the connection after. */
export function frontendAnswer(
  status: 301 | 400 | 503,
  extra: { location?: string; detail?: string } = {},
): Uint8Array {
  const reason = { 301: "Moved Permanently", 400: "Bad Request", 503: "Service Unavailable" }[status];
  const body = status === 301
    ? ""
    : status === 503
    ? "<html><body><h1>503 Service Unavailable</h1>\nNo member is available to handle this request.\n</body></html>\n"
    : `<html><body><h1>400 Bad Request</h1>\n${escapeHtml(extra.detail ?? "")}\n</body></html>\n`;
  const lines = [
    `HTTP/1.1 ${status} ${reason}`,
    ...(extra.location ? [`Location: ${extra.location}`] : []),
    `Content-Length: ${body.length}`,
    ...(body ? ["Content-Type: text/html", "Cache-Control: no-cache"] : []),
    "Connection: close",
  ];
  return latin1Bytes(lines.join("\r\n") + "\r\n\r\n" + body);
}

/** Where a redirect to `https://` sends `head`: the same host (as the client named it) and target. */
export function httpsLocation(head: RequestHead, authority: string): string {
  return `https://${headerValue(head, "host") || authority}${head.target}`;
}

/** Serves `client` as an `http` frontend. */
export function forwardHttp(client: Socket, options: HttpFrontendOptions): void {
  const stream = new RequestStream();
  let upstream: Socket | undefined;
  let opening = false;
  let answered = false;
  let clientEnded = false;
  const waiting: Uint8Array[] = [];
  const answer = (bytes: Uint8Array) => {
    answered = true;
    waiting.length = 0;
    upstream?.destroy();
    client.end(bytes);
    // A lingering close: the client has a moment to read the answer before the connection goes.
    const linger = setTimeout(() => client.destroy(), LINGER_MS);
    client.once("close", () => clearTimeout(linger));
  };
  const send = (bytes: Uint8Array) => {
    if (!upstream) {
      waiting.push(bytes);
      return;
    }
    if (!upstream.write(bytes)) {
      client.pause();
      upstream.once("drain", () => client.resume());
    }
  };
  const connect = () => {
    opening = true;
    client.pause();
    options.open().then((socket) => {
      if (!socket) return answer(frontendAnswer(503));
      if (answered || client.destroyed) return socket.destroy();
      upstream = socket;
      socket.on("error", () => {
        socket.destroy();
        client.destroy();
      });
      socket.on("close", () => endSocket(client));
      socket.pipe(client);
      for (const bytes of waiting.splice(0)) send(bytes);
      if (clientEnded) endSocket(socket);
      else client.resume();
    }, () => answer(frontendAnswer(503)));
  };
  client.on("error", () => {
    client.destroy();
    upstream?.destroy();
  });
  client.on("end", () => {
    clientEnded = true;
    if (upstream) endSocket(upstream);
    else if (!opening && !answered) endSocket(client);
  });
  client.on("data", (chunk: Uint8Array) => {
    if (answered) return;
    for (const piece of stream.push(chunk)) {
      if (piece.kind === "error") return answer(frontendAnswer(400, { detail: piece.detail }));
      if (piece.kind === "data") {
        send(piece.bytes);
        continue;
      }
      if (options.redirectToHttps) {
        return answer(frontendAnswer(301, { location: httpsLocation(piece.head, options.authority) }));
      }
      if (!opening) connect();
      send(forwardedHead(piece.head, { client: options.clientAddress, proto: options.proto }));
    }
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
}
