/**
 * The configuration of the controller: command-line flags and environment variables turned into one validated
 * {@linkcode Config} ({@linkcode buildConfig}). What the process does with its arguments (help, version, doctor,
 * cleanup, run) is decided in `command.ts`, which builds the configuration here.
 *
 * The parts live beside it in `lib/config/`: the option table (`options.ts`) and `--help` rendered from it
 * (`help_text.ts`), how each value is read (`option_readers.ts`), the command line (`command_line.ts`), the upstream
 * cloud-controller-manager flags accepted for compatibility (`upstream_flags.ts`, `upstream_flag_rules.ts`) and the
 * Ankra Cloud connection settings (`cloud_settings.ts`). This module assembles them and checks the rules that involve
 * several settings.
 *
 * Every problem is reported as a `ConfigError` (`lib/config_error.ts`, a leaf every layer may throw): one line naming
 * the flag or variable and saying what to do. The Ankra Cloud token is never put in a message.
 *
 * @module
 */
import { readAllowedResources, readApiUrl, readCaBundle, type ReadFile, readToken } from "./cloud_settings.ts";
import type { GivenFlags } from "./command_line.ts";
import { ConfigError } from "../config_error.ts";
import { readOptions } from "./options.ts";
import { upstreamFlagWarnings } from "./upstream_flag_rules.ts";
import type { HighAvailabilityMode } from "../provider/service/service_plan.ts";
import type { AllowedResources } from "../provider/service/allowed_resources.ts";
import type { ServingMode } from "../provider/service/annotations.ts";
import { parseReservedPorts, type ReservedRange } from "../provider/service/reserved_ports.ts";
import { parseServerLabelSelector, type ServerLabelSelector } from "../provider/node/server_labels.ts";
import { encryptedOrLoopback } from "../tls.ts";

/** Names of the controllers this binary runs, selected with `--controllers`. */
type ControllerName = "cloud-node" | "cloud-node-lifecycle" | "service" | "route";

/** Settings for the Ankra Cloud API client. */
interface CloudConfig {
  /** API token (never logged). */
  token: string;
  /** File the token was read from (`--ankra-cloud-token-file`): read again when it changes. */
  tokenFile?: string;
  /** Base URL of the API, without a trailing slash. */
  apiUrl: string;
  /** PEM text of extra certificate authorities trusted besides the system roots. */
  caBundle?: string;
  /** Path the CA bundle was read from (for messages). */
  caBundlePath?: string;
  /** Default private network for new load balancers. */
  networkId?: string;
  /** Default zone for new load balancers. */
  zone?: string;
  /** The certificates, edges and networks a Service may name in its annotations (`ANKRA_CLOUD_ALLOWED_*`). */
  allowedResources: AllowedResources;
  /** HA pair decision for new load balancers. */
  loadBalancerHighAvailability: HighAvailabilityMode;
  /** `ANKRA_CLOUD_LOAD_BALANCER_IPV4`: new load balancers get the paid public IPv4 unless a Service's annotation says no. */
  loadBalancerIpv4: boolean;
  /** Optional upper bound on requests per minute; the API's own limit is followed in any case. */
  maxRequestsPerMinute?: number;
  /** Burst of the upper bound. */
  requestBurst?: number;
  /** Timeout of one HTTP request, in milliseconds. */
  requestTimeoutMs: number;
}

/** The validated configuration of a controller run. */
export interface Config {
  /** Always `ankracloud`. */
  cloudProvider: "ankracloud";
  /** Cluster name: part of every load balancer name and the `ccm.ankra.cloud/cluster` label. */
  clusterName: string;
  /** Path of a kubeconfig file; in-cluster configuration when undefined. */
  kubeconfig?: string;
  /** Overrides the API server URL of the kubeconfig or in-cluster configuration. */
  master?: string;
  /** Whether to take part in leader election. */
  leaderElect: boolean;
  /** Name of the Lease used for leader election. */
  leaderElectResourceName: string;
  /** Namespace of the Lease used for leader election. */
  leaderElectResourceNamespace: string;
  /** Lease duration, milliseconds. */
  leaderElectLeaseDurationMs: number;
  /** Renew deadline, milliseconds. */
  leaderElectRenewDeadlineMs: number;
  /** Retry period, milliseconds. */
  leaderElectRetryPeriodMs: number;
  /** Port of the HTTPS health and metrics server; 0 disables it. */
  securePort: number;
  /** Address the health and metrics server binds to. */
  bindAddress: string;
  /** Serving certificate file; a self-signed certificate is made in memory when undefined. */
  tlsCertFile?: string;
  /** Serving key file, with `tlsCertFile`. */
  tlsPrivateKeyFile?: string;
  /** Who may read `/metrics`: callers the API server authorizes (`delegated`), or anyone (`none`). */
  metricsAuthorization: "delegated" | "none";
  /** Log verbosity (`--v`). */
  verbosity: number;
  /** `--logging-format`: `text` lines, or one JSON object per line. */
  loggingFormat: "text" | "json";
  /** `--controllers` resolved: `*` and `-name` applied, aliases mapped to their canonical names. */
  controllers: ControllerName[];
  /** Period of the address and label refresh of initialised nodes, milliseconds. */
  nodeStatusUpdateFrequencyMs: number;
  /** Period of the node lifecycle check, milliseconds. */
  nodeMonitorPeriodMs: number;
  /** Period of the shared server list, milliseconds. */
  serverListPeriodMs: number;
  /** `--node-labels-from-server`: the server labels copied onto Nodes; undefined copies none. */
  nodeLabelsFromServer?: ServerLabelSelector;
  /** Longest time a load balancer is trusted as last read before it is read again (drift check), milliseconds. */
  loadBalancerDriftPeriodMs: number;
  /** How long a member the load balancer loses drains with weight 0 before it leaves (0: at once), milliseconds. */
  memberDrainPeriodMs: number;
  /** Delete load balancers of this cluster whose Service no longer exists (`--sweep-leaked-load-balancers`). */
  sweepLeakedLoadBalancers: boolean;
  /** Workers of the service controller. */
  concurrentServiceSyncs: number;
  /** Workers of the node controller. */
  concurrentNodeSyncs: number;
  /** Workers of the node lifecycle controller (`--concurrent-node-lifecycle-syncs`). */
  concurrentNodeLifecycleSyncs: number;
  /** Client-side request rate to the Kubernetes API, per second. */
  kubeApiQps: number;
  /** Client-side burst to the Kubernetes API. */
  kubeApiBurst: number;
  /** When set, Services with this `spec.loadBalancerClass` are handled too (besides those without a class). */
  loadBalancerClass?: string;
  /**
   * `--require-load-balancer-class`: only Services of {@linkcode Config.loadBalancerClass} are handled; class-less
   * ones are left to another implementation. Never true without a class.
   */
  requireLoadBalancerClass: boolean;
  /** `--default-load-balancer-mode`: how a Service without the `mode` annotation or the node-address class is served. */
  defaultLoadBalancerMode: ServingMode;
  /** `--node-address-reserved-ports`, parsed. */
  nodeAddressReservedPorts: ReservedRange[];
  /** Read everything, plan everything, write nothing (no Lease, no events, no patches, no Ankra writes). */
  dryRun: boolean;
  /** Ankra Cloud API settings. */
  cloud: CloudConfig;
  /** Non-fatal remarks about the configuration, logged at start-up. */
  warnings: string[];
}

const KNOWN_CONTROLLERS: Record<string, ControllerName> = {
  "cloud-node": "cloud-node",
  "cloud-node-controller": "cloud-node",
  "cloud-node-lifecycle": "cloud-node-lifecycle",
  "cloud-node-lifecycle-controller": "cloud-node-lifecycle",
  "service": "service",
  "service-lb-controller": "service",
  "route": "route",
  "node-route-controller": "route",
};
const DEFAULT_CONTROLLERS: ControllerName[] = ["cloud-node", "cloud-node-lifecycle", "service"];

function parseControllers(value: string): ControllerName[] {
  const chosen = new Set<ControllerName>();
  const removed = new Set<ControllerName>();
  for (const item of value.split(",").map((s) => s.trim()).filter(Boolean)) {
    if (item === "*") {
      for (const name of DEFAULT_CONTROLLERS) chosen.add(name);
      continue;
    }
    const negative = item.startsWith("-");
    const name = KNOWN_CONTROLLERS[negative ? item.slice(1) : item];
    if (!name) {
      throw new ConfigError(
        `--controllers names an unknown controller "${item}": use *, cloud-node, cloud-node-lifecycle, service or ` +
          "route, with a leading - to disable one",
      );
    }
    (negative ? removed : chosen).add(name);
  }
  return [...chosen].filter((name) => !removed.has(name));
}

/** `--master` must be a URL, and https unless it names a loopback host (`kubectl proxy`). */
function checkMaster(value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`--master "${value.slice(0, 80)}" is not a URL: give the API server's https:// URL`);
  }
  if (!encryptedOrLoopback(url)) {
    throw new ConfigError(
      `--master ${url.origin} is plain http to a host that is not loopback: the Kubernetes credentials would ` +
        "travel unencrypted; use https (plain http only to 127.0.0.1, ::1 or localhost, e.g. kubectl proxy)",
    );
  }
}

/**
 * The validated {@linkcode Config} of the flags given (`given`) and the environment: each option read as the option
 * table says (`options.ts`), the Ankra Cloud connection settings (`cloud_settings.ts`), and the rules that involve
 * several settings.
 *
 * @throws {ConfigError} on any bad or missing setting.
 */
export function buildConfig(
  given: GivenFlags,
  env: Record<string, string | undefined>,
  readFile: ReadFile,
): Config {
  const values = readOptions(given.ours, env);
  const warnings: string[] = upstreamFlagWarnings(given.upstream);
  if (values.cloudProvider !== "ankracloud") {
    throw new ConfigError(
      `--cloud-provider must be ankracloud, not "${
        values.cloudProvider ?? ""
      }": this controller only serves Ankra Cloud`,
    );
  }
  if (Boolean(values.tlsCertFile) !== Boolean(values.tlsPrivateKeyFile)) {
    throw new ConfigError("--tls-cert-file and --tls-private-key-file go together: give both or neither");
  }
  if (values.metricsAuthorization === "none") {
    warnings.push("--metrics-authorization=none: anyone who reaches --secure-port can read /metrics");
  }
  if (
    !(values.leaderElectLeaseDuration > values.leaderElectRenewDeadline &&
      values.leaderElectRenewDeadline > values.leaderElectRetryPeriod)
  ) {
    throw new ConfigError(
      "leader election needs --leader-elect-lease-duration > --leader-elect-renew-deadline > " +
        "--leader-elect-retry-period (defaults 15s, 10s, 2s)",
    );
  }
  const controllers = parseControllers(values.controllers ?? "*");
  if (controllers.includes("route")) {
    warnings.push("the route controller does nothing here: Ankra Cloud routes are not programmed by this controller");
  }
  if (values.allocateNodeCidrs) {
    warnings.push("--allocate-node-cidrs=true is ignored: this controller allocates no pod CIDRs");
  }
  if (values.configureCloudRoutes) {
    warnings.push("--configure-cloud-routes=true is ignored: this controller programs no routes");
  }
  if (values.cloudConfig) {
    warnings.push("--cloud-config is ignored: configuration comes from the ANKRA_CLOUD_* environment variables");
  }
  if (values.dryRun && values.leaderElect && given.ours.has("leader-elect")) {
    warnings.push("--dry-run takes no Lease: --leader-elect is ignored (a dry run writes nothing, so it needs none)");
  }
  const cloud: CloudConfig = {
    token: readToken(values, readFile),
    tokenFile: values.tokenFile,
    apiUrl: readApiUrl(values.apiUrl ?? ""),
    caBundle: values.caBundle ? readCaBundle(values.caBundle, readFile) : undefined,
    caBundlePath: values.caBundle,
    networkId: values.networkId,
    zone: values.zone,
    allowedResources: readAllowedResources(values),
    loadBalancerHighAvailability: values.highAvailability,
    loadBalancerIpv4: values.loadBalancerIpv4,
    maxRequestsPerMinute: values.maxRequestsPerMinute,
    requestBurst: values.requestBurst,
    requestTimeoutMs: values.requestTimeout,
  };
  if (cloud.apiUrl.startsWith("http://")) {
    warnings.push("ANKRA_CLOUD_API_URL uses plain http (to a loopback address): use https outside tests");
  }
  if (values.master) checkMaster(values.master);
  if (values.requireLoadBalancerClass && !values.loadBalancerClass) {
    throw new ConfigError(
      "--require-load-balancer-class needs --load-balancer-class: name the class whose Services this controller serves",
    );
  }
  const reserved = values.nodeAddressReservedPorts?.toLowerCase() === "none"
    ? { ok: true as const, ranges: [] }
    : parseReservedPorts(values.nodeAddressReservedPorts ?? "");
  if (!reserved.ok) throw new ConfigError(`--node-address-reserved-ports: ${reserved.rule}`);
  return {
    cloudProvider: "ankracloud",
    clusterName: values.clusterName!,
    kubeconfig: values.kubeconfig,
    master: values.master,
    leaderElect: values.leaderElect && !values.dryRun,
    leaderElectResourceName: values.leaderElectResourceName!,
    leaderElectResourceNamespace: values.leaderElectResourceNamespace!,
    leaderElectLeaseDurationMs: values.leaderElectLeaseDuration,
    leaderElectRenewDeadlineMs: values.leaderElectRenewDeadline,
    leaderElectRetryPeriodMs: values.leaderElectRetryPeriod,
    securePort: values.securePort,
    bindAddress: values.bindAddress!,
    tlsCertFile: values.tlsCertFile,
    tlsPrivateKeyFile: values.tlsPrivateKeyFile,
    metricsAuthorization: values.metricsAuthorization,
    verbosity: values.verbosity,
    loggingFormat: values.loggingFormat,
    controllers,
    nodeStatusUpdateFrequencyMs: values.nodeStatusUpdateFrequency,
    nodeMonitorPeriodMs: values.nodeMonitorPeriod,
    serverListPeriodMs: values.serverListPeriod,
    nodeLabelsFromServer: parseServerLabelSelector(values.nodeLabelsFromServer),
    loadBalancerDriftPeriodMs: values.loadBalancerDriftPeriod,
    memberDrainPeriodMs: values.memberDrainPeriod,
    sweepLeakedLoadBalancers: values.sweepLeakedLoadBalancers,
    concurrentServiceSyncs: values.concurrentServiceSyncs,
    concurrentNodeSyncs: values.concurrentNodeSyncs,
    concurrentNodeLifecycleSyncs: values.concurrentNodeLifecycleSyncs,
    kubeApiQps: values.kubeApiQps,
    kubeApiBurst: values.kubeApiBurst,
    loadBalancerClass: values.loadBalancerClass,
    defaultLoadBalancerMode: values.defaultLoadBalancerMode,
    nodeAddressReservedPorts: reserved.ranges,
    requireLoadBalancerClass: values.requireLoadBalancerClass,
    dryRun: values.dryRun,
    cloud,
    warnings,
  };
}
