import assert from "node:assert/strict";
import { resolveCommand } from "../../../lib/config/command.ts";
import type { Config } from "../../../lib/config/config.ts";
import { ConfigError } from "../../../lib/config_error.ts";
import { helpText } from "../../../lib/config/help_text.ts";
import { VERSION } from "../../../lib/version.ts";

const TOKEN = "act_c2VjcmV0LXRva2VuLXZhbHVlLWZvci10ZXN0cw";

function run(args: string[], env: Record<string, string> = {}, files: Record<string, string> = {}): Config {
  const command = resolveCommand(args, {
    env: { ANKRA_CLOUD_TOKEN: TOKEN, ...env },
    readFile: (path) => {
      if (path in files) return files[path];
      throw new Deno.errors.NotFound(path);
    },
  });
  assert.equal(command.kind, "run");
  return (command as { config: Config }).config;
}

function refused(args: string[], env: Record<string, string | undefined>, files: Record<string, string> = {}): string {
  try {
    resolveCommand(args, {
      env,
      readFile: (path) => {
        if (path in files) return files[path];
        throw new Deno.errors.NotFound(path);
      },
    });
  } catch (cause) {
    assert.ok(cause instanceof ConfigError, `expected a ConfigError, got ${cause}`);
    assert.ok(!cause.message.includes("\n"), "a configuration error is one line");
    return cause.message;
  }
  assert.fail("the configuration was accepted");
}

Deno.test("defaults match the Go controller and its chart, except the documented throughput settings", () => {
  const config = run([]);
  assert.equal(config.cloudProvider, "ankracloud");
  assert.equal(config.clusterName, "kubernetes");
  assert.equal(config.kubeconfig, undefined);
  assert.equal(config.leaderElect, true);
  assert.equal(config.leaderElectResourceName, "ankra-cloud-ccm");
  assert.equal(config.leaderElectResourceNamespace, "kube-system");
  assert.deepEqual(
    [config.leaderElectLeaseDurationMs, config.leaderElectRenewDeadlineMs, config.leaderElectRetryPeriodMs],
    [15_000, 10_000, 2_000],
  );
  assert.equal(config.securePort, 10258);
  assert.equal(config.verbosity, 2);
  assert.deepEqual(config.controllers, ["cloud-node", "cloud-node-lifecycle", "service"]);
  assert.equal(config.nodeStatusUpdateFrequencyMs, 300_000);
  assert.equal(config.nodeMonitorPeriodMs, 5_000);
  // Deliberate differences (docs/upstream_flags.md): bursts are served side by side.
  assert.equal(config.kubeApiQps, 50);
  assert.equal(config.kubeApiBurst, 100);
  assert.equal(config.concurrentServiceSyncs, 10);
  assert.equal(config.concurrentNodeSyncs, 4);
  assert.equal(config.concurrentNodeLifecycleSyncs, 4);
  assert.equal(config.cloud.maxRequestsPerMinute, undefined, "the API's own limit is followed; no fixed pace");
  assert.equal(config.dryRun, false);
  assert.equal(config.cloud.apiUrl, "https://cloud.ankra.app");
  assert.equal(config.cloud.loadBalancerHighAvailability, "auto");
  assert.equal(config.cloud.token, TOKEN);
  assert.deepEqual(config.warnings, []);
});

Deno.test("the chart's command line is accepted as the chart writes it", () => {
  const config = run([
    "--cloud-provider=ankracloud",
    "--cluster-name=prod-eu",
    "--leader-elect=true",
    "--leader-elect-resource-name=ankra-cloud-ccm",
    "--leader-elect-resource-namespace=kube-system",
    "--configure-cloud-routes=false",
    "--allocate-node-cidrs=false",
    "--secure-port=10258",
    "--v=4",
  ]);
  assert.equal(config.clusterName, "prod-eu");
  assert.equal(config.verbosity, 4);
  assert.deepEqual(config.warnings, []);
});

Deno.test("flags take the form --name=value, --name value, and bare booleans", () => {
  const config = run(["--cluster-name", "blue", "--leader-elect", "--kubeconfig=/etc/rancher/k3s/k3s.yaml"]);
  assert.equal(config.clusterName, "blue");
  assert.equal(config.leaderElect, true);
  assert.equal(config.kubeconfig, "/etc/rancher/k3s/k3s.yaml");
  assert.equal(run(["--leader-elect=false"]).leaderElect, false);
});

Deno.test("a cloud provider other than ankracloud is refused", () => {
  const message = refused(["--cloud-provider=hcloud"], { ANKRA_CLOUD_TOKEN: TOKEN });
  assert.match(message, /--cloud-provider must be ankracloud, not "hcloud"/);
});

Deno.test("a missing token names the variable and what to do", () => {
  const message = refused([], {});
  assert.match(message, /ANKRA_CLOUD_TOKEN is not set/);
  assert.match(message, /operate permission/);
});

Deno.test("the token can come from a file, for systemd credentials", () => {
  const config = resolveCommand(["--ankra-cloud-token-file=/run/credentials/ccm/token"], {
    env: {},
    readFile: (path) => path === "/run/credentials/ccm/token" ? `${TOKEN}\n` : "",
  });
  assert.equal(config.kind, "run");
  assert.equal((config as { config: Config }).config.cloud.token, TOKEN);
  const viaEnv = resolveCommand([], {
    env: { ANKRA_CLOUD_TOKEN_FILE: "/secret" },
    readFile: () => TOKEN,
  }) as { config: Config };
  assert.equal(viaEnv.config.cloud.token, TOKEN);
});

Deno.test("a token file that is missing or empty is refused by name", () => {
  assert.match(refused(["--ankra-cloud-token-file=/nope"], {}), /--ankra-cloud-token-file \/nope: it does not exist/);
  assert.match(refused(["--ankra-cloud-token-file=/empty"], {}, { "/empty": "\n" }), /is empty/);
  assert.match(
    refused(["--ankra-cloud-token-file=/t"], { ANKRA_CLOUD_TOKEN: TOKEN }, { "/t": TOKEN }),
    /keep only one/,
  );
});

Deno.test("the token never appears in an error message", () => {
  const messages = [
    refused(["--cloud-provider=x"], { ANKRA_CLOUD_TOKEN: TOKEN }),
    refused([], { ANKRA_CLOUD_TOKEN: TOKEN, ANKRA_CLOUD_API_URL: "not a url" }),
    refused(["--ankra-cloud-token=" + TOKEN], { ANKRA_CLOUD_TOKEN: TOKEN }),
    refused([TOKEN], { ANKRA_CLOUD_TOKEN: TOKEN }),
    refused([], { ANKRA_CLOUD_TOKEN: "act_with space" }),
  ];
  for (const message of messages) assert.ok(!message.includes(TOKEN) && !message.includes("with space"), message);
});

Deno.test("an unknown flag is refused with its name only", () => {
  const message = refused(["--cloud-token=abc123secret"], { ANKRA_CLOUD_TOKEN: TOKEN });
  assert.equal(message, "unknown flag --cloud-token: see --help for the flags ankra-cloud-ccm accepts");
});

Deno.test("a flag without its value is refused by name, also when the next flag would be taken as the value", () => {
  const env = { ANKRA_CLOUD_TOKEN: TOKEN };
  const needsValue = "flag --cluster-name needs a value: write --cluster-name=<value>";
  assert.equal(refused(["--cluster-name"], env), needsValue);
  assert.equal(refused(["--cluster-name", "--v=3"], env), needsValue);
  assert.equal(refused(["--cluster_name", "-v", "3"], env), needsValue);
  assert.equal(
    refused(["--webhook-cert-dir"], env),
    "flag --webhook-cert-dir needs a value: write --webhook-cert-dir=<value>",
  );
  // The first problem in command-line order is the one reported.
  assert.equal(
    refused(["--bogus", "--cluster-name"], env),
    "unknown flag --bogus: see --help for the flags ankra-cloud-ccm accepts",
  );
  assert.equal(refused(["-x"], env), "unknown flag -x: see --help for the flags ankra-cloud-ccm accepts");
});

Deno.test("a stray argument is refused with the form flags take", () => {
  const env = { ANKRA_CLOUD_TOKEN: TOKEN };
  const stray = 'unexpected argument "false": flags take the form --name=value; see --help';
  assert.equal(refused(["--dry-run", "false"], env), stray, "a boolean never takes the next argument");
  assert.equal(refused(["--", "false"], env), stray);
});

Deno.test("the HA mode is trimmed, lower-cased and must be auto, true or false", () => {
  assert.equal(
    run([], { ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY: " TRUE " }).cloud.loadBalancerHighAvailability,
    "true",
  );
  assert.equal(run([], { ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY: "" }).cloud.loadBalancerHighAvailability, "auto");
  assert.match(
    refused([], { ANKRA_CLOUD_TOKEN: TOKEN, ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY: "yes" }),
    /ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY must be auto, true or false, not "yes"/,
  );
});

Deno.test("the CA bundle must be a readable PEM file", () => {
  const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  const config = run([], { ANKRA_CLOUD_CA_BUNDLE: "/ca.pem" }, { "/ca.pem": pem });
  assert.equal(config.cloud.caBundle, pem);
  assert.match(refused([], { ANKRA_CLOUD_TOKEN: TOKEN, ANKRA_CLOUD_CA_BUNDLE: "/missing.pem" }), /does not exist/);
  assert.match(
    refused([], { ANKRA_CLOUD_TOKEN: TOKEN, ANKRA_CLOUD_CA_BUNDLE: "/x.pem" }, { "/x.pem": "hello" }),
    /holds no PEM certificate/,
  );
});

Deno.test("the API URL must be an http(s) base URL and loses its trailing slash", () => {
  assert.equal(run([], { ANKRA_CLOUD_API_URL: "https://api.example.test/" }).cloud.apiUrl, "https://api.example.test");
  assert.match(refused([], { ANKRA_CLOUD_TOKEN: TOKEN, ANKRA_CLOUD_API_URL: "ftp://x" }), /must be an https:\/\/ URL/);
  assert.match(
    refused([], { ANKRA_CLOUD_TOKEN: TOKEN, ANKRA_CLOUD_API_URL: "https://u:p@x.test" }),
    /must not carry credentials/,
  );
  assert.ok(run([], { ANKRA_CLOUD_API_URL: "http://127.0.0.1:8080" }).warnings.some((w) => /plain http/.test(w)));
});

Deno.test("controllers can be chosen and disabled by name and alias", () => {
  assert.deepEqual(run(["--controllers=*,-service"]).controllers, ["cloud-node", "cloud-node-lifecycle"]);
  assert.deepEqual(run(["--controllers=service-lb-controller"]).controllers, ["service"]);
  assert.ok(run(["--controllers=*,route"]).warnings.some((w) => /route controller does nothing/.test(w)));
  assert.match(refused(["--controllers=nodes"], { ANKRA_CLOUD_TOKEN: TOKEN }), /unknown controller "nodes"/);
});

Deno.test("framework flags asking for routes or CIDRs are accepted with a warning", () => {
  const config = run(["--configure-cloud-routes=true", "--allocate-node-cidrs", "--cloud-config=/etc/cloud.conf"]);
  assert.equal(config.warnings.length, 3);
});

Deno.test("numbers and durations are range-checked and named", () => {
  assert.match(refused(["--secure-port=70000"], { ANKRA_CLOUD_TOKEN: TOKEN }), /--secure-port must be a whole number/);
  assert.match(refused(["--v=high"], { ANKRA_CLOUD_TOKEN: TOKEN }), /--v must be a whole number from 0 to 10/);
  assert.match(
    refused(["--node-monitor-period=fast"], { ANKRA_CLOUD_TOKEN: TOKEN }),
    /--node-monitor-period must be a duration/,
  );
  assert.match(
    refused(["--leader-elect-renew-deadline=20s"], { ANKRA_CLOUD_TOKEN: TOKEN }),
    /lease-duration > --leader-elect-renew-deadline/,
  );
  assert.equal(run(["--node-status-update-frequency=1m30s"]).nodeStatusUpdateFrequencyMs, 90_000);
});

Deno.test("a bad cluster name is refused, since it becomes part of load balancer names", () => {
  assert.match(refused(["--cluster-name=my cluster"], { ANKRA_CLOUD_TOKEN: TOKEN }), /--cluster-name must be 1-63/);
});

Deno.test("--tls-cert-file and --tls-private-key-file go together", () => {
  assert.match(refused(["--tls-cert-file=/a"], { ANKRA_CLOUD_TOKEN: TOKEN }), /go together/);
});

Deno.test("--help lists every flag with its environment variable and default, without needing a token", () => {
  const command = resolveCommand(["--help"], { env: {} });
  assert.equal(command.kind, "help");
  const text = helpText();
  for (
    const expected of [
      "--cloud-provider",
      "--cluster-name",
      "(default kubernetes)",
      "--leader-elect-resource-name",
      "--secure-port",
      "(default 10258)",
      "ANKRA_CLOUD_TOKEN",
      "ANKRA_CLOUD_API_URL",
      "(default https://cloud.ankra.app)",
      "ANKRA_CLOUD_CA_BUNDLE",
      "ANKRA_CLOUD_NETWORK_ID",
      "ANKRA_CLOUD_ZONE",
      "ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY",
      "[env ANKRA_CLOUD_TOKEN_FILE]",
    ]
  ) assert.ok(text.includes(expected), `--help lacks ${expected}`);
});

Deno.test("--version prints the program and version from deno.json", async () => {
  const command = resolveCommand(["--version"], { env: {} });
  assert.deepEqual(command, { kind: "version", text: `ankra-cloud-ccm ${VERSION}` });
  const denoJson = JSON.parse(await Deno.readTextFile(new URL("../../../deno.json", import.meta.url)));
  assert.equal(`v${denoJson.version}`, VERSION);
  assert.match(VERSION, /^v\d+\.\d+\.\d+$/);
});

Deno.test("the controller has no simulator subcommand: the word is refused as an unexpected argument", () => {
  assert.throws(() => resolveCommand(["simulator"], { env: {} }), /unexpected argument "simulator"/);
});

Deno.test("a token pasted into another setting is redacted from the error naming that setting", () => {
  const message = refused([], { ANKRA_CLOUD_TOKEN: TOKEN, ANKRA_CLOUD_NETWORK_ID: `${TOKEN} ` + "x".repeat(200) });
  assert.ok(!message.includes(TOKEN), message);
  assert.match(message, /ANKRA_CLOUD_NETWORK_ID/);
});

Deno.test("upstream cloud-controller-manager flags from Go-chart extraArgs are accepted, each with one warning", () => {
  const config = run([
    "--profiling=false",
    "--webhook-secure-port=0",
    "--feature-gates=CloudControllerManagerWatchBasedRoutesReconciliation=true",
    "--authentication-skip-lookup",
    "--cert-dir=/var/run/ccm",
    "--min-resync-period=12h",
    "--leader-elect-resource-lock=leases",
    "--kube-api-content-type=application/vnd.kubernetes.protobuf",
    "--route-reconciliation-period=30s",
    "--cluster-cidr=10.42.0.0/16",
    "--concurrent-node-status-updates=2",
    "--node-sync-period=1m",
    "--contention-profiling=true",
  ]);
  // Values that are what this controller does anyway pass silently.
  assert.ok(!config.warnings.some((w) => /--profiling|--webhook-secure-port|--leader-elect-resource-lock/.test(w)));
  for (
    const flag of ["--feature-gates", "--cert-dir", "--min-resync-period", "--kube-api-content-type", "--cluster-cidr"]
  ) {
    const warning = config.warnings.find((w) => w.startsWith(flag));
    assert.ok(warning, `a warning for ${flag}`);
    assert.match(warning, /accepted for compatibility and changes nothing/);
  }
});

Deno.test("upstream flags whose meaning cannot be honoured are refused with one line naming them", () => {
  assert.match(
    refused(["--leader-elect-resource-lock=endpoints"], { ANKRA_CLOUD_TOKEN: TOKEN }),
    /^--leader-elect-resource-lock=endpoints cannot be honoured: /,
  );
  assert.match(
    refused(["--client-ca-file=/etc/kubernetes/pki/ca.crt"], { ANKRA_CLOUD_TOKEN: TOKEN }),
    /^--client-ca-file=\/etc\/kubernetes\/pki\/ca.crt cannot be honoured: /,
  );
  assert.match(refused(["--profiling=maybe"], { ANKRA_CLOUD_TOKEN: TOKEN }), /--profiling must be true or false/);
});

Deno.test("the upstream command's spellings: -h, -v=N, -v N, underscores in names", () => {
  assert.equal(resolveCommand(["-h"], { env: {} }).kind, "help");
  assert.equal(run(["-v=5"]).verbosity, 5);
  assert.equal(run(["-v", "6"]).verbosity, 6);
  assert.equal(run(["--leader_elect=false"]).leaderElect, false);
  assert.equal(run(["--kube-api-qps=12.5"]).kubeApiQps, 12.5);
});

Deno.test("--version=raw adds the runtime and platform; --version=false runs the controller", () => {
  const raw = resolveCommand(["--version=raw"], { env: {} });
  assert.equal(raw.kind, "version");
  assert.match((raw as { text: string }).text, new RegExp(`^ankra-cloud-ccm ${VERSION}\n  runtime: deno `));
  assert.equal(resolveCommand(["--version=false"], { env: { ANKRA_CLOUD_TOKEN: TOKEN } }).kind, "run");
  assert.match(refused(["--version=v1.2.3"], {}), /--version must be true, false or raw/);
});

Deno.test("--dry-run takes no Lease", () => {
  const config = run(["--dry-run"]);
  assert.equal(config.dryRun, true);
  assert.equal(config.leaderElect, false);
  assert.ok(run(["--dry-run", "--leader-elect=true"]).warnings.some((w) => /--dry-run takes no Lease/.test(w)));
});

Deno.test("doctor takes the controller's settings and --output; a bad setting is its first finding, not an exit", () => {
  const ok = resolveCommand(["doctor", "--output=json", "--cluster-name=blue"], { env: { ANKRA_CLOUD_TOKEN: TOKEN } });
  assert.equal(ok.kind, "doctor");
  assert.equal((ok as { output: string }).output, "json");
  assert.equal((ok as { config: Config }).config.clusterName, "blue");
  const missing = resolveCommand(["doctor"], { env: {} }) as { problem?: string };
  assert.match(missing.problem!, /ANKRA_CLOUD_TOKEN is not set/);
  assert.throws(() => resolveCommand(["doctor", "--output=yaml"], { env: {} }), /--output must be text or json/);
});

Deno.test("a bad --bind-address is refused by name", () => {
  assert.match(refused(["--bind-address=localhost:80"], { ANKRA_CLOUD_TOKEN: TOKEN }), /--bind-address must be an IP/);
});

Deno.test("1.37's --concurrent-node-lifecycle-syncs is accepted as the lifecycle controller's workers, and 0 is refused", () => {
  const config = run(["--concurrent-node-lifecycle-syncs=8"], { ANKRA_CLOUD_TOKEN: TOKEN });
  assert.equal(config.concurrentNodeLifecycleSyncs, 8);
  assert.deepEqual(config.warnings, [], "implemented: no 'does nothing here' warning");
  assert.match(
    refused(["--concurrent-node-lifecycle-syncs=0"], { ANKRA_CLOUD_TOKEN: TOKEN }),
    /--concurrent-node-lifecycle-syncs/,
  );
});

Deno.test("--node-labels-from-server is off by default, reads keys and prefixes, and refuses anything else by name", () => {
  assert.equal(run([]).nodeLabelsFromServer, undefined, "off: no server label is copied or removed");
  const selector = run(["--node-labels-from-server=pool, team.example/*"]).nodeLabelsFromServer!;
  assert.deepEqual([...selector.keys], ["pool"]);
  assert.deepEqual(selector.prefixes, ["team.example/"]);
  assert.equal(run(["--node-labels-from-server=*"]).nodeLabelsFromServer?.all, true);
  assert.match(
    refused(["--node-labels-from-server=pool=gpu"], { ANKRA_CLOUD_TOKEN: TOKEN }),
    /^--node-labels-from-server must be comma-separated server label keys, key prefixes ending in \* .*"pool=gpu"/,
  );
});
