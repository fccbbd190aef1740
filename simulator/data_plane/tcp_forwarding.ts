/**
 * A `tcp` frontend's connection: bytes piped both ways between the client and one member, half-closes passed on
 * (a client that shuts its sending side still gets the member's answer), an error on either side ends both. When no
 * member may take the connection it is closed at once without a byte, as HAProxy closes it.
 *
 * @module
 */
import type { Socket } from "node:net";

/** Opens the connection to the member chosen for this client; undefined when no member may take it. */
export type OpenUpstream = () => Promise<Socket | undefined>;

/** Joins `client` to the member `open` connects to. */
export function forwardTcp(client: Socket, open: OpenUpstream): void {
  client.pause();
  client.on("error", () => client.destroy());
  open().then((upstream) => {
    if (!upstream) {
      client.destroy();
      return;
    }
    if (client.destroyed) {
      upstream.destroy();
      return;
    }
    joinSockets(client, upstream);
  }, () => client.destroy());
}

/** Pipes `a` and `b` into each other until both sides are done; an error on either destroys both. */
export function joinSockets(a: Socket, b: Socket): void {
  const fail = () => {
    a.destroy();
    b.destroy();
  };
  a.on("error", fail);
  b.on("error", fail);
  a.on("close", () => endSocket(b));
  b.on("close", () => endSocket(a));
  a.pipe(b);
  b.pipe(a);
}

/** Ends `socket`'s sending side unless it is ended already (ending twice builds an error, which costs). */
export function endSocket(socket: Socket): void {
  if (!socket.destroyed && !socket.writableEnded) socket.end();
}
