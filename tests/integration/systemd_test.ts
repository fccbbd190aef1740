/**
 * The systemd install in `deploy/systemd/`, checked as an operator would use it:
 *
 * - the unit passes `systemd-analyze verify` (Debian's systemd package) and `systemd-analyze security` rates it
 *   low exposure;
 * - `rbac.yaml` is exactly the Helm chart's ServiceAccount, ClusterRole and bindings (labels aside);
 * - `write-kubeconfig.sh`, run against the test control plane, writes a 0600 kubeconfig whose identity may do what the
 *   controller needs and nothing more (`kubectl auth can-i`, SelfSubjectRulesReview), with either kind of token;
 * - the unit's own `ExecStart` line — its `Environment=` defaults, the shipped environment file, `%d` as the
 *   credentials directory holding `token` and `kubeconfig`, the launcher replaced by `deno run main.ts` with the
 *   launcher's permissions (lib/runtime_permissions.ts), the same program — runs the controller as two "hosts" would: one leads and initialises a Node under the
 *   least-privilege kubeconfig, the other stands by and takes over when the leader gets SIGTERM (exit code 0);
 * - the released launcher (`scripts/build.sh`), run from that same command line as an unprivileged user under
 *   strace, makes only system calls the unit's `SystemCallFilter=` allows, opens only the socket families of
 *   `RestrictAddressFamilies=` and never maps memory writable and executable (`MemoryDenyWriteExecute=yes`).
 *
 * No systemd manager runs on this machine, so DynamicUser=, LoadCredential= and the sandboxing are exercised here by
 * their effects; real_systemd_test.ts runs the unit under a real systemd in a container.
 */
import assert from "node:assert/strict";
import { loadAll } from "js-yaml";
import { freePort, testControlPlane, uniqueName } from "../support/control_plane.ts";
import { eventsFor, kubeletNode, kubeOk, kubeRequest, serviceIngress } from "../support/kube_http.ts";
import { eventually } from "../support/node_controllers.ts";
import { serverSeed, startTestCloud, TEST_TOKEN, testSeed } from "../support/simulator.ts";
import { controllerTarball } from "../support/release_build.ts";
import { permissionFlagsFor } from "../../lib/runtime_permissions.ts";

const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const SYSTEMD_DIR = `${ROOT}/deploy/systemd`;
const UNIT = `${SYSTEMD_DIR}/ankra-cloud-ccm.service`;
const ENV_FILE = `${SYSTEMD_DIR}/ankra-cloud-ccm.env`;
const SCRIPT = `${SYSTEMD_DIR}/write-kubeconfig.sh`;
const RBAC = `${SYSTEMD_DIR}/rbac.yaml`;
const MAIN = `${ROOT}/main.ts`;
/** Where the unit expects the release tarball's launcher. */
const LAUNCHER = "/opt/ankra-cloud-ccm/bin/ankra-cloud-ccm";

// ---------------------------------------------------------------------------------------------------------------
// Tools

/** A test binary (kubectl, helm) from KUBEBUILDER_ASSETS, else PATH. */
function tool(name: string): string {
  const dir = Deno.env.get("KUBEBUILDER_ASSETS");
  return dir ? `${dir}/${name}` : name;
}

async function run(
  cmd: string,
  args: string[],
  options: { env?: Record<string, string>; stdin?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(cmd, {
    args,
    env: options.env,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const out = await child.output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

function systemdAnalyze(): string {
  for (const path of ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"]) {
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch { /* next */ }
  }
  throw new Error("systemd-analyze not found: install Debian's systemd package (apt-get install systemd)");
}

/** Runs deploy/systemd/write-kubeconfig.sh against the test control plane with the test's kubectl. */
function writeKubeconfig(output: string, extra: string[]) {
  const plane = testControlPlane();
  return run("sh", [SCRIPT, `--admin-kubeconfig=${plane.kubeconfigPath}`, `--output=${output}`, ...extra], {
    env: { KUBECTL: tool("kubectl") },
  });
}

/** Removes what write-kubeconfig.sh created, so other tests (the chart's) can own the same cluster-wide names. */
async function removeSystemdRbac(): Promise<void> {
  const plane = testControlPlane();
  await run(tool("kubectl"), [
    `--kubeconfig=${plane.kubeconfigPath}`,
    "delete",
    "--ignore-not-found",
    "--wait=false",
    "-f",
    RBAC,
  ]);
  await kubeRequest(plane, "DELETE", "/api/v1/namespaces/kube-system/secrets/ankra-cloud-ccm-token");
}

// ---------------------------------------------------------------------------------------------------------------
// The unit file, read the way systemd reads it (only what this unit uses)

interface UnitEntry {
  section: string;
  key: string;
  value: string;
}

/** Parses a unit file into its assignments, in order (comments and blank lines dropped, continuations joined). */
function parseUnit(text: string): UnitEntry[] {
  const entries: UnitEntry[] = [];
  let section = "";
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i].trim();
    if (!line || line.startsWith("#") || line.startsWith(";")) continue;
    while (line.endsWith("\\") && i + 1 < lines.length) line = line.slice(0, -1) + " " + lines[++i].trim();
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1];
      continue;
    }
    const eq = line.indexOf("=");
    if (eq < 0) throw new Error(`unit line without '=': ${line}`);
    entries.push({ section, key: line.slice(0, eq).trim(), value: line.slice(eq + 1).trim() });
  }
  return entries;
}

/** Expands the specifiers this unit may use: `%d` (credentials directory) and `%%`. */
function expandSpecifiers(value: string, credentialsDir: string): string {
  return value.replace(/%(.)/g, (_, c: string) => {
    if (c === "d") return credentialsDir;
    if (c === "%") return "%";
    throw new Error(`specifier %${c} is not expected in this unit: ${value}`);
  });
}

/** Splits a command line or `Environment=` value into words, honouring double and single quotes. */
function splitWords(value: string): string[] {
  const words: string[] = [];
  let current = "";
  let quote: string | undefined;
  let inWord = false;
  for (const ch of value) {
    if (quote) {
      if (ch === quote) quote = undefined;
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(current);
      current = "";
      inWord = false;
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unterminated quote in: ${value}`);
  if (inWord) words.push(current);
  return words;
}

/** Reads an environment file: `KEY=value` lines, `#`/`;` comments, optional surrounding quotes. */
function parseEnvironmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#") || line.startsWith(";")) continue;
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!match) throw new Error(`environment file line is not KEY=value: ${line}`);
    let value = match[2].trim();
    if (/^(".*"|'.*')$/.test(value)) value = value.slice(1, -1);
    env[match[1]] = value;
  }
  return env;
}

/**
 * `ExecStart` with the environment substituted as systemd does: `${VAR}` inside a word is replaced by the value as
 * is; `$VAR` as a word of its own becomes the value split at white space (zero or more words).
 */
function expandCommand(words: string[], env: Record<string, string>): string[] {
  const argv: string[] = [];
  for (const word of words) {
    const alone = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(word);
    if (alone) {
      argv.push(...(env[alone[1]] ?? "").split(/\s+/).filter(Boolean));
      continue;
    }
    argv.push(word.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => env[name] ?? ""));
  }
  return argv;
}

/** How systemd would start the service: the environment and the command, with `%d` = `credentialsDir`. */
interface ServiceLaunch {
  env: Record<string, string>;
  argv: string[];
  /** Credential name → source path (`LoadCredential=`). */
  credentials: Map<string, string>;
}

function serviceLaunch(unitText: string, environmentFile: string, credentialsDir: string): ServiceLaunch {
  const service = parseUnit(unitText).filter((e) => e.section === "Service");
  const env: Record<string, string> = {};
  const fileEnv: Record<string, string> = {};
  const credentials = new Map<string, string>();
  let exec: string | undefined;
  for (const { key, value } of service) {
    if (key === "Environment") {
      for (const assignment of splitWords(expandSpecifiers(value, credentialsDir))) {
        const eq = assignment.indexOf("=");
        env[assignment.slice(0, eq)] = assignment.slice(eq + 1);
      }
    } else if (key === "EnvironmentFile") {
      // The shipped path is replaced by the test's copy; its settings override Environment= (systemd.exec(5)).
      assert.equal(value, "/etc/ankra-cloud-ccm/ankra-cloud-ccm.env");
      Object.assign(fileEnv, parseEnvironmentFile(Deno.readTextFileSync(environmentFile)));
    } else if (key === "LoadCredential") {
      const [name, path] = value.split(":");
      credentials.set(name, path);
    } else if (key === "ExecStart") {
      assert.equal(exec, undefined, "one ExecStart");
      exec = value;
    }
  }
  assert.ok(exec, "the unit has an ExecStart line");
  assert.ok(!/^[@\-:+!]/.test(exec), "no ExecStart prefix characters");
  const merged = { ...env, ...fileEnv, CREDENTIALS_DIRECTORY: credentialsDir };
  return { env: merged, argv: expandCommand(splitWords(expandSpecifiers(exec, credentialsDir)), merged), credentials };
}

// ---------------------------------------------------------------------------------------------------------------
// A controller process started from the unit's command line

interface Service {
  child: Deno.ChildProcess;
  lines: string[];
  exited: Promise<Deno.CommandStatus>;
}

/** Spawns `command` with exactly `env` (systemd starts services with a clean environment), capturing its lines. */
function spawnCaptured(command: string, args: string[], env: Record<string, string>): Service {
  const child = new Deno.Command(command, {
    args,
    clearEnv: true,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    let buffer = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let newline;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        lines.push(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
      }
    }
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  return { child, lines, exited: child.status.then(async (s) => (await pumps, s)) };
}

/**
 * Starts the unit's command with the launcher replaced by `deno run main.ts` (the same program) with the permissions
 * the launcher gives it.
 */
function startService(launch: ServiceLaunch): Service {
  assert.equal(launch.argv[0], LAUNCHER, "ExecStart runs the release tarball's launcher");
  const permissions = permissionFlagsFor(launch.argv.slice(1), launch.env);
  return spawnCaptured(Deno.execPath(), ["run", ...permissions, "--no-prompt", MAIN, ...launch.argv.slice(1)], {
    // Besides the unit's variables, what Deno needs to run from source (the launcher sets its own DENO_DIR).
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? "/",
    ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
    ...launch.env,
  });
}

/**
 * One control-plane "host" as the guide sets it up, under `dir/name`: the shipped environment file plus `settings`,
 * and a credentials directory into which the unit's `LoadCredential=` sources (`/etc/ankra-cloud-ccm/…`, here
 * files in `etc`) are copied, as systemd does at every start.
 */
async function prepareHost(
  dir: string,
  name: string,
  etc: string,
  settings: Record<string, string>,
): Promise<ServiceLaunch & { credentialsDir: string }> {
  const credentialsDir = `${dir}/${name}/credentials`;
  await Deno.mkdir(credentialsDir, { recursive: true });
  const envFile = `${dir}/${name}/ankra-cloud-ccm.env`;
  const lines = Object.entries(settings).map(([key, value]) => `${key}=${value}`);
  await Deno.writeTextFile(envFile, (await Deno.readTextFile(ENV_FILE)) + lines.join("\n") + "\n");
  const launch = serviceLaunch(await Deno.readTextFile(UNIT), envFile, credentialsDir);
  assert.deepEqual([...launch.credentials.keys()], ["token", "kubeconfig"]);
  for (const [credential, source] of launch.credentials) {
    await Deno.copyFile(source.replace("/etc/ankra-cloud-ccm", etc), `${credentialsDir}/${credential}`);
  }
  assert.equal(launch.env.ANKRA_CLOUD_TOKEN_FILE, `${credentialsDir}/token`);
  assert.ok(launch.argv.includes(`--kubeconfig=${credentialsDir}/kubeconfig`), launch.argv.join(" "));
  if (settings.CLUSTER_NAME) assert.ok(launch.argv.includes(`--cluster-name=${settings.CLUSTER_NAME}`));
  return { ...launch, credentialsDir };
}

/** `/etc/ankra-cloud-ccm` as the guide makes it: the API token and a least-privilege kubeconfig, root-only. */
async function prepareEtc(dir: string): Promise<string> {
  const etc = `${dir}/etc`;
  await Deno.mkdir(etc, { mode: 0o700 });
  await Deno.writeTextFile(`${etc}/token`, `${TEST_TOKEN}\n`, { mode: 0o600 });
  const written = await writeKubeconfig(`${etc}/kubeconfig`, ["--token-source=request", "--duration=1h"]);
  assert.equal(written.code, 0, written.stderr);
  return etc;
}

async function readyz(port: number): Promise<string> {
  const out = await run("curl", ["-sk", "--max-time", "5", `https://127.0.0.1:${port}/readyz?verbose`]);
  return out.stdout;
}

// ---------------------------------------------------------------------------------------------------------------

Deno.test("the unit passes systemd-analyze verify and is rated low exposure by systemd-analyze security", async () => {
  const analyze = systemdAnalyze();
  const unit = await Deno.readTextFile(UNIT);
  // As shipped, verify fails only because the launcher is not installed on this machine.
  const asShipped = await run(analyze, ["verify", UNIT]);
  if (asShipped.code !== 0) {
    assert.match(asShipped.stderr, new RegExp(`${LAUNCHER} is not executable`), asShipped.stderr);
    const rest = asShipped.stderr.split("\n").filter((l) => l.trim() && !l.includes(LAUNCHER));
    assert.deepEqual(rest, [], "no other complaint about the unit as shipped");
  }
  // A copy whose ExecStart names an executable that exists must pass without a word.
  const dir = await Deno.makeTempDir({ prefix: "ccm-unit-" });
  try {
    const stub = `${dir}/ankra-cloud-ccm`;
    await Deno.writeTextFile(stub, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    const copy = `${dir}/ankra-cloud-ccm.service`;
    await Deno.writeTextFile(copy, unit.replaceAll(LAUNCHER, stub));
    const verified = await run(analyze, ["verify", copy]);
    assert.equal(verified.code, 0, verified.stdout + verified.stderr);
    assert.equal(verified.stderr.trim(), "", "systemd-analyze verify has no warning");
    const security = await run(analyze, ["security", "--offline=yes", "--no-pager", copy]);
    assert.equal(security.code, 0, security.stderr);
    const level = /Overall exposure level for \S+: (\d+\.\d+)/.exec(security.stdout);
    assert.ok(level, security.stdout);
    assert.ok(Number(level[1]) <= 1.5, `exposure ${level[1]} (1.5 or lower expected):\n${security.stdout}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  // The settings the guide promises.
  const service = new Map<string, string[]>();
  for (const e of parseUnit(unit).filter((e) => e.section === "Service")) {
    service.set(e.key, [...(service.get(e.key) ?? []), e.value]);
  }
  const one = (key: string) => service.get(key)?.join(" ");
  assert.equal(one("DynamicUser"), "yes");
  assert.deepEqual(service.get("LoadCredential"), [
    "token:/etc/ankra-cloud-ccm/token",
    "kubeconfig:/etc/ankra-cloud-ccm/kubeconfig",
  ]);
  assert.ok(service.get("Environment")?.includes("ANKRA_CLOUD_TOKEN_FILE=%d/token"));
  assert.equal(one("EnvironmentFile"), "/etc/ankra-cloud-ccm/ankra-cloud-ccm.env");
  assert.equal(one("Restart"), "always");
  assert.equal(one("RestartSec"), "5");
  assert.equal(one("ProtectSystem"), "strict");
  assert.equal(one("NoNewPrivileges"), "yes");
  assert.equal(one("CapabilityBoundingSet"), "");
  assert.equal(one("RestrictAddressFamilies"), "AF_INET AF_INET6 AF_UNIX");
  assert.ok(service.get("SystemCallFilter")?.includes("@system-service"));
  assert.match(one("ExecStart") ?? "", /--leader-elect=true/);
  assert.match(one("MemoryMax") ?? "", /^\d+[KMG]$/);
});

Deno.test("rbac.yaml is the chart's ServiceAccount, ClusterRole and bindings (labels aside)", async () => {
  const rendered = await run(tool("helm"), [
    "template",
    "ankra-cloud-ccm",
    `${ROOT}/chart`,
    "--namespace",
    "kube-system",
    "--set",
    "api.token=placeholder",
    "--show-only",
    "templates/serviceaccount.yaml",
    "--show-only",
    "templates/rbac.yaml",
  ]);
  assert.equal(rendered.code, 0, rendered.stderr);
  const withoutLabels = (text: string) =>
    loadAll(text).filter(Boolean).map((doc) => {
      const { metadata, ...rest } = doc as { metadata: Record<string, unknown> };
      const { labels: _labels, ...meta } = metadata;
      return { ...rest, metadata: meta };
    });
  const byKindAndName = (docs: Record<string, unknown>[]) =>
    docs.sort((a, b) =>
      `${a.kind}/${(a.metadata as { name: string }).name}`.localeCompare(
        `${b.kind}/${(b.metadata as { name: string }).name}`,
      )
    );
  assert.deepEqual(
    byKindAndName(withoutLabels(await Deno.readTextFile(RBAC))),
    byKindAndName(withoutLabels(rendered.stdout)),
    "deploy/systemd/rbac.yaml differs from the chart: copy the chart's rules",
  );
});

Deno.test("write-kubeconfig.sh writes a 0600 kubeconfig that may do exactly what the controller needs", async () => {
  const plane = testControlPlane();
  const dir = await Deno.makeTempDir({ prefix: "ccm-kubeconfig-" });
  const output = `${dir}/etc/kubeconfig`;
  try {
    const written = await writeKubeconfig(output, ["--token-source=request", "--duration=1h"]);
    assert.equal(written.code, 0, written.stderr);
    assert.match(written.stderr, /the token expires \d{4}-\d\d-\d\d/);
    assert.equal((await Deno.stat(output)).mode! & 0o777, 0o600);
    const text = await Deno.readTextFile(output);
    assert.match(text, new RegExp(`server: ${plane.url.replaceAll(".", "\\.")}`));
    assert.match(text, /certificate-authority-data: \S+/);
    const token = /token: (\S+)/.exec(text)![1];
    const kubectl = (args: string[]) => run(tool("kubectl"), [`--kubeconfig=${output}`, ...args]);
    const whoami = await kubectl(["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"]);
    assert.equal(whoami.stdout, "system:serviceaccount:kube-system:ankra-cloud-ccm", whoami.stderr);

    // Everything the ClusterRole names, the Role's verbs on the one Lease in kube-system, and the reviews of
    // /metrics callers, are allowed…
    const documents = loadAll(await Deno.readTextFile(RBAC)) as { kind: string; rules?: Rule[] }[];
    const role = documents.find((d) => d.kind === "ClusterRole")!;
    const leaseRole = documents.find((d) => d.kind === "Role")!;
    const expand = (rules: Rule[]) => {
      const found: [verb: string, resource: string, subresource: string, name: string][] = [];
      for (const rule of rules) {
        for (const group of rule.apiGroups) {
          for (const resource of rule.resources) {
            const [base, sub] = resource.split("/");
            for (const name of rule.resourceNames ?? [""]) {
              for (const verb of rule.verbs) found.push([verb, group ? `${base}.${group}` : base, sub ?? "", name]);
            }
          }
        }
      }
      return found;
    };
    const allowed = expand(role.rules!);
    allowed.push(["create", "tokenreviews.authentication.k8s.io", "", ""]);
    allowed.push(["create", "subjectaccessreviews.authorization.k8s.io", "", ""]);
    const inKubeSystem = expand(leaseRole.rules!);
    for (const [verb, resource, subresource, name] of [...allowed, ...inKubeSystem]) {
      const args = [
        "auth",
        "can-i",
        verb,
        name ? `${resource}/${name}` : resource,
        ...(subresource ? [`--subresource=${subresource}`] : []),
        ...(inKubeSystem.some((r) => r[0] === verb && r[1] === resource && r[3] === name) ? ["-n", "kube-system"] : []),
      ];
      const answer = await kubectl(args);
      assert.equal(answer.stdout.trim(), "yes", `can-i ${args.slice(2).join(" ")}: ${answer.stdout}${answer.stderr}`);
    }
    // …and nothing else the controller has no use for.
    const refused: string[][] = [
      ["create", "secrets"],
      ["get", "secrets"],
      ["list", "secrets", "--all-namespaces"],
      ["create", "services"],
      ["delete", "services"],
      ["create", "nodes"],
      ["delete", "leases.coordination.k8s.io"],
      ["update", "leases.coordination.k8s.io/kube-controller-manager", "-n", "kube-system"],
      ["update", "leases.coordination.k8s.io", "-n", "kube-node-lease"],
      ["update", "nodes"],
      ["update", "services"],
      ["create", "pods"],
      ["get", "configmaps"],
      ["create", "serviceaccounts", "--subresource=token"],
      ["impersonate", "users"],
      ["escalate", "clusterroles.rbac.authorization.k8s.io"],
      ["*", "*"],
    ];
    for (const args of refused) {
      const answer = await kubectl(["auth", "can-i", ...args]);
      assert.equal(answer.stdout.trim(), "no", `can-i ${args.join(" ")} must be refused`);
    }
    // Exactly: every rule the API server reports for this identity is one of those — cluster-wide rights in
    // "default", and in kube-system the Role's rights on the Lease (by name) besides.
    const rightText = ([verb, resource, sub, name]: string[]) =>
      `${verb} ${resource}${sub ? `/${sub}` : ""}${name ? ` ${name}` : ""}`;
    for (const namespace of ["default", "kube-system"]) {
      const review = await kubeOk<{ status: { resourceRules: Rule[] } }>(
        plane,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
        {
          token,
          body: { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectRulesReview", spec: { namespace } },
        },
      );
      const expected = new Set([...allowed, ...(namespace === "kube-system" ? inKubeSystem : [])].map(rightText));
      for (const self of ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]) {
        expected.add(`create ${self}.authorization.k8s.io`); // system:basic-user, every authenticated identity
      }
      expected.add("create selfsubjectreviews.authentication.k8s.io"); // `kubectl auth whoami`, same
      const granted = expand(review.status.resourceRules).map(rightText);
      assert.deepEqual(granted.filter((g) => !expected.has(g)), [], `no right beyond the controller's in ${namespace}`);
      assert.deepEqual([...expected].filter((e) => !granted.includes(e)), [], `every right it needs in ${namespace}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
    await removeSystemdRbac();
  }
});

interface Rule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

Deno.test("write-kubeconfig.sh waits for the token kube-controller-manager puts in the Secret", async () => {
  // The test control plane runs no kube-controller-manager: the test fills in the Secret as its token controller
  // would, with a token bound to that Secret.
  const plane = testControlPlane();
  const dir = await Deno.makeTempDir({ prefix: "ccm-kubeconfig-" });
  const output = `${dir}/kubeconfig`;
  const path = "/api/v1/namespaces/kube-system/secrets/ankra-cloud-ccm-token";
  let stop = false;
  const tokenController = (async () => {
    while (!stop) {
      const secret = await kubeRequest<{ metadata: { uid: string }; data?: Record<string, string> }>(
        plane,
        "GET",
        path,
      );
      if (secret.status === 200 && !secret.body.data?.token) {
        const issued = await kubeOk<{ status: { token: string } }>(
          plane,
          "POST",
          "/api/v1/namespaces/kube-system/serviceaccounts/ankra-cloud-ccm/token",
          {
            body: {
              apiVersion: "authentication.k8s.io/v1",
              kind: "TokenRequest",
              spec: {
                expirationSeconds: 3600,
                boundObjectRef: {
                  kind: "Secret",
                  apiVersion: "v1",
                  name: "ankra-cloud-ccm-token",
                  uid: secret.body.metadata.uid,
                },
              },
            },
          },
        );
        await kubeOk(plane, "PATCH", path, { body: { data: { token: btoa(issued.status.token) } } });
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  try {
    const written = await writeKubeconfig(output, []);
    assert.equal(written.code, 0, written.stderr);
    assert.match(written.stderr, /token: Secret kube-system\/ankra-cloud-ccm-token/);
    assert.equal((await Deno.stat(output)).mode! & 0o777, 0o600);
    const secret = await kubeOk<{ type: string; metadata: { annotations: Record<string, string> } }>(
      plane,
      "GET",
      path,
    );
    assert.equal(secret.type, "kubernetes.io/service-account-token");
    assert.equal(secret.metadata.annotations["kubernetes.io/service-account.name"], "ankra-cloud-ccm");
    const listNodes = await run(tool("kubectl"), [`--kubeconfig=${output}`, "auth", "can-i", "list", "nodes"]);
    assert.equal(listNodes.stdout.trim(), "yes");
  } finally {
    stop = true;
    await tokenController;
    await Deno.remove(dir, { recursive: true });
    await removeSystemdRbac();
  }
});

Deno.test("the unit's ExecStart runs the controller: two hosts elect one leader, it initialises a node, the other takes over", async () => {
  const plane = testControlPlane();
  const cluster = uniqueName("systemd");
  const nodeName = uniqueName("systemd-node");
  await using cloud = await startTestCloud(testSeed());
  cloud.simulator.sim.world.addServer(
    serverSeed({ hostname: nodeName, zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }),
  );
  const dir = await Deno.makeTempDir({ prefix: "ccm-systemd-" });
  const services: Service[] = [];
  try {
    const etc = await prepareEtc(dir);
    const host = async (name: string, port: number): Promise<Service> => {
      const launch = await prepareHost(dir, name, etc, {
        CLUSTER_NAME: cluster,
        ANKRA_CLOUD_API_URL: cloud.simulator.url,
        EXTRA_ARGS: `--secure-port=${port} --bind-address=127.0.0.1`,
      });
      const service = startService(launch);
      services.push(service);
      return service;
    };

    const portA = freePort();
    const a = await host("host-a", portA);
    await eventually(async () => (await readyz(portA)).includes("[+]leader-election leading"), 30_000, "host A leads");
    await kubeOk(plane, "POST", "/api/v1/nodes", { body: kubeletNode(nodeName) });
    await eventually(
      async () =>
        Boolean(
          (await kubeOk<{ spec: { providerID?: string } }>(plane, "GET", `/api/v1/nodes/${nodeName}`)).spec
            .providerID,
        ),
      30_000,
      "node initialised under the least-privilege kubeconfig",
    );
    await eventually(
      async () => (await eventsFor(plane, nodeName)).some((e) => e.reason === "Synced"),
      10_000,
      "Synced event",
    );

    const portB = freePort();
    const b = await host("host-b", portB);
    await eventually(async () => (await readyz(portB)).includes("[+]leader-election standby"), 30_000, "B stands by");
    assert.match(await readyz(portA), /\[\+\]leader-election leading/);

    // /metrics is delegated: the admin may read it, the controller's own identity may not.
    const metrics = await run("curl", [
      "-sk",
      "-H",
      `Authorization: Bearer ${plane.token}`,
      `https://127.0.0.1:${portA}/metrics`,
    ]);
    assert.match(metrics.stdout, /leader_election_master_status\{name="ankra-cloud-ccm"\} 1/);
    const ownToken = /token: (\S+)/.exec(await Deno.readTextFile(`${etc}/kubeconfig`))![1];
    const refused = await run("curl", [
      "-sk",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      "-H",
      `Authorization: Bearer ${ownToken}`,
      `https://127.0.0.1:${portA}/metrics`,
    ]);
    assert.equal(refused.stdout, "403");

    // systemctl stop: SIGTERM, exit code 0, the Lease released — the standby leads at once.
    a.child.kill("SIGTERM");
    const stoppedA = await a.exited;
    assert.equal(stoppedA.code, 0, a.lines.join("\n"));
    await eventually(async () => (await readyz(portB)).includes("[+]leader-election leading"), 10_000, "B takes over");
    b.child.kill("SIGTERM");
    assert.equal((await b.exited).code, 0, b.lines.join("\n"));
    for (const s of [a, b]) {
      assert.ok(!s.lines.some((l) => /\b(ERROR|error)\b.*(forbidden|Forbidden)/.test(l)), s.lines.join("\n"));
    }
  } finally {
    for (const s of services) {
      try {
        s.child.kill("SIGKILL");
      } catch { /* stopped */ }
      await s.exited;
    }
    await kubeRequest(plane, "DELETE", `/api/v1/nodes/${nodeName}`);
    await kubeRequest(plane, "DELETE", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/ankra-cloud-ccm");
    await Deno.remove(dir, { recursive: true });
    await removeSystemdRbac();
  }
});

/** The system calls a `SystemCallFilter=` list allows, from the unit's lines (`systemd-analyze syscall-filter`). */
async function allowedSystemCalls(filterLines: string[]): Promise<Set<string>> {
  const analyze = systemdAnalyze();
  const cache = new Map<string, string[]>();
  const expand = async (item: string): Promise<string[]> => {
    if (!item.startsWith("@")) return [item];
    if (!cache.has(item)) {
      const out = await run(analyze, ["syscall-filter", "--no-pager", item]);
      assert.equal(out.code, 0, out.stderr);
      const names: string[] = [];
      for (const line of out.stdout.split("\n").slice(1)) {
        const entry = /^ {4}(\S+)/.exec(line)?.[1];
        if (entry) names.push(...await expand(entry));
      }
      cache.set(item, names);
    }
    return cache.get(item)!;
  };
  const allowed = new Set<string>();
  for (const [index, line] of filterLines.entries()) {
    const deny = line.startsWith("~");
    assert.ok(index > 0 || !deny, "the first SystemCallFilter= line is an allow list");
    for (const item of line.replace(/^~/, "").split(/\s+/).filter(Boolean)) {
      for (const name of await expand(item)) deny ? allowed.delete(name) : allowed.add(name);
    }
  }
  return allowed;
}

Deno.test({
  name: "the released launcher, run as the unit runs it, stays within its system call filter and address families, " +
    "and never makes memory executable",
  // Runs the launcher as another user (setpriv), which needs root, as CI has.
  ignore: Deno.uid() !== 0,
  async fn() {
    const plane = testControlPlane();
    const dir = await Deno.makeTempDir({ prefix: "ccm-systemd-strace-" });
    await Deno.chmod(dir, 0o755);
    const nodeName = uniqueName("strace-node");
    const serviceName = uniqueName("strace-web");
    await using cloud = await startTestCloud(testSeed());
    cloud.simulator.sim.world.addServer(
      serverSeed({ hostname: nodeName, zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }),
    );
    let service: Service | undefined;
    try {
      // The release tarball (built once per test run), installed read-only as the guide installs it in /opt.
      const tarball = await controllerTarball();
      const base = tarball.directory;
      await Deno.mkdir(`${dir}/opt`);
      const untar = await run("tar", ["-xzf", tarball.path, "-C", `${dir}/opt`]);
      assert.equal(untar.code, 0, untar.stderr);
      await run("chmod", ["-R", "a-w", `${dir}/opt`]);
      const launcher = `${dir}/opt/${base}/bin/ankra-cloud-ccm`;

      const etc = await prepareEtc(dir);
      const port = freePort();
      const launch = await prepareHost(dir, "host", etc, {
        CLUSTER_NAME: uniqueName("strace"),
        // A host name, so name resolution (NSS, /etc/hosts) is traced too.
        ANKRA_CLOUD_API_URL: cloud.simulator.url.replace("127.0.0.1", "localhost"),
        EXTRA_ARGS: `--secure-port=${port} --bind-address=127.0.0.1`,
      });
      // The credentials belong to the service's user, as systemd hands them to a DynamicUser= service.
      await run("chown", ["-R", "65532:65532", launch.credentialsDir]);
      await Deno.chmod(launch.credentialsDir, 0o500);
      await Deno.chmod(`${dir}/host`, 0o755);

      const trace = `${dir}/trace.txt`;
      const argv = [launcher, ...launch.argv.slice(1)];
      service = spawnCaptured("strace", [
        "-f",
        "-qq",
        "-o",
        trace,
        "setpriv",
        "--reuid=65532",
        "--regid=65532",
        "--clear-groups",
        ...argv,
      ], { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", ...launch.env });

      // Exercise the node and service controllers, then stop as systemctl stop does.
      await kubeOk(plane, "POST", "/api/v1/nodes", { body: kubeletNode(nodeName) });
      await eventually(
        async () =>
          Boolean(
            (await kubeOk<{ spec: { providerID?: string } }>(plane, "GET", `/api/v1/nodes/${nodeName}`)).spec
              .providerID,
          ),
        60_000,
        "node initialised by the released launcher",
      );
      await kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
        body: { metadata: { name: serviceName }, spec: { type: "LoadBalancer", ports: [{ port: 80 }] } },
      });
      await eventually(
        async () => (await serviceIngress(plane, "default", serviceName)).length > 0,
        30_000,
        "service address",
      );
      await kubeOk(plane, "DELETE", `/api/v1/namespaces/default/services/${serviceName}`);
      await eventually(
        async () =>
          (await kubeRequest(plane, "GET", `/api/v1/namespaces/default/services/${serviceName}`)).status === 404,
        30_000,
        "load balancer deleted and finalizer removed",
      );
      const lines = (await Deno.readTextFile(trace)).split("\n");
      const pid = Number(/^(\d+)\s/.exec(lines[0])![1]);
      Deno.kill(pid, "SIGTERM");
      const status = await service.exited;
      assert.equal(status.code, 0, service.lines.join("\n"));

      // Only what the launcher and the program do: the lines after setpriv executed the launcher.
      const all = (await Deno.readTextFile(trace)).split("\n");
      const start = all.findIndex((l) => l.startsWith(`${pid} `) && l.includes(`execve("${launcher}"`));
      assert.ok(start >= 0, "the trace shows the launcher being executed");
      const calls = all.slice(start).map((l) => /^\d+\s+([a-z0-9_]+)\(/.exec(l)?.[1]).filter((n) => n !== undefined);
      const used = new Set(calls);
      const unit = parseUnit(await Deno.readTextFile(UNIT)).filter((e) => e.section === "Service");
      const allowed = await allowedSystemCalls(unit.filter((e) => e.key === "SystemCallFilter").map((e) => e.value));
      assert.deepEqual([...used].filter((n) => !allowed.has(n)).sort(), [], "system calls outside SystemCallFilter=");
      assert.ok(!used.has("io_uring_setup"));

      const families = new Set(unit.find((e) => e.key === "RestrictAddressFamilies")!.value.split(/\s+/));
      const opened = new Set(all.slice(start).flatMap((l) => /\ssocket\((AF_[A-Z0-9]+)/.exec(l)?.[1] ?? []));
      assert.deepEqual(
        [...opened].filter((f) => !families.has(f)),
        [],
        "socket families outside RestrictAddressFamilies=",
      );

      assert.equal(unit.find((e) => e.key === "MemoryDenyWriteExecute")?.value, "yes");
      const executable = all.slice(start).filter((l) =>
        (/\smmap\(.*PROT_WRITE\|PROT_EXEC|\smmap\(.*PROT_EXEC\|PROT_WRITE/.test(l)) ||
        /\s(pkey_)?mprotect\(.*PROT_EXEC/.test(l) || /\sshmat\(/.test(l)
      );
      assert.deepEqual(executable, [], "MemoryDenyWriteExecute=yes would refuse these");
    } finally {
      if (service) {
        try {
          service.child.kill("SIGKILL");
        } catch { /* stopped */ }
        await service.exited;
      }
      await kubeRequest(plane, "DELETE", `/api/v1/nodes/${nodeName}`);
      await kubeRequest(plane, "DELETE", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/ankra-cloud-ccm");
      await Deno.remove(dir, { recursive: true });
      await removeSystemdRbac();
    }
  },
});
