/**
 * A TCP proxy on a loopback port in front of another address, which a test can take down and bring back: to the
 * programs behind it, exactly what an API server restart looks like (connections reset, then refused, then accepted
 * again). TLS passes through untouched.
 *
 * @module
 */

/** A running proxy. */
export interface TcpProxy extends AsyncDisposable {
  /** The port it listens on (127.0.0.1), also while down. */
  port: number;
  /** Connections passed through to the target so far: a program behind the proxy reached it. */
  readonly accepted: number;
  /** Stops listening and resets every open connection (the port then refuses connections). */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): void;
  /** Stops for good. */
  close(): Promise<void>;
}

/** Starts a proxy from a free loopback port to `target` (host:port). */
export function startTcpProxy(target: { hostname: string; port: number }): TcpProxy {
  let listener: Deno.TcpListener | undefined;
  let port = 0;
  let accepted = 0;
  const open = new Set<Deno.Conn>();
  const serve = (l: Deno.TcpListener) => {
    (async () => {
      for await (const client of l) {
        let upstream: Deno.Conn;
        try {
          upstream = await Deno.connect(target);
        } catch {
          client.close();
          continue;
        }
        accepted++;
        open.add(client);
        open.add(upstream);
        const pipe = (from: Deno.Conn, to: Deno.Conn) =>
          from.readable.pipeTo(to.writable).catch(() => {}).finally(() => {
            for (const c of [from, to]) {
              try {
                c.close();
              } catch { /* closed */ }
              open.delete(c);
            }
          });
        pipe(client, upstream);
        pipe(upstream, client);
      }
    })().catch(() => {});
  };
  const up = () => {
    listener = Deno.listen({ hostname: "127.0.0.1", port });
    port = (listener.addr as Deno.NetAddr).port;
    serve(listener);
  };
  const down = () => {
    listener?.close();
    listener = undefined;
    for (const conn of open) {
      try {
        conn.close();
      } catch { /* closed */ }
    }
    open.clear();
    return Promise.resolve();
  };
  up();
  return {
    get port() {
      return port;
    },
    get accepted() {
      return accepted;
    },
    down,
    up,
    close: down,
    [Symbol.asyncDispose]: down,
  };
}
