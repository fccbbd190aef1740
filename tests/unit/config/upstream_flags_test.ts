import assert from "node:assert/strict";
import { helpText } from "../../../lib/config/help_text.ts";
import type { OptionSpec } from "../../../lib/config/option_readers.ts";
import { OPTIONS } from "../../../lib/config/options.ts";
import { upstreamFlagOutcome } from "../../../lib/config/upstream_flag_rules.ts";
import { UPSTREAM_FLAGS, type UpstreamFlag } from "../../../lib/config/upstream_flags.ts";
import { upstreamFlagDocument } from "../../../scripts/upstream_flag_docs.ts";

/** Flags of the option table that upstream has too, and this controller's own: both read from the table. */
const OPTION_FLAGS = (Object.values(OPTIONS) as OptionSpec<unknown>[]).filter((o) => o.flag);
const OWN_UPSTREAM_FLAGS = OPTION_FLAGS.filter((o) => o.upstream).map((o) => o.flag!);
const OWN_EXTRA_FLAGS = OPTION_FLAGS.filter((o) => !o.upstream).map((o) => o.flag!);

/**
 * Every long flag of the upstream cloud-controller-manager command at v0.37.2 (Kubernetes 1.37; k8s.io/cloud-provider
 * options + app, k8s.io/controller-manager options, k8s.io/apiserver server options, k8s.io/component-base logs,
 * feature gates, verflag and globalflag). `-h` is the shorthand of `help`, `-v` of `v`.
 */
const ALL_UPSTREAM_FLAGS = [
  "allocate-node-cidrs",
  "allow-untagged-cloud",
  "authentication-kubeconfig",
  "authentication-skip-lookup",
  "authentication-token-webhook-cache-ttl",
  "authentication-tolerate-lookup-failure",
  "authorization-always-allow-paths",
  "authorization-kubeconfig",
  "authorization-webhook-cache-authorized-ttl",
  "authorization-webhook-cache-unauthorized-ttl",
  "bind-address",
  "cert-dir",
  "cidr-allocator-type",
  "client-ca-file",
  "cloud-config",
  "cloud-provider",
  "cluster-cidr",
  "cluster-name",
  "concurrent-node-lifecycle-syncs",
  "concurrent-node-status-updates",
  "concurrent-node-syncs",
  "concurrent-service-syncs",
  "configure-cloud-routes",
  "contention-profiling",
  "controller-start-interval",
  "controllers",
  "disable-http2-serving",
  "enable-leader-migration",
  "external-cloud-volume-plugin",
  "feature-gates",
  "help",
  "http2-max-streams-per-connection",
  "kube-api-burst",
  "kube-api-content-type",
  "kube-api-qps",
  "kubeconfig",
  "leader-elect",
  "leader-elect-lease-duration",
  "leader-elect-renew-deadline",
  "leader-elect-resource-lock",
  "leader-elect-resource-name",
  "leader-elect-resource-namespace",
  "leader-elect-retry-period",
  "leader-migration-config",
  "log-flush-frequency",
  "log-json-info-buffer-size",
  "log-json-split-stream",
  "log-text-info-buffer-size",
  "log-text-split-stream",
  "logging-format",
  "master",
  "min-resync-period",
  "node-monitor-period",
  "node-status-update-frequency",
  "node-sync-period",
  "permit-address-sharing",
  "permit-port-sharing",
  "profiling",
  "requestheader-allowed-names",
  "requestheader-client-ca-file",
  "requestheader-extra-headers-prefix",
  "requestheader-group-headers",
  "requestheader-uid-headers",
  "requestheader-username-headers",
  "route-reconciliation-period",
  "secure-port",
  "tls-cert-file",
  "tls-cipher-suites",
  "tls-curve-preferences",
  "tls-min-version",
  "tls-private-key-file",
  "tls-sni-cert-key",
  "use-service-account-credentials",
  "v",
  "version",
  "vmodule",
  "webhook-bind-address",
  "webhook-cert-dir",
  "webhook-disable-http2-serving",
  "webhook-secure-port",
  "webhook-tls-cert-file",
  "webhook-tls-cipher-suites",
  "webhook-tls-curve-preferences",
  "webhook-tls-min-version",
  "webhook-tls-private-key-file",
  "webhook-tls-sni-cert-key",
  "webhooks",
];

const KINDS = new Set(["bool", "string", "int", "float", "duration", "stringSlice", "mapStringBool", "ip"]);

/** An imperative after a colon: the part of a note that says what to do. */
const WHAT_TO_DO = /: (use|drop|remove|set|put|give|finish)\b/;

function flag(name: string): UpstreamFlag {
  const found = UPSTREAM_FLAGS.find((f) => f.name === name);
  assert.ok(found, `--${name} is listed`);
  return found;
}

Deno.test("upstream flag names are unique, sorted and written without dashes", () => {
  const names = UPSTREAM_FLAGS.map((f) => f.name);
  assert.equal(new Set(names).size, names.length, "no name twice");
  assert.deepEqual(names, [...names].sort(), "sorted by name");
  for (const name of names) assert.match(name, /^[a-z0-9]+(-[a-z0-9]+)*$/, `--${name}`);
});

Deno.test("no upstream entry collides with a flag this controller implements", () => {
  const own = new Set([...OWN_UPSTREAM_FLAGS, ...OWN_EXTRA_FLAGS]);
  for (const match of helpText().matchAll(/^ {2}--([a-z0-9-]+)/gm)) own.add(match[1]);
  for (const name of OWN_EXTRA_FLAGS) assert.ok(helpText().includes(`--${name}`), `--${name} is in --help`);
  for (const entry of UPSTREAM_FLAGS) assert.ok(!own.has(entry.name), `--${entry.name} is implemented here`);
});

Deno.test("the table and our own flags together cover the whole upstream command, and nothing else", () => {
  const covered = [...UPSTREAM_FLAGS.map((f) => f.name), ...OWN_UPSTREAM_FLAGS].sort();
  assert.deepEqual(covered, [...ALL_UPSTREAM_FLAGS].sort());
  // Gone from the 1.37 command: klog's file flags (component-base keeps only -v and --vmodule), insecure serving,
  // and the metrics flags kube-controller-manager has but cloud-controller-manager never registered.
  for (
    const gone of [
      "log-dir",
      "logtostderr",
      "alsologtostderr",
      "log-file",
      "port",
      "address",
      "show-hidden-metrics-for-version",
      "allow-metric-labels",
      "disabled-metrics",
    ]
  ) {
    assert.ok(!UPSTREAM_FLAGS.some((f) => f.name === gone), `--${gone} is not an upstream flag`);
  }
});

Deno.test("every entry is well formed", () => {
  for (const entry of UPSTREAM_FLAGS) {
    const label = `--${entry.name}`;
    assert.ok(KINDS.has(entry.kind), `${label} kind`);
    assert.ok(entry.effect === "ignored" || entry.effect === "refused", `${label} effect`);
    assert.ok(entry.note.length > 10, `${label} has a note`);
    assert.ok(!/[\n\r]/.test(entry.note), `${label} note is one line`);
    assert.ok(!entry.note.endsWith("."), `${label} note has no trailing period`);
    assert.equal(entry.note[0], entry.note[0].toLowerCase(), `${label} note starts lower-case`);
    assert.equal(entry.default, entry.default.trim(), `${label} default`);
    for (const value of entry.silentValues ?? []) assert.equal(value, value.trim(), `${label} silent value trimmed`);
    if (entry.kind === "bool") {
      for (const value of [...(entry.silentValues ?? []), ...(entry.refusedValues ?? [])]) {
        assert.ok(value === "true" || value === "false", `${label} bool values are true or false`);
      }
      assert.ok(entry.default === "" || entry.default === "true", `${label} bool default as --help prints it`);
    }
    if (entry.refusedValues) {
      assert.equal(entry.effect, "ignored", `${label} refusedValues only narrow an ignored flag`);
      assert.ok(entry.refusedValues.length > 0, `${label} refusedValues not empty`);
      for (const value of entry.refusedValues) {
        assert.ok(!entry.silentValues?.includes(value), `${label} ${value} is not both silent and refused`);
      }
    }
  }
});

Deno.test("every refusable entry says why and what to do", () => {
  const refusable = UPSTREAM_FLAGS.filter((f) => f.effect === "refused" || f.refusedValues);
  assert.ok(refusable.length >= 5);
  for (const entry of refusable) {
    assert.match(entry.note, WHAT_TO_DO, `--${entry.name}: "${entry.note}" names what to do`);
    assert.ok(entry.note.indexOf(":") > 10, `--${entry.name} gives a reason before what to do`);
  }
});

Deno.test("flags users keep in extraArgs have the expected effect", () => {
  const cases: [name: string, value: string, expected: "silent" | "ignored" | "refused"][] = [
    ["profiling", "false", "silent"],
    ["profiling", "true", "ignored"],
    ["contention-profiling", "false", "silent"],
    ["webhook-secure-port", "0", "silent"],
    ["webhook-secure-port", "10260", "ignored"],
    ["feature-gates", "AllAlpha=false,SomeGate=true", "ignored"],
    ["authentication-skip-lookup", "true", "silent"],
    ["authentication-tolerate-lookup-failure", "true", "ignored"],
    ["cert-dir", "/var/run/ccm", "ignored"],
    ["min-resync-period", "1h", "ignored"],
    ["leader-elect-resource-lock", " leases ", "silent"],
    ["leader-elect-resource-lock", "endpoints", "refused"],
    ["leader-elect-resource-lock", "configmaps", "refused"],
    ["leader-elect-resource-lock", "endpointsleases", "refused"],
    ["kube-api-content-type", "application/json", "silent"],
    ["kube-api-content-type", "application/vnd.kubernetes.protobuf", "ignored"],
    ["client-ca-file", "/etc/kubernetes/pki/ca.crt", "refused"],
    ["requestheader-client-ca-file", "/etc/kubernetes/pki/front-proxy-ca.crt", "refused"],
    ["authorization-always-allow-paths", "/healthz,/readyz,/livez", "silent"],
    ["authorization-always-allow-paths", "/healthz", "silent"],
    ["authorization-always-allow-paths", "/healthz,/readyz,/livez,/metrics", "refused"],
    ["authorization-always-allow-paths", "/metrics", "refused"],
    ["enable-leader-migration", "false", "silent"],
    ["enable-leader-migration", "true", "refused"],
    ["leader-migration-config", "/etc/ccm/migration.yaml", "ignored"],
    ["node-sync-period", "10s", "ignored"],
    ["allow-untagged-cloud", "true", "ignored"],
    ["cluster-cidr", "10.244.0.0/16", "ignored"],
    ["cidr-allocator-type", "RangeAllocator", "silent"],
    ["route-reconciliation-period", "30s", "ignored"],
    ["external-cloud-volume-plugin", "gce", "ignored"],
    ["authentication-kubeconfig", "/etc/kubernetes/ccm.conf", "ignored"],
    ["authorization-kubeconfig", "/etc/kubernetes/ccm.conf", "ignored"],
    ["tls-min-version", "VersionTLS12", "silent"],
    ["tls-min-version", "VersionTLS13", "refused"],
    ["tls-cipher-suites", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ignored"],
    ["vmodule", "service=4", "ignored"],
    ["webhooks", "*", "silent"],
    ["webhooks", "some-webhook", "refused"],
    ["log-flush-frequency", "5s", "ignored"],
  ];
  const names = new Set(cases.map(([name]) => name));
  assert.ok(names.size >= 13, "at least 13 flags are checked");
  for (const [name, value, expected] of cases) {
    assert.equal(upstreamFlagOutcome(flag(name), value), expected, `--${name}=${value}`);
  }
});

Deno.test("upstream defaults are recorded as upstream prints them", () => {
  const defaults: Record<string, string> = {
    "profiling": "true",
    "leader-elect-resource-lock": "leases",
    "kube-api-content-type": "application/vnd.kubernetes.protobuf",
    "min-resync-period": "12h0m0s",
    "webhook-secure-port": "10260",
    "webhook-bind-address": "0.0.0.0",
    "route-reconciliation-period": "10s",
    "cidr-allocator-type": "RangeAllocator",
    "authorization-always-allow-paths": "[/healthz,/readyz,/livez]",
    "log-flush-frequency": "5s",
    "enable-leader-migration": "",
  };
  for (const [name, value] of Object.entries(defaults)) assert.equal(flag(name).default, value, `--${name}`);
  assert.equal(flag("feature-gates").kind, "mapStringBool");
  assert.equal(flag("webhook-bind-address").kind, "ip");
  assert.equal(flag("authorization-always-allow-paths").kind, "stringSlice");
});

Deno.test("docs/upstream_flags.md is the tables the command line is read with", async () => {
  const doc = await Deno.readTextFile(new URL("../../../docs/upstream_flags.md", import.meta.url));
  assert.equal(doc, upstreamFlagDocument(), "run: deno run --allow-write scripts/upstream_flag_docs.ts");
  for (const entry of UPSTREAM_FLAGS) assert.ok(doc.includes(`| \`--${entry.name}\` |`), `--${entry.name} has a row`);
  for (const name of [...OWN_UPSTREAM_FLAGS, ...OWN_EXTRA_FLAGS]) {
    assert.ok(doc.includes(`| \`--${name}\` |`), `--${name} has a row`);
  }
  assert.match(doc, /\| `--kube-api-qps` \| `20` \| `50` \|/, "our default comes from the option table");
  assert.match(doc, /`--tls-min-version` \| — \| \*\*refused\*\* for `VersionTLS13`, otherwise ignored/);
});
