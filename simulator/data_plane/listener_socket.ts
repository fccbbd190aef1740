/**
 * Opening and closing one listening socket of the data plane (`node:net`, or `node:tls` for a TLS frontend): a bind
 * that fails is an error whose message names the address and says what to do; closing stops new connections and
 * leaves the accepted ones running, as an HAProxy reload does.
 *
 * @module
 */
import net from "node:net";
import tls from "node:tls";

/** Options of {@linkcode openListenerSocket}. */
export interface ListenerSocketOptions {
  /** A published address of a load balancer or edge VM that the current mode can serve. */
  address: string;
  /** The frontend's port, or an edge member's `frontend_port`. */
  port: number;
  /** TLS options (certificates, SNI); plain TCP without. */
  tls?: tls.TlsOptions;
  /** Called for every accepted connection (after the TLS handshake on a TLS listener). */
  onConnection: (socket: net.Socket) => void;
}

/** Binds and listens; rejects with an `Error` whose message says why and what to do. */
export function openListenerSocket(options: ListenerSocketOptions): Promise<net.Server> {
  const { address, port } = options;
  const server: net.Server = options.tls
    ? tls.createServer({ ...options.tls, allowHalfOpen: true }, options.onConnection)
    : net.createServer({ allowHalfOpen: true }, options.onConnection);
  if (options.tls) server.on("tlsClientError", (_error: Error, socket: net.Socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    server.once("error", (error: Error & { code?: string }) => {
      server.close();
      reject(new Error(bindProblem(address, port, error)));
    });
    server.listen({ host: address, port, exclusive: true }, () => {
      server.removeAllListeners("error");
      server.on("error", () => {});
      resolve(server);
    });
  });
}

/**
 * Stops accepting on `server` and frees its port at once; connections already accepted go on (the server's own
 * close completes only when they end, which nothing waits for).
 */
export function closeListenerSocket(server: net.Server): void {
  server.close();
}

/** The message of a failed bind: what failed and what to do. */
export function bindProblem(address: string, port: number, error: { code?: string; message: string }): string {
  const where = `${address.includes(":") ? `[${address}]` : address}:${port}`;
  switch (error.code) {
    case "EADDRINUSE":
      return `cannot listen on ${where}: the address is in use; stop what listens there or free the port`;
    case "EACCES":
      return `cannot listen on ${where}: permission denied; ports below 1024 need root, CAP_NET_BIND_SERVICE or a ` +
        "lower net.ipv4.ip_unprivileged_port_start";
    case "EADDRNOTAVAIL":
      return `cannot listen on ${where}: the address is not local here; with --data-plane=netns the simulator ` +
        "adds local routes for it";
    default:
      return `cannot listen on ${where}: ${error.code ?? error.message}`;
  }
}
