/**
 * The HTTPS server on `--secure-port` (hono): `/healthz` and `/livez` (the process serves), `/readyz` (caches
 * synced; leader or standby) and `/metrics` (Prometheus text), the last one only for callers the API server
 * authorizes (see {@linkcode DelegatedAuthorizer}), unless authorization is explicitly turned off. A refused caller
 * gets 401 (no valid token), 403 (not allowed), 429 with `Retry-After: 1` (too many checks in flight: answered at
 * once, without asking the API server) or 503 (the check failed).
 *
 * @module
 */
import { Hono } from "hono";
import type { MetricsRegistry } from "../runtime/metrics.ts";
import type { DelegatedAuthorizer } from "./delegated_authorizer.ts";

const REFUSALS = {
  401: "Unauthorized",
  403: "Forbidden",
  429: "Too Many Requests",
  503: "Service Unavailable",
} as const;

/** What `/readyz` reports. */
interface Readiness {
  /** True when ready. */
  ready: boolean;
  /** One line per check, `[+]name ok` or `[-]name reason`. */
  checks: string[];
}

/** Options of {@linkcode startHealthServer}. */
interface HealthServerOptions {
  /** Address to listen on. */
  hostname: string;
  /** Port (0 = any free port). */
  port: number;
  /** Serving certificate chain and key (PEM). */
  tls: { cert: string; key: string };
  /** The metrics to expose. */
  metrics: MetricsRegistry;
  /** The readiness checks. */
  readiness: () => Readiness;
  /** Who may read `/metrics`; `undefined` lets anyone (only when configured so). */
  authorizer?: DelegatedAuthorizer;
}

/** A running health server. */
export interface RunningHealthServer {
  /** `https://host:port`. */
  url: string;
  /** The port it listens on. */
  port: number;
  /** Stops serving. */
  stop(): Promise<void>;
}

/** Builds the hono app (exported for tests). */
export function healthApp(options: Omit<HealthServerOptions, "hostname" | "port" | "tls">): Hono {
  const app = new Hono();
  app.get("/healthz", (c) => c.text("ok"));
  app.get("/livez", (c) => c.text("ok"));
  app.get("/readyz", (c) => {
    const readiness = options.readiness();
    const verbose = c.req.query("verbose") !== undefined;
    const body = readiness.ready
      ? (verbose ? `${readiness.checks.join("\n")}\nreadyz check passed\n` : "ok")
      : `${readiness.checks.join("\n")}\nreadyz check failed\n`;
    return c.text(body, readiness.ready ? 200 : 503);
  });
  app.get("/metrics", async (c) => {
    if (options.authorizer) {
      const verdict = await options.authorizer.authorize(c.req.header("authorization"), "/metrics");
      if (!verdict.allowed) {
        const headers: Record<string, string> = verdict.status === 429 ? { "retry-after": "1" } : {};
        return c.text(`${REFUSALS[verdict.status]}: ${verdict.reason}\n`, verdict.status, headers);
      }
    }
    return c.body(options.metrics.render(), 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
  });
  return app;
}

/** Starts the HTTPS server. */
export function startHealthServer(options: HealthServerOptions): Promise<RunningHealthServer> {
  const app = healthApp(options);
  const listening = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve({
    hostname: options.hostname,
    port: options.port,
    cert: options.tls.cert,
    key: options.tls.key,
    onListen: (addr) => listening.resolve(addr as Deno.NetAddr),
  }, app.fetch);
  return listening.promise.then((addr) => {
    const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
    return { url: `https://${host}:${addr.port}`, port: addr.port, stop: () => server.shutdown() };
  });
}
