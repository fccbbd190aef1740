/**
 * The flags of the upstream `cloud-controller-manager` command (the `k8s.io/cloud-provider` app the Go controller was
 * built on) that this controller does not implement itself, and what this controller does when one is given: accept
 * it with one warning, accept it silently when its value is what this controller does anyway, or refuse it.
 *
 * Pure data; the command-line parser decides from it. Read from the v0.37.2 release tags (Kubernetes 1.37.2; 1.37 added
 * `--concurrent-node-lifecycle-syncs`, implemented here, see `options.ts`) of:
 *
 * - `kubernetes/cloud-provider`: `options/options.go`, `options/kubecloudshared.go`, `options/cloudprovider.go`,
 *   `options/nodecontroller.go`, `options/servicecontroller.go`, `options/webhook.go`,
 *   `config/v1alpha1/defaults.go`, `app/controllermanager.go`;
 * - `kubernetes/controller-manager`: `options/generic.go`, `options/debugging.go`,
 *   `pkg/leadermigration/options/options.go`, `config/v1alpha1/defaults.go`;
 * - `kubernetes/apiserver`: `pkg/server/options/serving.go`, `authentication.go`, `authorization.go`;
 * - `kubernetes/component-base`: `config/options/leaderelectionconfig.go`, `config/v1alpha1/defaults.go`,
 *   `logs/api/v1/options.go`, `logs/logs.go`, `logs/klogflags/klogflags.go`, `cli/globalflag/globalflags.go`,
 *   `featuregate/feature_gate.go`, `version/verflag/verflag.go`.
 *
 * Defaults are written as pflag prints them in `--help` (durations as Go prints them, lists in brackets) and are
 * `""` where `--help` prints none (a `false` bool, a zero number or duration, an empty string or list).
 *
 * @module
 */

/** How this controller treats an upstream cloud-controller-manager flag it does not implement itself. */
type UpstreamFlagEffect =
  /** Accepted; changes nothing here; one warning at start-up saying so. */
  | "ignored"
  /** The meaning cannot be honoured: start-up fails with one line naming the flag, why, and what to do. */
  | "refused";

/** One upstream flag. */
export interface UpstreamFlag {
  /** Name without dashes, e.g. "profiling". */
  name: string;
  /**
   * "bool" flags may be given bare (`--profiling`) or as `--profiling=false`; every other kind needs a value.
   * Upstream types with no kind of their own are mapped: `int32Slice` (curve ids) to "stringSlice"; `namedCertKey`,
   * `pattern=N,...` (vmodule) and `quantity` (log buffer sizes) to "string".
   */
  kind: "bool" | "string" | "int" | "float" | "duration" | "stringSlice" | "mapStringBool" | "ip";
  /** Upstream default as upstream's --help prints it ("" when none). */
  default: string;
  /** What this controller does with it. */
  effect: UpstreamFlagEffect;
  /**
   * Values that are exactly what this controller already does, so they are accepted silently with no warning
   * (e.g. profiling "false", leader-elect-resource-lock "leases", webhook-secure-port "0",
   * kube-api-content-type "application/json"). Compared after trimming; for bool flags use "true"/"false". A list
   * flag given several times is compared as its values joined with commas, in the order given.
   */
  silentValues?: string[];
  /**
   * For "refused", or for values outside `silentValues` that must be refused rather than ignored: the reason and
   * what to do, lower-case, one line (no trailing period). For "ignored": why it changes nothing.
   */
  note: string;
  /** When only some values are refusable: values that are refused (others are ignored with the note). */
  refusedValues?: string[];
}

const NO_WEBHOOKS = "this controller serves no webhooks (upstream too serves none unless --webhooks enables one)";
const NO_ROUTES = "this controller allocates no pod CIDRs and programs no routes";
const TOKEN_ONLY =
  "/metrics callers are authenticated by bearer token (TokenReview) only; identity headers are never " +
  "trusted";
const OWN_API_SERVER =
  "are sent to the API server of --kubeconfig (or in-cluster) with the controller's own credentials";
const REVIEW_CACHE = "the answers of TokenReview and SubjectAccessReview are cached for 10s";

/** Every upstream cloud-controller-manager flag this controller does not implement itself, sorted by name. */
export const UPSTREAM_FLAGS: readonly UpstreamFlag[] = [
  {
    name: "allow-untagged-cloud",
    kind: "bool",
    default: "",
    effect: "ignored",
    note: "deprecated upstream; this controller needs no cluster id on servers (--cluster-name names the cluster)",
  },
  {
    name: "authentication-kubeconfig",
    kind: "string",
    default: "",
    effect: "ignored",
    silentValues: [""],
    note: `tokenreviews ${OWN_API_SERVER}`,
  },
  {
    name: "authentication-skip-lookup",
    kind: "bool",
    default: "",
    effect: "ignored",
    silentValues: ["true"],
    note: "the cluster's client-CA and request-header configuration is never looked up: " + TOKEN_ONLY,
  },
  {
    name: "authentication-token-webhook-cache-ttl",
    kind: "duration",
    default: "10s",
    effect: "ignored",
    silentValues: ["10s"],
    note: REVIEW_CACHE,
  },
  {
    name: "authentication-tolerate-lookup-failure",
    kind: "bool",
    default: "",
    effect: "ignored",
    silentValues: ["false"],
    note: "nothing is looked up, so nothing can fail: callers without a valid bearer token never read /metrics",
  },
  {
    name: "authorization-always-allow-paths",
    kind: "stringSlice",
    default: "[/healthz,/readyz,/livez]",
    effect: "refused",
    // Any order of any of the three health paths opens nothing this controller does not already serve openly.
    silentValues: [
      "/healthz,/readyz,/livez",
      "/healthz,/livez,/readyz",
      "/readyz,/healthz,/livez",
      "/readyz,/livez,/healthz",
      "/livez,/healthz,/readyz",
      "/livez,/readyz,/healthz",
      "/healthz,/readyz",
      "/readyz,/healthz",
      "/healthz,/livez",
      "/livez,/healthz",
      "/readyz,/livez",
      "/livez,/readyz",
      "/healthz",
      "/readyz",
      "/livez",
    ],
    note: "only /healthz, /readyz and /livez are served without authorization and /metrics needs a " +
      "SubjectAccessReview: drop the flag, or set --metrics-authorization=none to open /metrics",
  },
  {
    name: "authorization-kubeconfig",
    kind: "string",
    default: "",
    effect: "ignored",
    silentValues: [""],
    note: `subjectaccessreviews ${OWN_API_SERVER}`,
  },
  {
    name: "authorization-webhook-cache-authorized-ttl",
    kind: "duration",
    default: "10s",
    effect: "ignored",
    silentValues: ["10s"],
    note: REVIEW_CACHE,
  },
  {
    name: "authorization-webhook-cache-unauthorized-ttl",
    kind: "duration",
    default: "10s",
    effect: "ignored",
    silentValues: ["10s"],
    note: REVIEW_CACHE,
  },
  {
    name: "cert-dir",
    kind: "string",
    default: "",
    effect: "ignored",
    silentValues: [""],
    note: "the self-signed serving certificate lives in memory and nothing is read from or written to a directory; " +
      "serve your own with --tls-cert-file and --tls-private-key-file",
  },
  {
    name: "cidr-allocator-type",
    kind: "string",
    default: "RangeAllocator",
    effect: "ignored",
    silentValues: ["RangeAllocator"],
    note: NO_ROUTES,
  },
  {
    name: "client-ca-file",
    kind: "string",
    default: "",
    effect: "refused",
    silentValues: [""],
    note: "client certificates cannot be authenticated here, only bearer tokens (TokenReview): remove the flag and " +
      "scrape /metrics with a service account token, or set --metrics-authorization=none",
  },
  {
    name: "cluster-cidr",
    kind: "string",
    default: "",
    effect: "ignored",
    silentValues: [""],
    note: NO_ROUTES,
  },
  {
    name: "concurrent-node-status-updates",
    kind: "int",
    default: "",
    effect: "ignored",
    silentValues: ["0"],
    note: "node address refreshes run on the --concurrent-node-syncs workers",
  },
  {
    name: "contention-profiling",
    kind: "bool",
    default: "",
    effect: "ignored",
    silentValues: ["false"],
    note: "this controller has no profiling endpoints",
  },
  {
    name: "controller-start-interval",
    kind: "duration",
    default: "",
    effect: "ignored",
    silentValues: ["0", "0s"],
    note: "all controllers start together once leadership is held",
  },
  {
    name: "disable-http2-serving",
    kind: "bool",
    default: "",
    effect: "ignored",
    silentValues: ["false"],
    note: "the HTTPS server always offers HTTP/2 and HTTP/1.1 (ALPN)",
  },
  {
    name: "enable-leader-migration",
    kind: "bool",
    default: "",
    effect: "refused",
    silentValues: ["false"],
    note: "controller leader migration (moving cloud controllers out of kube-controller-manager) is not supported: " +
      "finish the migration before switching to this controller, then drop the flag",
  },
  {
    name: "external-cloud-volume-plugin",
    kind: "string",
    default: "",
    effect: "ignored",
    silentValues: [""],
    note: "a cloud controller manager runs no volume controllers; the flag is meant for kube-controller-manager",
  },
  {
    name: "feature-gates",
    kind: "mapStringBool",
    default: "",
    effect: "ignored",
    silentValues: [""],
    note: "this controller has no feature gates, so none is read",
  },
  {
    name: "http2-max-streams-per-connection",
    kind: "int",
    default: "",
    effect: "ignored",
    silentValues: ["0"],
    note: "the HTTP/2 stream limit is the HTTPS server's own default",
  },
  {
    name: "kube-api-content-type",
    kind: "string",
    default: "application/vnd.kubernetes.protobuf",
    effect: "ignored",
    silentValues: ["application/json"],
    note: "this controller always speaks JSON to the API server",
  },
  {
    name: "leader-elect-resource-lock",
    kind: "string",
    default: "leases",
    effect: "refused",
    silentValues: ["leases"],
    note: "the leader is elected on a coordination.k8s.io Lease only: use --leader-elect-resource-lock=leases or " +
      "drop the flag",
  },
  {
    name: "leader-migration-config",
    kind: "string",
    default: "",
    effect: "ignored",
    silentValues: [""],
    note: "it is read only with --enable-leader-migration, which this controller does not support",
  },
  {
    name: "log-flush-frequency",
    kind: "duration",
    default: "5s",
    effect: "ignored",
    note: "log lines are written as they happen; nothing is buffered",
  },
  {
    name: "log-json-info-buffer-size",
    kind: "string",
    default: "",
    effect: "ignored",
    silentValues: ["0"],
    note: "log lines are written as they happen; nothing is buffered",
  },
  {
    name: "log-json-split-stream",
    kind: "bool",
    default: "",
    effect: "ignored",
    silentValues: ["true"],
    note: "info lines always go to stdout and warnings and errors to stderr, in either log format",
  },
  {
    name: "log-text-info-buffer-size",
    kind: "string",
    default: "",
    effect: "ignored",
    silentValues: ["0"],
    note: "log lines are written as they happen; nothing is buffered",
  },
  {
    name: "log-text-split-stream",
    kind: "bool",
    default: "",
    effect: "ignored",
    silentValues: ["true"],
    note: "info lines always go to stdout and warnings and errors to stderr, in either log format",
  },
  {
    name: "min-resync-period",
    kind: "duration",
    default: "12h0m0s",
    effect: "ignored",
    note: "informers follow watches and never resync on a timer",
  },
  {
    name: "node-sync-period",
    kind: "duration",
    default: "",
    effect: "ignored",
    silentValues: ["0", "0s"],
    note: "deprecated upstream, where it already does nothing; see --node-monitor-period and " +
      "--node-status-update-frequency",
  },
  {
    name: "permit-address-sharing",
    kind: "bool",
    default: "",
    effect: "ignored",
    silentValues: ["true"],
    note: "the HTTPS listener always sets SO_REUSEADDR",
  },
  {
    name: "permit-port-sharing",
    kind: "bool",
    default: "",
    effect: "ignored",
    silentValues: ["false"],
    note: "the HTTPS listener never sets SO_REUSEPORT, so one process owns --secure-port",
  },
  {
    name: "profiling",
    kind: "bool",
    default: "true",
    effect: "ignored",
    silentValues: ["false"],
    note: "this controller has no profiling endpoints (/debug/pprof)",
  },
  {
    name: "requestheader-allowed-names",
    kind: "stringSlice",
    default: "",
    effect: "ignored",
    silentValues: [""],
    note: TOKEN_ONLY,
  },
  {
    name: "requestheader-client-ca-file",
    kind: "string",
    default: "",
    effect: "refused",
    silentValues: [""],
    note: "request-header (front-proxy) authentication needs client certificates, which cannot be verified here: " +
      "remove the flag; /metrics callers authenticate with a bearer token",
  },
  {
    name: "requestheader-extra-headers-prefix",
    kind: "stringSlice",
    default: "[x-remote-extra-]",
    effect: "ignored",
    silentValues: [""],
    note: TOKEN_ONLY,
  },
  {
    name: "requestheader-group-headers",
    kind: "stringSlice",
    default: "[x-remote-group]",
    effect: "ignored",
    silentValues: [""],
    note: TOKEN_ONLY,
  },
  {
    name: "requestheader-uid-headers",
    kind: "stringSlice",
    default: "",
    effect: "ignored",
    silentValues: [""],
    note: TOKEN_ONLY,
  },
  {
    name: "requestheader-username-headers",
    kind: "stringSlice",
    default: "[x-remote-user]",
    effect: "ignored",
    silentValues: [""],
    note: TOKEN_ONLY,
  },
  {
    name: "route-reconciliation-period",
    kind: "duration",
    default: "10s",
    effect: "ignored",
    note: NO_ROUTES,
  },
  {
    name: "tls-cipher-suites",
    kind: "stringSlice",
    default: "",
    effect: "ignored",
    silentValues: [""],
    note: "the HTTPS server offers only forward-secret AEAD suites (TLS 1.2 ECDHE with AES-GCM or ChaCha20, and " +
      "TLS 1.3) and the list cannot be changed",
  },
  {
    name: "tls-curve-preferences",
    kind: "stringSlice",
    default: "[]",
    effect: "ignored",
    silentValues: [""],
    note: "the HTTPS server uses its TLS library's default key-exchange groups",
  },
  {
    name: "tls-min-version",
    kind: "string",
    default: "",
    effect: "ignored",
    silentValues: ["", "VersionTLS12"],
    refusedValues: ["VersionTLS13"],
    note: "the HTTPS server accepts TLS 1.2 and 1.3, never older, and cannot be limited to 1.3: drop the flag, or " +
      "put a TLS 1.3-only proxy in front of --secure-port",
  },
  {
    name: "tls-sni-cert-key",
    kind: "string",
    default: "[]",
    effect: "ignored",
    silentValues: [""],
    note: "the HTTPS server has one certificate for every name: give it with --tls-cert-file and " +
      "--tls-private-key-file",
  },
  {
    name: "vmodule",
    kind: "string",
    default: "",
    effect: "ignored",
    silentValues: [""],
    note: "there is no per-file verbosity; --v sets it for every line",
  },
  {
    name: "webhook-bind-address",
    kind: "ip",
    default: "0.0.0.0",
    effect: "ignored",
    note: NO_WEBHOOKS,
  },
  {
    name: "webhook-cert-dir",
    kind: "string",
    default: "",
    effect: "ignored",
    silentValues: [""],
    note: NO_WEBHOOKS,
  },
  {
    name: "webhook-disable-http2-serving",
    kind: "bool",
    default: "",
    effect: "ignored",
    silentValues: ["false"],
    note: NO_WEBHOOKS,
  },
  {
    name: "webhook-secure-port",
    kind: "int",
    default: "10260",
    effect: "ignored",
    silentValues: ["0"],
    note: NO_WEBHOOKS,
  },
  {
    name: "webhook-tls-cert-file",
    kind: "string",
    default: "",
    effect: "ignored",
    silentValues: [""],
    note: NO_WEBHOOKS,
  },
  {
    name: "webhook-tls-cipher-suites",
    kind: "stringSlice",
    default: "",
    effect: "ignored",
    silentValues: [""],
    note: NO_WEBHOOKS,
  },
  {
    name: "webhook-tls-curve-preferences",
    kind: "stringSlice",
    default: "[]",
    effect: "ignored",
    silentValues: [""],
    note: NO_WEBHOOKS,
  },
  {
    name: "webhook-tls-min-version",
    kind: "string",
    default: "",
    effect: "ignored",
    silentValues: [""],
    note: NO_WEBHOOKS,
  },
  {
    name: "webhook-tls-private-key-file",
    kind: "string",
    default: "",
    effect: "ignored",
    silentValues: [""],
    note: NO_WEBHOOKS,
  },
  {
    name: "webhook-tls-sni-cert-key",
    kind: "string",
    default: "[]",
    effect: "ignored",
    silentValues: [""],
    note: NO_WEBHOOKS,
  },
  {
    name: "webhooks",
    kind: "stringSlice",
    default: "",
    effect: "refused",
    silentValues: ["", "*"],
    note: "this controller has no webhooks (upstream registers none either, so it refused any name too): drop the " +
      "flag or use --webhooks=*",
  },
];
