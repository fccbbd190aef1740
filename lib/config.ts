/**
 * The configuration of the controller: command-line flags and environment variables turned into one validated
 * {@linkcode Config}. Flags and variables are those of the existing Go controller and its chart; framework flags the
 * chart passes that this controller does not need are accepted and ignored (with a warning when they ask for
 * something this controller does not do).
 *
 * Every problem is reported as a {@linkcode ConfigError} whose message is one line naming the flag or variable and
 * saying what to do. The Ankra Cloud token is never put in a message.
 *
 * @module
 */
import { parseArgs } from "node:util";
import * as v from "valibot";
import { redact, registerSecret } from "./log.ts";
import { PROGRAM, VERSION } from "./version.ts";

/** Whether new load balancers are HA pairs: decided from the zone (`auto`), always, or never. */
export type HighAvailabilityMode = "auto" | "true" | "false";

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
  /** Sustained request budget of the whole process, requests per minute. */
  requestsPerMinute: number;
  /** Largest burst the budget allows. */
  requestBurst: number;
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
  | { kind: "run"; config: Config };

type OptionKind = "string" | "boolean" | "integer" | "duration";

interface OptionSpec {
  flag: string;
  env?: string;
  kind: OptionKind;
  default?: string;
  help: string;
  /** Accepted for compatibility with the framework's command line; has no effect. */
  compat?: boolean;
}

/** Every flag and environment variable, in `--help` order. */
const OPTIONS: readonly OptionSpec[] = [
  { flag: "cloud-provider", kind: "string", default: "ankracloud", help: "cloud provider name; only ankracloud" },
  {
    flag: "cluster-name",
    kind: "string",
    default: "kubernetes",
    help: "cluster name: part of load balancer names and their ccm.ankra.cloud/cluster label; unique per account",
  },
  { flag: "kubeconfig", kind: "string", help: "kubeconfig file; in-cluster configuration when empty" },
  { flag: "master", kind: "string", help: "Kubernetes API server URL; overrides the kubeconfig's" },
  { flag: "leader-elect", kind: "boolean", default: "true", help: "elect a leader on a Lease before doing work" },
  {
    flag: "leader-elect-resource-name",
    kind: "string",
    default: "ankra-cloud-ccm",
    help: "name of the leader election Lease",
  },
  {
    flag: "leader-elect-resource-namespace",
    kind: "string",
    default: "kube-system",
    help: "namespace of the leader election Lease",
  },
  { flag: "leader-elect-lease-duration", kind: "duration", default: "15s", help: "leader election lease duration" },
  { flag: "leader-elect-renew-deadline", kind: "duration", default: "10s", help: "leader election renew deadline" },
  { flag: "leader-elect-retry-period", kind: "duration", default: "2s", help: "leader election retry period" },
  {
    flag: "secure-port",
    kind: "integer",
    default: "10258",
    help: "HTTPS port for /healthz, /readyz and /metrics; 0 disables",
  },
  { flag: "bind-address", kind: "string", default: "0.0.0.0", help: "address the HTTPS server listens on" },
  { flag: "tls-cert-file", kind: "string", help: "serving certificate (PEM); self-signed in memory when empty" },
  { flag: "tls-private-key-file", kind: "string", help: "serving key (PEM), with --tls-cert-file" },
  {
    flag: "metrics-authorization",
    kind: "string",
    default: "delegated",
    help: "who may read /metrics: delegated (TokenReview + SubjectAccessReview for get /metrics) or none (anyone)",
  },
  { flag: "v", kind: "integer", default: "2", help: "log verbosity, 0-10" },
  { flag: "logging-format", kind: "string", default: "text", help: "log format: text or json" },
  {
    flag: "controllers",
    kind: "string",
    default: "*",
    help: "controllers to run: * (all), names, -name to disable: cloud-node, cloud-node-lifecycle, service, route",
  },
  {
    flag: "node-status-update-frequency",
    kind: "duration",
    default: "5m",
    help: "period of the address and label refresh of initialised nodes",
  },
  { flag: "node-monitor-period", kind: "duration", default: "5s", help: "period of the node lifecycle check" },
  {
    flag: "server-list-period",
    kind: "duration",
    default: "60s",
    help: "period of the one shared list of Ankra servers that every node controller reads",
  },
  { flag: "concurrent-service-syncs", kind: "integer", default: "1", help: "service controller workers" },
  { flag: "concurrent-node-syncs", kind: "integer", default: "1", help: "node controller workers" },
  { flag: "kube-api-qps", kind: "integer", default: "20", help: "requests per second to the Kubernetes API" },
  { flag: "kube-api-burst", kind: "integer", default: "30", help: "burst of requests to the Kubernetes API" },
  {
    flag: "load-balancer-class",
    kind: "string",
    help: "also handle Services with this spec.loadBalancerClass (those without a class are always handled)",
  },
  {
    flag: "ankra-cloud-token-file",
    env: "ANKRA_CLOUD_TOKEN_FILE",
    kind: "string",
    help: "file holding the Ankra Cloud API token (instead of ANKRA_CLOUD_TOKEN; for systemd credentials)",
  },
  { flag: "", env: "ANKRA_CLOUD_TOKEN", kind: "string", help: "Ankra Cloud API token with operate permission" },
  { flag: "", env: "ANKRA_CLOUD_API_URL", kind: "string", default: "https://cloud.ankra.app", help: "API base URL" },
  {
    flag: "",
    env: "ANKRA_CLOUD_CA_BUNDLE",
    kind: "string",
    help: "PEM file of extra certificate authorities for the API",
  },
  { flag: "", env: "ANKRA_CLOUD_NETWORK_ID", kind: "string", help: "default private network for load balancers" },
  { flag: "", env: "ANKRA_CLOUD_ZONE", kind: "string", help: "default zone for load balancers" },
  {
    flag: "",
    env: "ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY",
    kind: "string",
    default: "auto",
    help: "HA pairs for new load balancers: auto (from the zone), true or false",
  },
  {
    flag: "",
    env: "ANKRA_CLOUD_REQUESTS_PER_MINUTE",
    kind: "integer",
    default: "300",
    help: "request budget of the whole process towards the API, per minute",
  },
  { flag: "", env: "ANKRA_CLOUD_REQUEST_BURST", kind: "integer", default: "20", help: "burst of the request budget" },
  {
    flag: "",
    env: "ANKRA_CLOUD_REQUEST_TIMEOUT",
    kind: "duration",
    default: "30s",
    help: "timeout of one API request",
  },
  {
    flag: "allocate-node-cidrs",
    kind: "boolean",
    default: "false",
    help: "accepted for compatibility; this controller allocates no CIDRs",
    compat: true,
  },
  {
    flag: "configure-cloud-routes",
    kind: "boolean",
    default: "false",
    help: "accepted for compatibility; this controller programs no routes",
    compat: true,
  },
  {
    flag: "cloud-config",
    kind: "string",
    help: "accepted for compatibility; ignored (configuration comes from the environment)",
    compat: true,
  },
  {
    flag: "use-service-account-credentials",
    kind: "boolean",
    default: "false",
    help: "accepted for compatibility; every controller uses the process's own credentials",
    compat: true,
  },
  { flag: "help", kind: "boolean", help: "print this help and exit" },
  { flag: "version", kind: "boolean", help: "print the version and exit" },
];

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
    `  ${PROGRAM} [flags]                  run the controller`,
    "",
    "Flags (and the environment variable that can set them):",
  ];
  for (const option of OPTIONS) {
    if (!option.flag) continue;
    const name = option.kind === "boolean" ? `--${option.flag}[=true|false]` : `--${option.flag}=<${option.kind}>`;
    const env = option.env ? ` [env ${option.env}]` : "";
    const dflt = option.default !== undefined ? ` (default ${option.default})` : "";
    lines.push(`  ${name}${env}`, `      ${option.help}${dflt}`);
  }
  lines.push("", "Environment:");
  for (const option of OPTIONS) {
    if (option.flag || !option.env) continue;
    const dflt = option.default !== undefined ? ` (default ${option.default})` : "";
    lines.push(`  ${option.env}`, `      ${option.help}${dflt}`);
  }
  lines.push(
    "",
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

function flagLabel(option: OptionSpec): string {
  return option.flag ? `--${option.flag}` : `${option.env}`;
}

/**
 * Normalises bare boolean flags (`--leader-elect`) to `--leader-elect=true` and `--flag value` for booleans is not
 * allowed (as in pflag), so that every option can be parsed as a string.
 */
function normaliseBooleans(args: string[]): string[] {
  const booleans = new Set(OPTIONS.filter((o) => o.kind === "boolean" && o.flag).map((o) => o.flag));
  return args.map((arg) => {
    const match = /^--([a-z0-9-]+)$/.exec(arg);
    return match && booleans.has(match[1]) ? `${arg}=true` : arg;
  });
}

function readRaw(args: string[], env: Record<string, string | undefined>): Map<OptionSpec, string | undefined> {
  const parseOptions: Record<string, { type: "string" }> = {};
  for (const option of OPTIONS) if (option.flag) parseOptions[option.flag] = { type: "string" };
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: normaliseBooleans(args),
      options: parseOptions,
      strict: true,
      allowPositionals: true,
    }));
  } catch (cause) {
    throw new ConfigError(describeParseError(cause));
  }
  if (positionals.length > 0) {
    throw new ConfigError(
      `unexpected argument "${positionals[0].slice(0, 40)}": flags take the form --name=value; see --help`,
    );
  }
  const raw = new Map<OptionSpec, string | undefined>();
  for (const option of OPTIONS) {
    let value: string | undefined;
    if (option.flag && values[option.flag] !== undefined) {
      const given = values[option.flag];
      value = Array.isArray(given) ? String(given[given.length - 1]) : String(given);
    } else if (option.env && env[option.env] !== undefined && env[option.env]!.trim() !== "") {
      value = env[option.env]!.trim();
    } else {
      value = option.default;
    }
    raw.set(option, value);
  }
  return raw;
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

function get(raw: Map<OptionSpec, string | undefined>, key: string): string | undefined {
  for (const [option, value] of raw) if (option.flag === key || (!option.flag && option.env === key)) return value;
  throw new Error(`internal: no option ${key}`);
}

function spec(key: string): OptionSpec {
  const found = OPTIONS.find((o) => o.flag === key || (!o.flag && o.env === key));
  if (!found) throw new Error(`internal: no option ${key}`);
  return found;
}

function asBoolean(raw: Map<OptionSpec, string | undefined>, key: string): boolean {
  const value = get(raw, key);
  const parsed = v.safeParse(
    v.picklist(["true", "false", "1", "0", "t", "f", "TRUE", "FALSE", "True", "False"]),
    value,
  );
  if (!parsed.success) throw new ConfigError(`${flagLabel(spec(key))} must be true or false, not "${value}"`);
  return ["true", "1", "t", "TRUE", "True"].includes(parsed.output);
}

function asInteger(
  raw: Map<OptionSpec, string | undefined>,
  key: string,
  range: { min: number; max: number },
): number {
  const value = get(raw, key) ?? "";
  const schema = v.pipe(
    v.string(),
    v.regex(/^-?\d+$/),
    v.transform(Number),
    v.number(),
    v.minValue(range.min),
    v.maxValue(range.max),
  );
  const parsed = v.safeParse(schema, value);
  if (!parsed.success) {
    throw new ConfigError(
      `${flagLabel(spec(key))} must be a whole number from ${range.min} to ${range.max}, not "${value}"`,
    );
  }
  return parsed.output;
}

function asDuration(
  raw: Map<OptionSpec, string | undefined>,
  key: string,
  range: { minMs: number; maxMs: number },
): number {
  const value = get(raw, key) ?? "";
  const ms = parseDuration(value);
  if (ms === undefined || ms < range.minMs || ms > range.maxMs) {
    throw new ConfigError(
      `${flagLabel(spec(key))} must be a duration like 15s or 5m between ${range.minMs}ms and ${
        range.maxMs / 1000
      }s, ` +
        `not "${value}"`,
    );
  }
  return ms;
}

function asText(
  raw: Map<OptionSpec, string | undefined>,
  key: string,
  rule?: { pattern: RegExp; describe: string },
): string | undefined {
  const value = get(raw, key);
  if (value === undefined || value === "") return undefined;
  if (rule && !rule.pattern.test(value)) {
    throw new ConfigError(`${flagLabel(spec(key))} ${rule.describe}, not "${value.slice(0, 80)}"`);
  }
  return value;
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

function readToken(
  raw: Map<OptionSpec, string | undefined>,
  readFile: (path: string) => string,
): string {
  const direct = get(raw, "ANKRA_CLOUD_TOKEN");
  const file = get(raw, "ankra-cloud-token-file");
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

function readApiUrl(raw: Map<OptionSpec, string | undefined>): string {
  const value = get(raw, "ANKRA_CLOUD_API_URL") ?? "";
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

/**
 * Decides what the process does from its arguments and environment: print help or the version, or run the
 * controller with a validated {@linkcode Config}.
 *
 * @throws {ConfigError} on any bad or missing setting.
 */
export function resolveCommand(args: string[], sources: ConfigSources): Command {
  const readFile = sources.readFile ?? Deno.readTextFileSync;
  const raw = readRaw(args, sources.env);
  if (get(raw, "help") !== undefined && asBoolean(raw, "help")) return { kind: "help", text: helpText() };
  if (get(raw, "version") !== undefined && asBoolean(raw, "version")) {
    return { kind: "version", text: `${PROGRAM} ${VERSION}` };
  }
  return { kind: "run", config: buildConfig(raw, readFile) };
}

function buildConfig(raw: Map<OptionSpec, string | undefined>, readFile: (path: string) => string): Config {
  const warnings: string[] = [];
  const provider = get(raw, "cloud-provider");
  if (provider !== "ankracloud") {
    throw new ConfigError(
      `--cloud-provider must be ankracloud, not "${provider ?? ""}": this controller only serves Ankra Cloud`,
    );
  }
  const clusterName = asText(raw, "cluster-name", {
    pattern: /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/,
    describe: "must be 1-63 letters, digits, '.', '_' or '-', starting and ending with a letter or digit",
  })!;
  const hostOrIp = { pattern: /^[A-Za-z0-9.:-]+$/, describe: "must be an IP address or host name" };
  const loggingFormat = get(raw, "logging-format");
  if (loggingFormat !== "text" && loggingFormat !== "json") {
    throw new ConfigError(`--logging-format must be text or json, not "${loggingFormat}"`);
  }
  const tlsCertFile = asText(raw, "tls-cert-file");
  const tlsPrivateKeyFile = asText(raw, "tls-private-key-file");
  if (Boolean(tlsCertFile) !== Boolean(tlsPrivateKeyFile)) {
    throw new ConfigError("--tls-cert-file and --tls-private-key-file go together: give both or neither");
  }
  const metricsAuthorization = get(raw, "metrics-authorization");
  if (metricsAuthorization !== "delegated" && metricsAuthorization !== "none") {
    throw new ConfigError(`--metrics-authorization must be delegated or none, not "${metricsAuthorization}"`);
  }
  if (metricsAuthorization === "none") {
    warnings.push("--metrics-authorization=none: anyone who reaches --secure-port can read /metrics");
  }
  const master = asText(raw, "master", { pattern: /^https?:\/\/\S+$/, describe: "must be an https:// URL" });
  const leaseMs = asDuration(raw, "leader-elect-lease-duration", { minMs: 1000, maxMs: 600_000 });
  const renewMs = asDuration(raw, "leader-elect-renew-deadline", { minMs: 500, maxMs: 600_000 });
  const retryMs = asDuration(raw, "leader-elect-retry-period", { minMs: 100, maxMs: 600_000 });
  if (!(leaseMs > renewMs && renewMs > retryMs)) {
    throw new ConfigError(
      "leader election needs --leader-elect-lease-duration > --leader-elect-renew-deadline > " +
        "--leader-elect-retry-period (defaults 15s, 10s, 2s)",
    );
  }
  const controllers = parseControllers(get(raw, "controllers") ?? "*");
  if (controllers.includes("route")) {
    warnings.push("the route controller does nothing here: Ankra Cloud routes are not programmed by this controller");
  }
  if (asBoolean(raw, "allocate-node-cidrs")) {
    warnings.push("--allocate-node-cidrs=true is ignored: this controller allocates no pod CIDRs");
  }
  if (asBoolean(raw, "configure-cloud-routes")) {
    warnings.push("--configure-cloud-routes=true is ignored: this controller programs no routes");
  }
  if (get(raw, "cloud-config")) {
    warnings.push("--cloud-config is ignored: configuration comes from the ANKRA_CLOUD_* environment variables");
  }
  asBoolean(raw, "use-service-account-credentials");

  const haRaw = (get(raw, "ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY") ?? "auto").toLowerCase();
  const ha = v.safeParse(v.picklist(["auto", "true", "false"]), haRaw);
  if (!ha.success) {
    throw new ConfigError(
      `ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY must be auto, true or false, not "${haRaw.slice(0, 40)}"`,
    );
  }
  const idRule = { pattern: /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, describe: "must be an Ankra Cloud id" };
  const caBundlePath = asText(raw, "ANKRA_CLOUD_CA_BUNDLE");
  const cloud: CloudConfig = {
    token: readToken(raw, readFile),
    apiUrl: readApiUrl(raw),
    caBundle: caBundlePath ? readCaBundle(caBundlePath, readFile) : undefined,
    caBundlePath,
    networkId: asText(raw, "ANKRA_CLOUD_NETWORK_ID", idRule),
    zone: asText(raw, "ANKRA_CLOUD_ZONE", {
      pattern: /^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/,
      describe: "must be a zone name such as de-fsn1",
    }),
    loadBalancerHighAvailability: ha.output,
    requestsPerMinute: asInteger(raw, "ANKRA_CLOUD_REQUESTS_PER_MINUTE", { min: 1, max: 100_000 }),
    requestBurst: asInteger(raw, "ANKRA_CLOUD_REQUEST_BURST", { min: 1, max: 10_000 }),
    requestTimeoutMs: asDuration(raw, "ANKRA_CLOUD_REQUEST_TIMEOUT", { minMs: 100, maxMs: 600_000 }),
  };
  if (cloud.apiUrl.startsWith("http://")) {
    warnings.push("ANKRA_CLOUD_API_URL uses plain http: the token travels unencrypted; use https outside tests");
  }

  return {
    cloudProvider: "ankracloud",
    clusterName,
    kubeconfig: asText(raw, "kubeconfig"),
    master,
    leaderElect: asBoolean(raw, "leader-elect"),
    leaderElectResourceName: asText(raw, "leader-elect-resource-name", {
      pattern: /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/,
      describe: "must be a Kubernetes object name (lower-case letters, digits, '.', '-')",
    })!,
    leaderElectResourceNamespace: asText(raw, "leader-elect-resource-namespace", {
      pattern: /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/,
      describe: "must be a namespace name",
    })!,
    leaderElectLeaseDurationMs: leaseMs,
    leaderElectRenewDeadlineMs: renewMs,
    leaderElectRetryPeriodMs: retryMs,
    securePort: asInteger(raw, "secure-port", { min: 0, max: 65535 }),
    bindAddress: asText(raw, "bind-address", hostOrIp)!,
    tlsCertFile,
    tlsPrivateKeyFile,
    metricsAuthorization,
    verbosity: asInteger(raw, "v", { min: 0, max: 10 }),
    loggingFormat,
    controllers,
    nodeStatusUpdateFrequencyMs: asDuration(raw, "node-status-update-frequency", { minMs: 1000, maxMs: 86_400_000 }),
    nodeMonitorPeriodMs: asDuration(raw, "node-monitor-period", { minMs: 100, maxMs: 3_600_000 }),
    serverListPeriodMs: asDuration(raw, "server-list-period", { minMs: 1_000, maxMs: 3_600_000 }),
    concurrentServiceSyncs: asInteger(raw, "concurrent-service-syncs", { min: 1, max: 64 }),
    concurrentNodeSyncs: asInteger(raw, "concurrent-node-syncs", { min: 1, max: 64 }),
    kubeApiQps: asInteger(raw, "kube-api-qps", { min: 1, max: 10_000 }),
    kubeApiBurst: asInteger(raw, "kube-api-burst", { min: 1, max: 10_000 }),
    loadBalancerClass: asText(raw, "load-balancer-class", {
      pattern: /^([a-z0-9]([a-z0-9.-]*[a-z0-9])?\/)?[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/,
      describe: "must be a label-style name such as ankra.cloud/load-balancer",
    }),
    cloud,
    warnings,
  };
}
