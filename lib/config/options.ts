/**
 * Every flag and environment variable of the controller, declared once in the typed table {@linkcode OPTIONS} (name,
 * variable, default, help, upstream default and how its value is read); `--help` (`help_text.ts`),
 * `docs/upstream_flags.md` and the reading of values ({@linkcode readOptions}) all come from it. Flags and variables
 * are those of the existing Go controller and its chart, plus this controller's own.
 *
 * To add a setting: add an entry here, a field to `Config` in `config.ts`, and map it in `buildConfig` there.
 *
 * @module
 */
import { ANNOTATION_PREFIX, CLUSTER_LABEL, NODE_ADDRESSES_CLASS } from "../ankra_names.ts";
import { DEFAULT_RESERVED_PORTS } from "../provider/service/reserved_ports.ts";
import { SERVER_LABEL_SELECTOR } from "../provider/node/server_labels.ts";
import { ANKRA_ID, ANKRA_ID_WORDS, ZONE_NAME } from "../cloud/ids.ts";
import { bool, choice, decimal, duration, optionalWhole, type OptionSpec, text, whole } from "./option_readers.ts";

const ID_RULE = { pattern: ANKRA_ID, describe: "must be an Ankra Cloud id" };
const ONE_ID = ANKRA_ID.source.slice(1, -1);
/** An allow-list: comma-separated ids (spaces around the commas allowed); `readAllowedResources` splits it. */
const ID_LIST_RULE = {
  pattern: new RegExp(`^${ONE_ID}(\\s*,\\s*${ONE_ID})*$`),
  describe: `must be comma-separated Ankra Cloud ids (${ANKRA_ID_WORDS})`,
};

/** Every flag and environment variable, in `--help` order. */
export const OPTIONS = {
  cloudProvider: text({
    flag: "cloud-provider",
    upstream: { default: "", difference: "upstream requires it; only `ankracloud` is accepted" },
    default: "ankracloud",
    help: "cloud provider name; only ankracloud",
  }),
  clusterName: text({
    flag: "cluster-name",
    upstream: {
      default: "kubernetes",
      difference: `part of load balancer names and their \`${CLUSTER_LABEL}\` label`,
    },
    default: "kubernetes",
    help: `cluster name: part of load balancer names and their ${CLUSTER_LABEL} label; unique per account`,
  }, {
    pattern: /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/,
    describe: "must be 1-63 letters, digits, '.', '_' or '-', starting and ending with a letter or digit",
  }),
  kubeconfig: text({
    flag: "kubeconfig",
    upstream: { default: "" },
    help: "kubeconfig file; in-cluster configuration when empty",
  }),
  master: text({
    flag: "master",
    upstream: { default: "" },
    help: "Kubernetes API server URL; overrides the kubeconfig's",
  }, {
    pattern: /^https?:\/\/\S+$/,
    describe: "must be an https:// URL (http:// only to a loopback address)",
  }),
  dryRun: bool({
    flag: "dry-run",
    default: "false",
    help: "read everything and log (and show on /metrics) every write a real run would make, writing nothing: no " +
      "Lease, no events, no patches, no Ankra Cloud changes",
  }),
  leaderElect: bool({
    flag: "leader-elect",
    upstream: { default: "true", difference: "always on a Lease; a dry run takes none" },
    default: "true",
    help: "elect a leader on a Lease before doing work",
  }),
  leaderElectResourceName: text({
    flag: "leader-elect-resource-name",
    upstream: {
      default: "cloud-controller-manager",
      difference: "other default Lease name (the chart passes it explicitly)",
    },
    default: "ankra-cloud-ccm",
    help: "name of the leader election Lease",
  }, {
    pattern: /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/,
    describe: "must be a Kubernetes object name (lower-case letters, digits, '.', '-')",
  }),
  leaderElectResourceNamespace: text({
    flag: "leader-elect-resource-namespace",
    upstream: { default: "kube-system" },
    default: "kube-system",
    help: "namespace of the leader election Lease",
  }, { pattern: /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, describe: "must be a namespace name" }),
  leaderElectLeaseDuration: duration({
    flag: "leader-elect-lease-duration",
    upstream: { default: "15s" },
    default: "15s",
    help: "leader election lease duration",
  }, { minMs: 1000, maxMs: 600_000 }),
  leaderElectRenewDeadline: duration({
    flag: "leader-elect-renew-deadline",
    upstream: { default: "10s" },
    default: "10s",
    help: "leader election renew deadline",
  }, { minMs: 500, maxMs: 600_000 }),
  leaderElectRetryPeriod: duration({
    flag: "leader-elect-retry-period",
    upstream: { default: "2s" },
    default: "2s",
    help: "leader election retry period",
  }, { minMs: 100, maxMs: 600_000 }),
  securePort: whole({
    flag: "secure-port",
    upstream: { default: "10258", difference: "serves `/healthz`, `/livez`, `/readyz` and `/metrics` only" },
    default: "10258",
    help: "HTTPS port for /healthz, /readyz and /metrics; 0 disables",
  }, { min: 0, max: 65535 }),
  bindAddress: text({
    flag: "bind-address",
    upstream: { default: "0.0.0.0" },
    default: "0.0.0.0",
    help: "IP address the HTTPS server listens on",
  }, {
    pattern: /^(\d{1,3}(\.\d{1,3}){3}|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*)$/,
    describe: "must be an IP address such as 0.0.0.0, 127.0.0.1 or ::",
  }),
  tlsCertFile: text({
    flag: "tls-cert-file",
    upstream: { default: "" },
    help: "serving certificate (PEM); self-signed in memory when empty",
  }),
  tlsPrivateKeyFile: text({
    flag: "tls-private-key-file",
    upstream: { default: "" },
    help: "serving key (PEM), with --tls-cert-file",
  }),
  metricsAuthorization: choice(
    {
      flag: "metrics-authorization",
      default: "delegated",
      help: "who may read /metrics: delegated (TokenReview + SubjectAccessReview for get /metrics) or none (anyone)",
    },
    ["delegated", "none"] as const,
    (v) => v || "delegated",
  ),
  verbosity: whole({
    flag: "v",
    upstream: { default: "0", difference: "more log lines by default; 0 to 10; `-v` works too" },
    default: "2",
    help: "log verbosity, 0-10",
  }, { min: 0, max: 10 }),
  loggingFormat: choice(
    {
      flag: "logging-format",
      upstream: { default: "text", difference: "`text` or `json`" },
      default: "text",
      help: "log format: text or json",
    },
    [
      "text",
      "json",
    ] as const,
  ),
  controllers: text({
    flag: "controllers",
    upstream: {
      default: "*",
      difference:
        "`cloud-node`, `cloud-node-lifecycle`, `service` (also by their `…-controller` names); `route` / `node-route-controller` accepted and does nothing",
    },
    default: "*",
    help: "controllers to run: * (all), names, -name to disable: cloud-node, cloud-node-lifecycle, service, route",
  }),
  nodeStatusUpdateFrequency: duration({
    flag: "node-status-update-frequency",
    upstream: { default: "5m0s" },
    default: "5m",
    help: "period of the address and label refresh of initialised nodes",
  }, { minMs: 1000, maxMs: 86_400_000 }),
  nodeMonitorPeriod: duration({
    flag: "node-monitor-period",
    upstream: { default: "5s" },
    default: "5s",
    help: "period of the node lifecycle check",
  }, { minMs: 100, maxMs: 3_600_000 }),
  nodeLabelsFromServer: text({
    flag: "node-labels-from-server",
    help: "copy these Ankra server labels onto each server's Node under server.ankra.cloud (pool as " +
      "server.ankra.cloud/pool, team.example/pool as team.example.server.ankra.cloud/pool), kept in step within " +
      "--server-list-period: comma-separated label keys; an item ending in * copies every key it starts " +
      "(team.example/*), one of just * every label; every Node label under server.ankra.cloud is then the " +
      "controller's; empty (the default) copies none",
  }, {
    pattern: SERVER_LABEL_SELECTOR,
    describe: "must be comma-separated server label keys, key prefixes ending in * (e.g. pool,team.example/*), or *",
  }),
  serverListPeriod: duration({
    flag: "server-list-period",
    default: "60s",
    help: "period of the one shared list of Ankra servers that the node controllers and node-address mode read (a " +
      "server's new public address reaches node-address Services within it)",
  }, { minMs: 1_000, maxMs: 3_600_000 }),
  loadBalancerDriftPeriod: duration({
    flag: "load-balancer-drift-period",
    default: "10m",
    help: "each Service's load balancer is read again at least this often, even without a change; one deleted " +
      "outside the cluster is then made again",
  }, { minMs: 1_000, maxMs: 86_400_000 }),
  memberDrainPeriod: duration({
    flag: "member-drain-period",
    default: "30s",
    help: "a node that stops being a load balancer member first gets weight 0 and leaves after this long: it gets " +
      "no new connections, and open ones continue until they end or the load balancer's reload hard stop " +
      "(HAProxy's hard-stop-after, counted from the change) ends them; a node that stops serving a node-address " +
      "Service stays in its status this long; 0 removes it at once",
  }, { minMs: 0, maxMs: 3_600_000 }),
  sweepLeakedLoadBalancers: bool({
    flag: "sweep-leaked-load-balancers",
    default: "true",
    help: "delete load balancers labelled for this cluster whose Service no longer exists (absent in two checks a " +
      "drift period apart; never while the Ankra Cloud API fails, only reported in a dry run)",
  }),
  concurrentServiceSyncs: whole({
    flag: "concurrent-service-syncs",
    upstream: {
      default: "1",
      difference: "Services are reconciled side by side by default (each by one worker at a time); at most 64",
    },
    default: "10",
    help: "service controller workers: Services reconciled side by side (each Service by one at a time)",
  }, { min: 1, max: 64 }),
  concurrentNodeSyncs: whole({
    flag: "concurrent-node-syncs",
    upstream: { default: "1", difference: "nodes are initialised side by side by default; at most 64" },
    default: "4",
    help: "node controller workers: nodes initialised side by side",
  }, { min: 1, max: 64 }),
  concurrentNodeLifecycleSyncs: whole({
    flag: "concurrent-node-lifecycle-syncs",
    upstream: {
      default: "1",
      difference:
        "the nodes a lifecycle pass acts on are tainted, looked up or deleted side by side by default; at most 64",
    },
    default: "4",
    help: "cloud-node-lifecycle workers: nodes a lifecycle pass acts on (shutdown taint, server look-up, deletion) " +
      "side by side",
  }, { min: 1, max: 64 }),
  kubeApiQps: decimal({
    flag: "kube-api-qps",
    upstream: { default: "20", difference: "higher default, so bursts of node and Service writes are not held back" },
    default: "50",
    help: "requests per second to the Kubernetes API",
  }, {
    min: 0.1,
    max: 10_000,
  }),
  kubeApiBurst: whole({
    flag: "kube-api-burst",
    upstream: { default: "30", difference: "higher default, so bursts of node and Service writes are not held back" },
    default: "100",
    help: "burst of requests to the Kubernetes API",
  }, {
    min: 1,
    max: 10_000,
  }),
  loadBalancerClass: text({
    flag: "load-balancer-class",
    help: "also handle Services with this spec.loadBalancerClass (those without a class are always handled)",
  }, {
    pattern: /^([a-z0-9]([a-z0-9.-]*[a-z0-9])?\/)?[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/,
    describe: "must be a label-style name such as ankra.cloud/load-balancer",
  }),
  defaultLoadBalancerMode: choice(
    {
      flag: "default-load-balancer-mode",
      default: "load-balancer",
      help: `how a Service without ${ANNOTATION_PREFIX}mode (or the class ${NODE_ADDRESSES_CLASS}) is served: ` +
        "load-balancer (an Ankra load balancer) or node-addresses (its nodes' public addresses, no load balancer)",
    },
    ["load-balancer", "node-addresses"] as const,
  ),
  nodeAddressReservedPorts: text({
    flag: "node-address-reserved-ports",
    default: DEFAULT_RESERVED_PORTS,
    help: "ports a node-address Service may not claim on the nodes' own addresses (the host's and the cluster's): " +
      "port, from-to, each optionally /tcp, /udp or /sctp (tcp when none); none reserves nothing",
  }, {
    pattern: /^(none|\d{1,5}(-\d{1,5})?(\/(tcp|udp|sctp))?(\s*,\s*\d{1,5}(-\d{1,5})?(\/(tcp|udp|sctp))?)*)$/i,
    describe: "must be comma-separated ports or ranges such as 22,10248-10259,8472/udp, or none",
  }),
  requireLoadBalancerClass: bool({
    flag: "require-load-balancer-class",
    default: "false",
    help:
      "handle only Services whose spec.loadBalancerClass is --load-balancer-class; those without a class are left " +
      "to another load-balancer implementation (no load balancer, event or finalizer)",
  }),
  tokenFile: text({
    flag: "ankra-cloud-token-file",
    env: "ANKRA_CLOUD_TOKEN_FILE",
    help: "file holding the Ankra Cloud API token (instead of ANKRA_CLOUD_TOKEN; for systemd credentials)",
  }),
  token: text({ env: "ANKRA_CLOUD_TOKEN", help: "Ankra Cloud API token with operate permission" }),
  apiUrl: text({ env: "ANKRA_CLOUD_API_URL", default: "https://cloud.ankra.app", help: "API base URL" }),
  caBundle: text({ env: "ANKRA_CLOUD_CA_BUNDLE", help: "PEM file of extra certificate authorities for the API" }),
  networkId: text({ env: "ANKRA_CLOUD_NETWORK_ID", help: "default private network for load balancers" }, ID_RULE),
  zone: text({ env: "ANKRA_CLOUD_ZONE", help: "default zone for load balancers" }, {
    pattern: ZONE_NAME,
    describe: "must be a zone name such as de-fsn1",
  }),
  highAvailability: choice(
    {
      env: "ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY",
      default: "auto",
      help: "HA pairs for new load balancers: auto (from the zone), true or false",
    },
    ["auto", "true", "false"] as const,
    (v) => (v || "auto").toLowerCase(),
  ),
  loadBalancerIpv4: bool({
    env: "ANKRA_CLOUD_LOAD_BALANCER_IPV4",
    default: "false",
    help: `give new load balancers the paid public IPv4 address unless a Service's ${ANNOTATION_PREFIX}ipv4 ` +
      "says otherwise (IPv4-only clusters: Pods can reach the address)",
  }),
  allowedCertificateIds: text({
    env: "ANKRA_CLOUD_ALLOWED_CERTIFICATE_IDS",
    help: `comma-separated certificate ids a Service may name in ${ANNOTATION_PREFIX}certificate-ids; unset: ` +
      "any certificate of the account",
  }, ID_LIST_RULE),
  allowedEdges: text({
    env: "ANKRA_CLOUD_ALLOWED_EDGES",
    help: `comma-separated edge ids a Service may name in ${ANNOTATION_PREFIX}edge; unset: any edge of the account`,
  }, ID_LIST_RULE),
  allowedNetworkIds: text({
    env: "ANKRA_CLOUD_ALLOWED_NETWORK_IDS",
    help: `comma-separated network ids a Service may name in ${ANNOTATION_PREFIX}network-id (and ` +
      "ANKRA_CLOUD_NETWORK_ID must be one); unset: any network of the account",
  }, ID_LIST_RULE),
  maxRequestsPerMinute: optionalWhole({
    env: "ANKRA_CLOUD_REQUESTS_PER_MINUTE",
    help: "optional upper bound on API requests per minute; without it the controller follows the API's own " +
      "X-RateLimit headers and never needs a 429",
  }, { min: 1, max: 100_000 }),
  requestBurst: optionalWhole({
    env: "ANKRA_CLOUD_REQUEST_BURST",
    help: "burst of the upper bound (default a tenth of it)",
  }, { min: 1, max: 10_000 }),
  requestTimeout: duration({ env: "ANKRA_CLOUD_REQUEST_TIMEOUT", default: "30s", help: "timeout of one API request" }, {
    minMs: 100,
    maxMs: 600_000,
  }),
  allocateNodeCidrs: bool({
    flag: "allocate-node-cidrs",
    upstream: { default: "false", difference: "`true` is ignored with a warning: no pod CIDRs are allocated" },
    default: "false",
    help: "accepted for compatibility; this controller allocates no CIDRs",
  }),
  configureCloudRoutes: bool({
    flag: "configure-cloud-routes",
    upstream: { default: "true", difference: "`true` is ignored with a warning: no routes are programmed" },
    default: "false",
    help: "accepted for compatibility; this controller programs no routes",
  }),
  cloudConfig: text({
    flag: "cloud-config",
    upstream: {
      default: "",
      difference: "a file given is ignored with a warning: configuration comes from `ANKRA_CLOUD_*` variables",
    },
    help: "accepted for compatibility; ignored (configuration comes from the environment)",
  }),
  useServiceAccountCredentials: bool({
    flag: "use-service-account-credentials",
    upstream: { default: "false", difference: "accepted; every controller uses the process's own credentials" },
    default: "false",
    help: "accepted for compatibility; every controller uses the process's own credentials",
  }),
  help: bool({
    flag: "help",
    upstream: { default: "", difference: "`-h` works too" },
    default: "false",
    help: "print this help and exit (also -h)",
  }),
  version: text({
    flag: "version",
    upstream: {
      default: "false",
      difference: "`--version=raw` adds the runtime and platform; upstream's `--version=vX.Y.Z` is not accepted",
    },
    help: "print the version and exit; --version=raw adds the runtime and platform",
  }),
} as const;

/** The table's type. */
type Options = typeof OPTIONS;

/** What {@linkcode readOptions} returns: each option's value, keyed like {@linkcode OPTIONS}. */
export type OptionValues = { [K in keyof Options]: ReturnType<Options[K]["read"]> };

const FLAG_OPTIONS = new Map<string, OptionSpec<unknown>>(
  (Object.values(OPTIONS) as OptionSpec<unknown>[]).filter((o) => o.flag).map((o) => [o.flag as string, o]),
);

/** Every flag name (without dashes) of the table, in `--help` order. */
export function optionFlagNames(): string[] {
  return [...FLAG_OPTIONS.keys()];
}

/** The option a flag name (without dashes) sets; undefined for a name not in the table. */
export function optionForFlag(name: string): OptionSpec<unknown> | undefined {
  return FLAG_OPTIONS.get(name);
}

/**
 * Reads every option in table order: the flag (the last value given), else the (non-blank, trimmed) variable, else
 * the default.
 *
 * @throws {ConfigError} for the first value that breaks its option's rule, naming the flag or variable it came from.
 */
export function readOptions(flags: ReadonlyMap<string, string>, env: Record<string, string | undefined>): OptionValues {
  const values: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(OPTIONS) as [string, OptionSpec<unknown>][]) {
    let raw: string | undefined;
    let label = spec.flag ? `--${spec.flag}` : `${spec.env}`;
    if (spec.flag && flags.has(spec.flag)) raw = flags.get(spec.flag);
    else if (spec.env && env[spec.env] !== undefined && env[spec.env]!.trim() !== "") {
      raw = env[spec.env]!.trim();
      label = spec.env;
    } else raw = spec.default;
    values[key] = spec.read(raw, label);
  }
  return values as OptionValues;
}
