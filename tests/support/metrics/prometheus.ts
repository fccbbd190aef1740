/**
 * A real Prometheus server (Debian's `prometheus` package, or `PROMETHEUS` naming the binary) on loopback with its
 * storage in a temporary directory, and its HTTP query API. Stopped by its process id.
 *
 * @module
 */
import { freePort } from "../control_plane/control_plane.ts";
import { eventually } from "../wait/eventually.ts";

/** One scrape target of {@linkcode startPrometheus}: the controller's HTTPS /metrics with a bearer token. */
export interface ScrapeTarget {
  /** `job` label of the series. */
  job: string;
  /** host:port. */
  target: string;
  /** A file holding the bearer token Prometheus sends. */
  bearerTokenFile: string;
  /** Scrape interval and timeout (default `1s`). */
  interval?: string;
}

/** One sample of an instant query. */
export interface Sample {
  /** The series' labels. */
  metric: Record<string, string>;
  /** The value (NaN when Prometheus answered NaN). */
  value: number;
}

/** A running Prometheus. */
export interface RunningPrometheus extends AsyncDisposable {
  /** Base URL of its HTTP API. */
  url: string;
  /** Its process id. */
  pid: number;
  /** What it logged so far. */
  log(): string;
  /** Evaluates `expr` now (`/api/v1/query`); throws with Prometheus' error when the query is refused. */
  query(expr: string): Promise<Sample[]>;
  /** The values of label `label` on series matching `match` (`/api/v1/label/<label>/values`). */
  labelValues(label: string, match: string): Promise<string[]>;
}

/** The binary: `PROMETHEUS`, else `prometheus` on PATH. */
export function prometheusBinary(): string {
  return Deno.env.get("PROMETHEUS") ?? "prometheus";
}

/** The configuration file for `targets`: TLS without verification (a self-signed serving certificate), bearer auth. */
export function scrapeConfig(targets: ScrapeTarget[]): string {
  const jobs = targets.map((t) => {
    const interval = t.interval ?? "1s";
    return [
      `  - job_name: ${JSON.stringify(t.job)}`,
      `    scrape_interval: ${interval}`,
      `    scrape_timeout: ${interval}`,
      "    scheme: https",
      "    metrics_path: /metrics",
      "    authorization:",
      "      type: Bearer",
      `      credentials_file: ${JSON.stringify(t.bearerTokenFile)}`,
      "    tls_config:",
      "      insecure_skip_verify: true",
      "    static_configs:",
      `      - targets: [${JSON.stringify(t.target)}]`,
    ].join("\n");
  });
  return ["global:", "  scrape_interval: 1s", "  evaluation_interval: 1s", "scrape_configs:", ...jobs].join("\n") +
    "\n";
}

/** Starts Prometheus scraping `targets`; resolves once it answers `/-/ready`. */
export async function startPrometheus(targets: ScrapeTarget[]): Promise<RunningPrometheus> {
  const dir = await Deno.makeTempDir({ prefix: "ccm-prometheus-" });
  await Deno.writeTextFile(`${dir}/prometheus.yml`, scrapeConfig(targets));
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(prometheusBinary(), {
      args: [
        `--config.file=${dir}/prometheus.yml`,
        `--storage.tsdb.path=${dir}/data`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      stdout: "piped",
      stderr: "piped",
      stdin: "null",
    }).spawn();
  } catch (error) {
    await Deno.remove(dir, { recursive: true });
    if (error instanceof Deno.errors.NotFound) {
      throw new Error(
        `${prometheusBinary()} not found: install Debian's prometheus package (apt-get install prometheus) ` +
          "or set PROMETHEUS to the binary",
      );
    }
    throw error;
  }
  let output = "";
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) output += chunk;
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  let exited = false;
  const status = child.status.then(async (s) => (exited = true, await pumps, s));
  const get = async (path: string) => {
    const response = await fetch(`${url}${path}`);
    const body = await response.json() as { status: string; data?: unknown; error?: string };
    if (body.status !== "success") throw new Error(`prometheus ${path}: ${body.error ?? response.status}`);
    return body.data;
  };
  const stop = async () => {
    if (!exited) {
      try {
        Deno.kill(child.pid, "SIGTERM");
      } catch { /* already gone */ }
    }
    await status;
    await Deno.remove(dir, { recursive: true });
  };
  try {
    await eventually(
      async () => {
        if (exited) throw new Error(`prometheus exited:\n${output}`);
        return await fetch(`${url}/-/ready`).then((r) => (r.body?.cancel(), r.ok)).catch(() => false);
      },
      30_000,
      "prometheus ready",
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    pid: child.pid,
    log: () => output,
    async query(expr) {
      const data = await get(`/api/v1/query?query=${encodeURIComponent(expr)}`) as {
        resultType: string;
        result: { metric: Record<string, string>; value: [number, string] }[];
      };
      if (data.resultType !== "vector") throw new Error(`prometheus: ${expr} is a ${data.resultType}, not a vector`);
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async labelValues(label, match) {
      return await get(`/api/v1/label/${label}/values?match[]=${encodeURIComponent(match)}`) as string[];
    },
    [Symbol.asyncDispose]: stop,
  };
}
