/**
 * The controller process: connects to the Kubernetes API and the Ankra Cloud API, keeps slim stores of Nodes and
 * Services in step (on every replica, so a standby's caches are warm), serves `/healthz`, `/readyz` and `/metrics`,
 * and runs the controllers — the writers — only while this replica leads. SIGTERM or SIGINT stops the writers,
 * releases the Lease, stops the watches and exits 0.
 *
 * In a dry run (`--dry-run`) there is no Lease: the controllers run at once, and every write they would make goes to
 * the {@linkcode DryRunReport} (log and `/metrics`) instead.
 *
 * `/readyz` fails while the Ankra Cloud API refuses the token (checked once at start on every replica, then on
 * every answer). A serving problem (port in use, unreadable TLS files) ends the process with exit code 2 and one line
 * naming the flag.
 *
 * @module
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import { AnkraCloudClient } from "./cloud/client.ts";
import type { Config } from "./config/config.ts";
import { KubeClient } from "./kube/client.ts";
import { Informer } from "./kube/informer.ts";
import { InsecureKubeconfigError, kubeConnection, type KubeConnectionConfig } from "./kube/kubeconfig.ts";
import type { SlimNode, SlimService } from "./kube/slim.ts";
import { nodeInformer, serviceInformer } from "./kube/cluster_informers.ts";
import * as log from "./log.ts";
import { whenAborted } from "./runtime/abort.ts";
import { LeaderElector } from "./kube/leader_election.ts";
import { DryRunReport } from "./runtime/dry_run.ts";
import { MetricsRegistry } from "./runtime/metrics.ts";
import { DelegatedAuthorizer, kubeReviewer } from "./server/delegated_authorizer.ts";
import { type RunningHealthServer, startHealthServer } from "./server/health_server.ts";
import { selfSignedServingCertificate } from "./server/self_signed_certificate.ts";

/** What the controllers get. */
export interface ControllerContext {
  /** The parsed flags and environment; the same object in every term of leadership. */
  config: Config;
  /** Kubernetes API client. */
  kube: KubeClient;
  /** Ankra Cloud API client. */
  cloud: AnkraCloudClient;
  /** Slim Nodes, watched on every replica (a standby's cache stays warm) and synced before the controllers start. */
  nodes: Informer<V1Node, SlimNode>;
  /** Slim Services, watched on every replica and synced before the controllers start. */
  services: Informer<V1Service, SlimService>;
  /** The process registry served on `/metrics`, already holding the process gauges. */
  metrics: MetricsRegistry;
  /** Set in a dry run: every write is described there instead of sent. */
  dryRun?: DryRunReport;
}

/** A controller: runs until `signal` aborts (leadership lost or shutdown), then returns after cleaning up. */
export interface Controller {
  /** Shown in the `starting controllers` log line; helpers such as `cloud-view` are named there too. */
  name: string;
  /** Runs the controller. */
  run(signal: AbortSignal): Promise<void>;
}

/** Builds the controllers selected by the configuration. */
type ControllerFactory = (context: ControllerContext) => Controller[];

/** The process's metrics registry with process-level gauges. */
function processMetrics(): MetricsRegistry {
  const metrics = new MetricsRegistry();
  metrics.gauge("process_resident_memory_bytes", "Resident memory size in bytes.", () => Deno.memoryUsage().rss);
  const started = Date.now() / 1000;
  metrics.gauge("process_start_time_seconds", "Start time of the process since the Unix epoch.", () => started);
  return metrics;
}

function waitForSignal(): { promise: Promise<string>; dispose: () => void } {
  const { promise, resolve } = Promise.withResolvers<string>();
  const term = () => resolve("SIGTERM");
  const int = () => resolve("SIGINT");
  Deno.addSignalListener("SIGTERM", term);
  Deno.addSignalListener("SIGINT", int);
  return {
    promise,
    dispose() {
      Deno.removeSignalListener("SIGTERM", term);
      Deno.removeSignalListener("SIGINT", int);
    },
  };
}

/** A problem serving `/healthz` and `/metrics` that the user fixes with a flag: one line, exit code 2. */
class ServingError extends Error {}

/** Reads the serving certificate and key (`--tls-cert-file`, `--tls-private-key-file`), or makes one in memory. */
async function servingCertificate(config: Config): Promise<{ cert: string; key: string }> {
  if (!config.tlsCertFile) return await selfSignedServingCertificate(Deno.hostname());
  const read = async (path: string, flag: string) => {
    try {
      const text = await Deno.readTextFile(path);
      if (!text.includes("-----BEGIN ")) throw new ServingError(`${flag} ${path} holds no PEM data`);
      return text;
    } catch (cause) {
      if (cause instanceof ServingError) throw cause;
      const why = cause instanceof Deno.errors.NotFound ? "does not exist" : "cannot be read";
      throw new ServingError(`${flag} ${path} ${why}: point it at the PEM file (or drop both TLS flags)`);
    }
  };
  return {
    cert: await read(config.tlsCertFile, "--tls-cert-file"),
    key: await read(config.tlsPrivateKeyFile!, "--tls-private-key-file"),
  };
}

/** Starts the HTTPS server, turning the errors a user causes with a flag into a {@linkcode ServingError}. */
async function serve(
  config: Config,
  options: Omit<Parameters<typeof startHealthServer>[0], "hostname" | "port" | "tls">,
) {
  const tls = await servingCertificate(config);
  try {
    return await startHealthServer({ ...options, hostname: config.bindAddress, port: config.securePort, tls });
  } catch (cause) {
    const where = `${config.bindAddress}:${config.securePort}`;
    if (cause instanceof Deno.errors.AddrInUse) {
      throw new ServingError(
        `--secure-port ${config.securePort}: the port is in use on ${where}; stop the other ` +
          "process (an older controller?) or choose another port",
      );
    }
    if (cause instanceof Deno.errors.AddrNotAvailable) {
      throw new ServingError(
        `--bind-address ${config.bindAddress} is not an address of this host: use 0.0.0.0, ` +
          "127.0.0.1 or one of its own addresses",
      );
    }
    if (cause instanceof Deno.errors.PermissionDenied) {
      throw new ServingError(
        `--secure-port ${config.securePort}: not allowed to listen on ${where} (ports below ` +
          "1024 need a privilege): choose a port from 1024",
      );
    }
    const message = cause instanceof Error ? cause.message : String(cause);
    if (/certificate|private key|pem|tls/i.test(message)) {
      throw new ServingError(
        `--tls-cert-file/--tls-private-key-file: the certificate and key cannot be used ` +
          `(${message.split("\n")[0]}): give a PEM certificate and its matching key`,
      );
    }
    throw cause;
  }
}

/**
 * Runs the controller process until a termination signal arrives; returns the exit code (2 for a serving problem the
 * user fixes with a flag).
 */
export async function runController(config: Config, controllers: ControllerFactory = () => []): Promise<number> {
  for (const remark of config.warnings) log.warn(remark);
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    log.error("unhandled error", { error: log.redact(String(event.reason?.stack ?? event.reason)) });
  });
  const metrics = processMetrics();
  let connection: KubeConnectionConfig;
  try {
    connection = await kubeConnection(config);
  } catch (cause) {
    log.error((cause as Error).message);
    // A kubeconfig that asks for an unprotected connection stays refused until it is changed: exit 2, as for a bad
    // flag (an unreadable one may be written later: exit 1, and the unit tries again).
    return cause instanceof InsecureKubeconfigError ? 2 : 1;
  }
  const dryRun = config.dryRun ? new DryRunReport(metrics) : undefined;
  const kube = new KubeClient(connection, { qps: config.kubeApiQps, burst: config.kubeApiBurst, metrics });
  const cloud = new AnkraCloudClient(config.cloud, { metrics });
  const nodes = nodeInformer(kube, { metrics });
  const services = serviceInformer(kube, { metrics });
  log.info(0, "Ankra Cloud provider initialised", {
    provider: config.cloudProvider,
    cluster: config.clusterName,
    api: config.cloud.apiUrl,
    kubernetes: connection.server,
    controllers: config.controllers.join(","),
    ...(dryRun ? { dryRun: true } : {}),
  });
  if (dryRun) log.info(0, "dry run: nothing is written to Kubernetes or Ankra Cloud; planned writes are logged");

  const root = new AbortController();
  const signal = waitForSignal();
  signal.promise.then((name) => {
    root.abort(new Error(name));
    log.info(0, "stopping", { signal: name });
  });

  const identity = `${Deno.hostname()}_${crypto.randomUUID()}`;
  const elector = config.leaderElect
    ? new LeaderElector(kube, {
      namespace: config.leaderElectResourceNamespace,
      name: config.leaderElectResourceName,
      identity,
      leaseDurationMs: config.leaderElectLeaseDurationMs,
      renewDeadlineMs: config.leaderElectRenewDeadlineMs,
      retryPeriodMs: config.leaderElectRetryPeriodMs,
      metrics,
    })
    : undefined;

  let server: RunningHealthServer | undefined;
  try {
    if (config.securePort > 0) {
      server = await serve(config, {
        metrics,
        // Reviews have their own limiter and cap: /metrics callers never spend the controllers' or the Lease's budget.
        authorizer: config.metricsAuthorization === "delegated"
          ? new DelegatedAuthorizer(kubeReviewer(kube), { metrics })
          : undefined,
        readiness: () => {
          const credentials = cloud.credentialProblem;
          const checks = [
            `${nodes.hasSynced ? "[+]" : "[-]"}informer-sync-nodes ${nodes.hasSynced ? "ok" : "not synced yet"}`,
            `${services.hasSynced ? "[+]" : "[-]"}informer-sync-services ${
              services.hasSynced ? "ok" : "not synced yet"
            }`,
            `${credentials ? "[-]" : "[+]"}ankra-cloud-credentials ${credentials ? credentials.message : "ok"}`,
            `[+]leader-election ${
              dryRun ? "dry run (no Lease)" : !elector ? "disabled" : elector.isLeader ? "leading" : "standby"
            }`,
          ];
          return { ready: nodes.hasSynced && services.hasSynced && !credentials, checks };
        },
      });
      log.info(1, "serving health and metrics", { url: server.url });
    }
  } catch (cause) {
    signal.dispose();
    kube.close();
    cloud.close();
    if (cause instanceof ServingError) {
      log.error(cause.message);
      return 2;
    }
    throw cause;
  }

  // Every replica checks once that the API takes the token, so a standby with a bad token is not ready either.
  cloud.listZones(root.signal).then(
    () => log.info(1, "the Ankra Cloud API accepts the token"),
    (cause) => {
      if (!root.signal.aborted && !cloud.credentialProblem) {
        log.warn("could not reach the Ankra Cloud API at start; the controllers retry", { error: cause });
      }
    },
  );

  const informers = [nodes.run(root.signal), services.run(root.signal)];
  const syncStarted = performance.now();
  Promise.all([nodes.synced, services.synced]).then(async () => {
    // Let the informers drop their first pages before collecting.
    await new Promise((resolve) => setTimeout(resolve, 100));
    collectGarbage();
    log.info(1, "caches synced", {
      nodes: nodes.watched().store.size,
      services: services.watched().store.size,
      seconds: Number(((performance.now() - syncStarted) / 1000).toFixed(2)),
      heapUsedMiB: Number((Deno.memoryUsage().heapUsed / 1048576).toFixed(1)),
      rssMiB: Number((Deno.memoryUsage().rss / 1048576).toFixed(1)),
    });
  });
  const context: ControllerContext = { config, kube, cloud, nodes, services, metrics, dryRun };
  const lead = async (leadSignal: AbortSignal) => {
    await Promise.race([Promise.all([nodes.synced, services.synced]), whenAborted(leadSignal)]);
    if (leadSignal.aborted) return;
    const running = controllers(context);
    log.info(1, "starting controllers", { controllers: running.map((c) => c.name).join(",") || "none" });
    await Promise.all(running.map((c) => c.run(leadSignal)));
    log.info(1, "controllers stopped");
  };
  try {
    if (elector) await elector.run(root.signal, lead);
    else await lead(root.signal);
    await Promise.all(informers);
  } finally {
    signal.dispose();
    await server?.stop();
    kube.close();
    cloud.close();
  }
  return 0;
}

/**
 * Runs a full garbage collection when the runtime exposes one (`--expose-gc`, one of the V8 flags every launcher sets:
 * lib/runtime_permissions.ts): the first lists of a large cluster leave tens of megabytes of parsed pages behind, and
 * V8 only gives that memory back after a full collection.
 */
function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc === "function") gc();
}
