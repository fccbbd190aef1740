/**
 * The configuration of the controller: command-line flags and environment variables turned into one validated
 * {@linkcode Config}. Every flag and variable is declared once in the typed table {@linkcode OPTIONS} (name,
 * variable, default, help and how its value is read); `--help` and the parser both come from it.
 *
 * Flags and variables are those of the existing Go controller and its chart. Every other flag of the upstream
 * cloud-controller-manager command is accepted too ({@linkcode UPSTREAM_FLAGS}): with one warning when it changes
 * nothing here, silently when its value is what this controller does anyway, and refused with one line when its
 * meaning cannot be honoured. Flags take the forms `--name=value`, `--name value`, bare booleans, `-h` and `-v=N`,
 * with `_` or `-` in names, as the upstream command accepts them.
 *
 * Every problem is reported as a {@linkcode ConfigError}: one line naming the flag or variable and saying what to
 * do. The Ankra Cloud token is never put in a message.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { redact, registerSecret } from "./log.ts";
import type { HighAvailabilityMode } from "./provider/service_plan.ts";
import { UPSTREAM_FLAGS, type UpstreamFlag } from "./upstream_flags.ts";
import { PROGRAM, VERSION } from "./version.ts";

export type { HighAvailabilityMode };

/** Names of the controllers this binary runs, selected with `--controllers`. */
export type ControllerName = "cloud-node" | "cloud-node-lifecycle" | "service" | "route";

/** Settings for the Ankra Cloud API client. */
export interface CloudConfig {
  /** API token (never logged). */
  token: string;
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
  /** HA pair decision for new load balancers. */
  loadBalancerHighAvailability: HighAvailabilityMode;
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
  /** Log line format. */
  loggingFormat: "text" | "json";
  /** Controllers to run. */
  controllers: ControllerName[];
  /** Period of the address and label refresh of initialised nodes, milliseconds. */
  nodeStatusUpdateFrequencyMs: number;
  /** Period of the node lifecycle check, milliseconds. */
  nodeMonitorPeriodMs: number;
  /** Period of the shared server list, milliseconds. */
  serverListPeriodMs: number;
  /** Workers of the service controller. */
  concurrentServiceSyncs: number;
  /** Workers of the node controller. */
  concurrentNodeSyncs: number;
  /** Client-side request rate to the Kubernetes API, per second. */
  kubeApiQps: number;
  /** Client-side burst to the Kubernetes API. */
  kubeApiBurst: number;
  /** When set, Services with this `spec.loadBalancerClass` are handled too (besides those without a class). */
  loadBalancerClass?: string;
  /** Read everything, plan everything, write nothing (no Lease, no events, no patches, no Ankra writes). */
  dryRun: boolean;
  /** Ankra Cloud API settings. */
  cloud: CloudConfig;
  /** Non-fatal remarks about the configuration, logged at start-up. */
  warnings: string[];
}

/** A configuration problem: one line naming the flag or variable and what to do. */
export class ConfigError extends Error {
  /** Creates the error; `message` is the whole line shown to the user (registered secrets are redacted). */
  constructor(message: string) {
    super(redact(message));
    this.name = "ConfigError";
  }
}

/** What `resolveCommand` decided the process should do. */
export type Command =
  | { kind: "help"; text: string }
  | { kind: "version"; text: string }
  | { kind: "run"; config: Config }
  | { kind: "doctor"; output: "text" | "json"; config?: Config; problem?: string };

/** One flag or environment variable: its documentation and how its value is read. */
interface OptionSpec<T> {
  /** Flag name without dashes; absent for variable-only settings. */
  flag?: string;
  /** Environment variable that sets it when the flag is not given. */
  env?: string;
  /** How `--help` shows its value. */
  kind: "string" | "boolean" | "integer" | "number" | "duration";
  /** Default, as text. */
  default?: string;
  /** What it does. */
  help: string;
  /** Reads the value (trimmed; undefined when neither given nor defaulted); `label` names it in errors. */
  read(value: string | undefined, label: string): T;
}

const GO_TRUE = ["true", "1", "t", "T", "TRUE", "True"];
const GO_FALSE = ["false", "0", "f", "F", "FALSE", "False"];

/** Reads a Go-syntax boolean; undefined when it is not one. */
export function parseGoBoolean(value: string): boolean | undefined {
  if (GO_TRUE.includes(value)) return true;
  if (GO_FALSE.includes(value)) return false;
  return undefined;
}

function text(
  spec: Omit<OptionSpec<string | undefined>, "kind" | "read">,
  rule?: { pattern: RegExp; describe: string },
): OptionSpec<string | undefined> {
  return {
    ...spec,
    kind: "string",
    read(value, label) {
      if (value === undefined || value === "") {
        // A setting with a default may not be blanked out on the command line (`--cluster-name=`).
        if (spec.default && spec.flag) throw new ConfigError(`${label} must not be empty (default ${spec.default})`);
        return undefined;
      }
      if (rule && !rule.pattern.test(value)) {
        throw new ConfigError(`${label} ${rule.describe}, not "${value.slice(0, 80)}"`);
      }
      return value;
    },
  };
}

function bool(spec: Omit<OptionSpec<boolean>, "kind" | "read">): OptionSpec<boolean> {
  return {
    ...spec,
    kind: "boolean",
    read(value, label) {
      const parsed = parseGoBoolean(value ?? "false");
      if (parsed === undefined) throw new ConfigError(`${label} must be true or false, not "${value}"`);
      return parsed;
    },
  };
}

function whole(
  spec: Omit<OptionSpec<number>, "kind" | "read">,
  range: { min: number; max: number },
): OptionSpec<number> {
  return {
    ...spec,
    kind: "integer",
    read(value, label) {
      const parsed = /^-?\d+$/.test(value ?? "") ? Number(value) : NaN;
      if (!(parsed >= range.min && parsed <= range.max)) {
        throw new ConfigError(`${label} must be a whole number from ${range.min} to ${range.max}, not "${value}"`);
      }
      return parsed;
    },
  };
}

function optionalWhole(
  spec: Omit<OptionSpec<number | undefined>, "kind" | "read">,
  range: { min: number; max: number },
): OptionSpec<number | undefined> {
  const inner = whole(spec as Omit<OptionSpec<number>, "kind" | "read">, range);
  return { ...spec, kind: "integer", read: (value, label) => (value ? inner.read(value, label) : undefined) };
}

function decimal(
  spec: Omit<OptionSpec<number>, "kind" | "read">,
  range: { min: number; max: number },
): OptionSpec<number> {
  return {
    ...spec,
    kind: "number",
    read(value, label) {
      const parsed = /^\d+(\.\d+)?$/.test(value ?? "") ? Number(value) : NaN;
      if (!(parsed >= range.min && parsed <= range.max)) {
        throw new ConfigError(`${label} must be a number from ${range.min} to ${range.max}, not "${value}"`);
      }
      return parsed;
    },
  };
}

function duration(
  spec: Omit<OptionSpec<number>, "kind" | "read">,
  range: { minMs: number; maxMs: number },
): OptionSpec<number> {
  return {
    ...spec,
    kind: "duration",
    read(value, label) {
      const ms = parseDuration(value ?? "");
      if (ms === undefined || ms < range.minMs || ms > range.maxMs) {
        throw new ConfigError(
          `${label} must be a duration like 15s or 5m between ${range.minMs}ms and ${range.maxMs / 1000}s, ` +
            `not "${value}"`,
        );
      }
      return ms;
    },
  };
}

function choice<T extends string>(
  spec: Omit<OptionSpec<T>, "kind" | "read">,
  allowed: readonly T[],
  normalise: (value: string) => string = (v) => v,
): OptionSpec<T> {
  return {
    ...spec,
    kind: "string",
    read(value, label) {
      const normal = normalise(value ?? "");
      if (!(allowed as readonly string[]).includes(normal)) {
        throw new ConfigError(`${label} must be ${orList(allowed)}, not "${normal.slice(0, 40)}"`);
      }
      return normal as T;
    },
  };
}

function orList(values: readonly string[]): string {
  return values.length === 2 ? values.join(" or ") : `${values.slice(0, -1).join(", ")} or ${values.at(-1)}`;
}

const ID_RULE = { pattern: /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, describe: "must be an Ankra Cloud id" };

/** Every flag and environment variable, in `--help` order. */
export const OPTIONS = {
  cloudProvider: text({ flag: "cloud-provider", default: "ankracloud", help: "cloud provider name; only ankracloud" }),
  clusterName: text({
    flag: "cluster-name",
    default: "kubernetes",
    help: "cluster name: part of load balancer names and their ccm.ankra.cloud/cluster label; unique per account",
  }, {
    pattern: /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/,
    describe: "must be 1-63 letters, digits, '.', '_' or '-', starting and ending with a letter or digit",
  }),
  kubeconfig: text({ flag: "kubeconfig", help: "kubeconfig file; in-cluster configuration when empty" }),
  master: text({ flag: "master", help: "Kubernetes API server URL; overrides the kubeconfig's" }, {
    pattern: /^https?:\/\/\S+$/,
    describe: "must be an https:// URL",
  }),
  dryRun: bool({
    flag: "dry-run",
    default: "false",
    help: "read everything and log (and show on /metrics) every write a real run would make, writing nothing: no " +
      "Lease, no events, no patches, no Ankra Cloud changes",
  }),
  leaderElect: bool({ flag: "leader-elect", default: "true", help: "elect a leader on a Lease before doing work" }),
  leaderElectResourceName: text({
    flag: "leader-elect-resource-name",
    default: "ankra-cloud-ccm",
    help: "name of the leader election Lease",
  }, {
    pattern: /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/,
    describe: "must be a Kubernetes object name (lower-case letters, digits, '.', '-')",
  }),
  leaderElectResourceNamespace: text({
    flag: "leader-elect-resource-namespace",
    default: "kube-system",
    help: "namespace of the leader election Lease",
  }, { pattern: /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, describe: "must be a namespace name" }),
  leaderElectLeaseDuration: duration({
    flag: "leader-elect-lease-duration",
    default: "15s",
    help: "leader election lease duration",
  }, { minMs: 1000, maxMs: 600_000 }),
  leaderElectRenewDeadline: duration({
    flag: "leader-elect-renew-deadline",
    default: "10s",
    help: "leader election renew deadline",
  }, { minMs: 500, maxMs: 600_000 }),
  leaderElectRetryPeriod: duration({
    flag: "leader-elect-retry-period",
    default: "2s",
    help: "leader election retry period",
  }, { minMs: 100, maxMs: 600_000 }),
  securePort: whole({
    flag: "secure-port",
    default: "10258",
    help: "HTTPS port for /healthz, /readyz and /metrics; 0 disables",
  }, { min: 0, max: 65535 }),
  bindAddress: text({ flag: "bind-address", default: "0.0.0.0", help: "IP address the HTTPS server listens on" }, {
    pattern: /^(\d{1,3}(\.\d{1,3}){3}|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*)$/,
    describe: "must be an IP address such as 0.0.0.0, 127.0.0.1 or ::",
  }),
  tlsCertFile: text({ flag: "tls-cert-file", help: "serving certificate (PEM); self-signed in memory when empty" }),
  tlsPrivateKeyFile: text({ flag: "tls-private-key-file", help: "serving key (PEM), with --tls-cert-file" }),
  metricsAuthorization: choice(
    {
      flag: "metrics-authorization",
      default: "delegated",
      help: "who may read /metrics: delegated (TokenReview + SubjectAccessReview for get /metrics) or none (anyone)",
    },
    ["delegated", "none"] as const,
    (v) => v || "delegated",
  ),
  verbosity: whole({ flag: "v", default: "2", help: "log verbosity, 0-10" }, { min: 0, max: 10 }),
  loggingFormat: choice(
    { flag: "logging-format", default: "text", help: "log format: text or json" },
    [
      "text",
      "json",
    ] as const,
  ),
  controllers: text({
    flag: "controllers",
    default: "*",
    help: "controllers to run: * (all), names, -name to disable: cloud-node, cloud-node-lifecycle, service, route",
  }),
  nodeStatusUpdateFrequency: duration({
    flag: "node-status-update-frequency",
    default: "5m",
    help: "period of the address and label refresh of initialised nodes",
  }, { minMs: 1000, maxMs: 86_400_000 }),
  nodeMonitorPeriod: duration({
    flag: "node-monitor-period",
    default: "5s",
    help: "period of the node lifecycle check",
  }, { minMs: 100, maxMs: 3_600_000 }),
  serverListPeriod: duration({
    flag: "server-list-period",
    default: "60s",
    help: "period of the one shared list of Ankra servers that every node controller reads",
  }, { minMs: 1_000, maxMs: 3_600_000 }),
  concurrentServiceSyncs: whole({
    flag: "concurrent-service-syncs",
    default: "10",
    help: "service controller workers: Services reconciled side by side (each Service by one at a time)",
  }, { min: 1, max: 64 }),
  concurrentNodeSyncs: whole({
    flag: "concurrent-node-syncs",
    default: "4",
    help: "node controller workers: nodes initialised side by side",
  }, { min: 1, max: 64 }),
  kubeApiQps: decimal({ flag: "kube-api-qps", default: "50", help: "requests per second to the Kubernetes API" }, {
    min: 0.1,
    max: 10_000,
  }),
  kubeApiBurst: whole({ flag: "kube-api-burst", default: "100", help: "burst of requests to the Kubernetes API" }, {
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
    pattern: /^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/,
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
    default: "false",
    help: "accepted for compatibility; this controller allocates no CIDRs",
  }),
  configureCloudRoutes: bool({
    flag: "configure-cloud-routes",
    default: "false",
    help: "accepted for compatibility; this controller programs no routes",
  }),
  cloudConfig: text({
    flag: "cloud-config",
    help: "accepted for compatibility; ignored (configuration comes from the environment)",
  }),
  useServiceAccountCredentials: bool({
    flag: "use-service-account-credentials",
    default: "false",
    help: "accepted for compatibility; every controller uses the process's own credentials",
  }),
  help: bool({ flag: "help", default: "false", help: "print this help and exit (also -h)" }),
  version: text({ flag: "version", help: "print the version and exit; --version=raw adds the runtime and platform" }),
} as const;

type Options = typeof OPTIONS;
type Values = { [K in keyof Options]: ReturnType<Options[K]["read"]> };

const FLAG_OPTIONS = new Map<string, OptionSpec<unknown>>(
  Object.values(OPTIONS).filter((o) => "flag" in o && o.flag).map((o) => [o.flag as string, o]),
);
const UPSTREAM = new Map<string, UpstreamFlag>(UPSTREAM_FLAGS.map((f) => [f.name, f]));

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

/** Renders `--help`: usage, then every flag and environment variable with its default. */
export function helpText(): string {
  const lines = [
    `${PROGRAM} ${VERSION}: Kubernetes cloud controller manager for Ankra Cloud`,
    "",
    "Usage:",
    `  ${PROGRAM} [flags]                 run the controller`,
    `  ${PROGRAM} doctor [flags]          check the API, token, nodes, network and RBAC before installing`,
    "                                    (--output=text|json; exit 1 when a check fails)",
    "",
    "Flags (and the environment variable that can set them):",
  ];
  const options = Object.values(OPTIONS) as OptionSpec<unknown>[];
  for (const option of options) {
    if (!option.flag) continue;
    const name = option.kind === "boolean" ? `--${option.flag}[=true|false]` : `--${option.flag}=<${option.kind}>`;
    const env = option.env ? ` [env ${option.env}]` : "";
    const dflt = option.default !== undefined ? ` (default ${option.default})` : "";
    lines.push(`  ${name}${env}`, `      ${option.help}${dflt}`);
  }
  lines.push("", "Environment:");
  for (const option of options) {
    if (option.flag || !option.env) continue;
    const dflt = option.default !== undefined ? ` (default ${option.default})` : "";
    lines.push(`  ${option.env}`, `      ${option.help}${dflt}`);
  }
  lines.push(
    "",
    "Every other flag of the upstream cloud-controller-manager command is accepted: with a warning when it changes",
    "nothing here, refused with the reason when it cannot be honoured (docs/upstream_flags.md lists them).",
    "Durations are Go-style (500ms, 15s, 5m, 1h30m). The token is read from ANKRA_CLOUD_TOKEN or the token file",
    "and is never printed.",
  );
  return lines.join("\n");
}

/**
 * Parses a Go-style duration (`300ms`, `15s`, `1m30s`, `2h`) into milliseconds; `undefined` when malformed.
 */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === "0") return 0;
  const pattern = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let consumed = 0;
  for (const match of trimmed.matchAll(pattern)) {
    total += Number(match[1]) * units[match[2]];
    consumed += match[0].length;
  }
  if (consumed === 0 || consumed !== trimmed.length) return undefined;
  return Math.round(total);
}

function isBooleanFlag(name: string): boolean {
  return FLAG_OPTIONS.get(name)?.kind === "boolean" || UPSTREAM.get(name)?.kind === "bool";
}

/**
 * Brings the upstream command's spellings to one form: `_` in flag names becomes `-`, `-h` is `--help`, `-v=N`,
 * `-v N` and `-vN` are `--v=N`, and a bare boolean flag is `--flag=true` (a boolean never takes the next argument).
 */
function normaliseArgs(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      out.push(...args.slice(i));
      break;
    }
    if (arg === "-h") {
      out.push("--help=true");
      continue;
    }
    const short = /^-v(?:=?(.*))$/.exec(arg);
    if (short && !arg.startsWith("--")) {
      const value = short[1] !== "" ? short[1] : args[++i];
      out.push(`--v=${value ?? ""}`);
      continue;
    }
    const long = /^--([A-Za-z0-9_-]+)(=.*)?$/.exec(arg);
    if (!long) {
      out.push(arg);
      continue;
    }
    const name = long[1].replaceAll("_", "-");
    // `--version` alone means true; `--version=raw` asks for more.
    if (long[2] === undefined && (isBooleanFlag(name) || name === "version")) out.push(`--${name}=true`);
    else out.push(`--${name}${long[2] ?? ""}`);
  }
  return out;
}

function describeParseError(cause: unknown): string {
  const message = cause instanceof Error ? cause.message : String(cause);
  const unknown = /Unknown option '([^'=]+)/.exec(message);
  if (unknown) return `unknown flag ${unknown[1]}: see --help for the flags ${PROGRAM} accepts`;
  const missing = /Option '([^']+)' argument missing/.exec(message);
  if (missing) {
    const flag = missing[1].split(/[ ,]/).find((part) => part.startsWith("--")) ?? missing[1];
    return `flag ${flag} needs a value: write ${flag}=<value>`;
  }
  return `bad command line: ${message.split("\n")[0]}; see --help`;
}

/** The flags given: the last value of each of ours, every value of the upstream ones. */
interface GivenFlags {
  ours: Map<string, string>;
  upstream: Map<string, string[]>;
}

function readArgs(args: string[], extra: string[] = []): GivenFlags {
  const options: Record<string, { type: "string"; multiple: true }> = {};
  for (const name of [...FLAG_OPTIONS.keys(), ...UPSTREAM.keys(), ...extra]) {
    options[name] = { type: "string", multiple: true };
  }
  let values: Record<string, (string | boolean)[] | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: normaliseArgs(args),
      options,
      strict: true,
      allowPositionals: true,
    }) as unknown as { values: Record<string, (string | boolean)[] | undefined>; positionals: string[] });
  } catch (cause) {
    throw new ConfigError(describeParseError(cause));
  }
  if (positionals.length > 0) {
    throw new ConfigError(
      `unexpected argument "${positionals[0].slice(0, 40)}": flags take the form --name=value; see --help`,
    );
  }
  const given: GivenFlags = { ours: new Map(), upstream: new Map() };
  for (const [name, list] of Object.entries(values)) {
    if (!list || list.length === 0) continue;
    if (FLAG_OPTIONS.has(name) || extra.includes(name)) given.ours.set(name, String(list.at(-1)).trim());
    else given.upstream.set(name, list.map((v) => String(v).trim()));
  }
  return given;
}

/** Reads every option in table order: the flag, else the (non-blank) variable, else the default. */
function readOptions(given: GivenFlags, env: Record<string, string | undefined>): Values {
  const values: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(OPTIONS) as [string, OptionSpec<unknown>][]) {
    let raw: string | undefined;
    let label = spec.flag ? `--${spec.flag}` : `${spec.env}`;
    if (spec.flag && given.ours.has(spec.flag)) raw = given.ours.get(spec.flag);
    else if (spec.env && env[spec.env] !== undefined && env[spec.env]!.trim() !== "") {
      raw = env[spec.env]!.trim();
      label = spec.env;
    } else raw = spec.default;
    values[key] = spec.read(raw, label);
  }
  return values as Values;
}

/**
 * What the upstream flags given ask for: warnings for those that change nothing here; a {@linkcode ConfigError} for
 * the first one that cannot be honoured.
 */
export function upstreamFlagWarnings(given: Map<string, string[]>): string[] {
  const warnings: string[] = [];
  for (const [name, values] of given) {
    const flag = UPSTREAM.get(name)!;
    let value = values.join(",");
    if (flag.kind === "bool") {
      const parsed = values.map(parseGoBoolean);
      if (parsed.some((p) => p === undefined)) {
        throw new ConfigError(`--${name} must be true or false, not "${values.join(",").slice(0, 40)}"`);
      }
      value = String(parsed.at(-1));
    }
    if (flag.silentValues?.includes(value)) continue;
    if (flag.effect === "refused" || flag.refusedValues?.includes(value)) {
      throw new ConfigError(`--${name}=${value.slice(0, 80)} cannot be honoured: ${flag.note}`);
    }
    warnings.push(`--${name}=${value.slice(0, 80)} is accepted for compatibility and changes nothing: ${flag.note}`);
  }
  return warnings;
}

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

function readToken(values: Values, readFile: (path: string) => string): string {
  const direct = values.token;
  const file = values.tokenFile;
  if (direct && file) {
    throw new ConfigError(
      "both ANKRA_CLOUD_TOKEN and --ankra-cloud-token-file (ANKRA_CLOUD_TOKEN_FILE) are set: keep only one",
    );
  }
  let token = direct;
  if (file) {
    try {
      token = readFile(file).trim();
      registerSecret(token);
    } catch (cause) {
      const why = cause instanceof Deno.errors.NotFound ? "it does not exist" : "it cannot be read";
      throw new ConfigError(`--ankra-cloud-token-file ${file}: ${why}; point it at the file holding the API token`);
    }
    if (!token) throw new ConfigError(`--ankra-cloud-token-file ${file} is empty: put the API token in it`);
  }
  if (token) registerSecret(token);
  if (!token) {
    throw new ConfigError(
      "ANKRA_CLOUD_TOKEN is not set: give the controller an Ankra Cloud API token with operate permission " +
        "(ANKRA_CLOUD_TOKEN or --ankra-cloud-token-file)",
    );
  }
  if (/\s/.test(token)) {
    throw new ConfigError("the Ankra Cloud API token contains white space: check ANKRA_CLOUD_TOKEN or the token file");
  }
  return token;
}

function readCaBundle(path: string, readFile: (path: string) => string): string {
  let text: string;
  try {
    text = readFile(path);
  } catch (cause) {
    const why = cause instanceof Deno.errors.NotFound ? "does not exist" : "cannot be read";
    throw new ConfigError(`ANKRA_CLOUD_CA_BUNDLE ${path} ${why}: point it at a PEM file of CA certificates`);
  }
  if (!/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.test(text)) {
    throw new ConfigError(`ANKRA_CLOUD_CA_BUNDLE ${path} holds no PEM certificate: use a file of CA certificates`);
  }
  return text;
}

function readApiUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`ANKRA_CLOUD_API_URL "${value.slice(0, 80)}" is not a URL: use e.g. https://cloud.ankra.app`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ConfigError(`ANKRA_CLOUD_API_URL must be an https:// URL, not "${value.slice(0, 80)}"`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new ConfigError("ANKRA_CLOUD_API_URL must not carry credentials, a query or a fragment: give the base URL");
  }
  return url.toString().replace(/\/+$/, "");
}

/** Sources the configuration reads; tests pass their own. */
export interface ConfigSources {
  /** Environment variables. */
  env: Record<string, string | undefined>;
  /** Reads a text file (token file, CA bundle). */
  readFile?: (path: string) => string;
}

function versionText(value: string): string | undefined {
  if (value === "raw") {
    return [
      `${PROGRAM} ${VERSION}`,
      `  runtime: deno ${Deno.version.deno} (v8 ${Deno.version.v8})`,
      `  platform: ${Deno.build.os}/${Deno.build.arch === "x86_64" ? "amd64" : "arm64"}`,
    ].join("\n");
  }
  const asBoolean = parseGoBoolean(value);
  if (asBoolean === undefined) {
    throw new ConfigError(`--version must be true, false or raw, not "${value.slice(0, 40)}"`);
  }
  return asBoolean ? `${PROGRAM} ${VERSION}` : undefined;
}

/**
 * Decides what the process does from its arguments and environment: print help or the version, run the doctor, or
 * run the controller with a validated {@linkcode Config}.
 *
 * @throws {ConfigError} on any bad or missing setting (for `doctor`, only on a bad command line: a bad setting is
 * reported as its first finding).
 */
export function resolveCommand(args: string[], sources: ConfigSources): Command {
  const readFile = sources.readFile ?? Deno.readTextFileSync;
  if (args[0] === "doctor") {
    const given = readArgs(args.slice(1), ["output"]);
    if (given.ours.get("help") === "true") return { kind: "help", text: helpText() };
    const output = given.ours.get("output") ?? "text";
    if (output !== "text" && output !== "json") {
      throw new ConfigError(`--output must be text or json, not "${output.slice(0, 40)}"`);
    }
    given.ours.delete("output");
    try {
      return { kind: "doctor", output, config: buildConfig(given, sources.env, readFile) };
    } catch (cause) {
      if (cause instanceof ConfigError) return { kind: "doctor", output, problem: cause.message };
      throw cause;
    }
  }
  const given = readArgs(args);
  const help = given.ours.get("help");
  if (help !== undefined && parseGoBoolean(help)) return { kind: "help", text: helpText() };
  const version = given.ours.get("version");
  if (version !== undefined) {
    const text = versionText(version);
    if (text) return { kind: "version", text };
  }
  return { kind: "run", config: buildConfig(given, sources.env, readFile) };
}

function buildConfig(
  given: GivenFlags,
  env: Record<string, string | undefined>,
  readFile: (path: string) => string,
): Config {
  const values = readOptions(given, env);
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
    apiUrl: readApiUrl(values.apiUrl ?? ""),
    caBundle: values.caBundle ? readCaBundle(values.caBundle, readFile) : undefined,
    caBundlePath: values.caBundle,
    networkId: values.networkId,
    zone: values.zone,
    loadBalancerHighAvailability: values.highAvailability,
    maxRequestsPerMinute: values.maxRequestsPerMinute,
    requestBurst: values.requestBurst,
    requestTimeoutMs: values.requestTimeout,
  };
  if (cloud.apiUrl.startsWith("http://")) {
    warnings.push("ANKRA_CLOUD_API_URL uses plain http: the token travels unencrypted; use https outside tests");
  }
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
    concurrentServiceSyncs: values.concurrentServiceSyncs,
    concurrentNodeSyncs: values.concurrentNodeSyncs,
    kubeApiQps: values.kubeApiQps,
    kubeApiBurst: values.kubeApiBurst,
    loadBalancerClass: values.loadBalancerClass,
    dryRun: values.dryRun,
    cloud,
    warnings,
  };
}
