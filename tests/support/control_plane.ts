/**
 * A real Kubernetes control plane for tests: etcd and kube-apiserver started on free loopback ports with generated
 * certificates, an admin identity (bearer token and client certificate, group `system:masters`), RBAC authorization
 * and service-account token signing. Stopped by {@linkcode ControlPlane.stop}, by the test process's signal
 * handlers, and — when the test process dies without cleaning up — by a watchdog process that kills the servers
 * once their parent is gone.
 *
 * @module
 */

/** Where the binaries live and which versions they report. */
export interface ControlPlaneBinaries {
  /** Path of kube-apiserver. */
  kubeApiserver: string;
  /** Path of etcd. */
  etcd: string;
  /** Directory holding kubectl and helm when they were found beside the servers. */
  dir?: string;
}

/** A running control plane. */
export interface ControlPlane {
  /** `https://127.0.0.1:<port>` of kube-apiserver. */
  url: string;
  /** Bearer token of the admin identity (`system:masters`). */
  token: string;
  /** PEM of the CA that signed the serving and client certificates. */
  caCert: string;
  /** Path of the CA file. */
  caFile: string;
  /** PEM client certificate and key of the admin identity (for mTLS tests). */
  adminCert: { cert: string; key: string };
  /** PEM of the CA and key, for tests that mint their own client certificates. */
  caKeyFile: string;
  /** Path of a kubeconfig using the admin token. */
  kubeconfigPath: string;
  /** Directory with certificates, data and logs. */
  dir: string;
  /** `http://127.0.0.1:<port>` of etcd (for tests that compact it). */
  etcdUrl: string;
  /** An HTTP client that trusts the CA. */
  httpClient: Deno.HttpClient;
  /** Time from start to a ready apiserver, milliseconds. */
  startupMs: number;
  /** Stops kube-apiserver, then etcd, and removes the directory. */
  stop(): Promise<void>;
}

/** Environment variables through which one control plane is shared with a test run. */
export const CONTROL_PLANE_ENV = {
  url: "TEST_KUBE_URL",
  token: "TEST_KUBE_TOKEN",
  caFile: "TEST_KUBE_CA_FILE",
  kubeconfig: "TEST_KUBECONFIG",
  dir: "TEST_KUBE_DIR",
  etcdUrl: "TEST_ETCD_URL",
} as const;

const READY_TIMEOUT_MS = 90_000;

/** Finds kube-apiserver and etcd: `TEST_ASSET_*`, then `KUBEBUILDER_ASSETS`, then `PATH`. */
export function findBinaries(): ControlPlaneBinaries {
  const assets = Deno.env.get("KUBEBUILDER_ASSETS");
  const find = (name: string, envName: string): string => {
    const explicit = Deno.env.get(envName);
    if (explicit) return explicit;
    if (assets && isExecutable(`${assets}/${name}`)) return `${assets}/${name}`;
    for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
      if (dir && isExecutable(`${dir}/${name}`)) return `${dir}/${name}`;
    }
    throw new Error(
      `${name} not found: run \`bash scripts/test_binaries.sh\` and set KUBEBUILDER_ASSETS to the directory it prints`,
    );
  };
  return {
    kubeApiserver: find("kube-apiserver", "TEST_ASSET_KUBE_APISERVER"),
    etcd: find("etcd", "TEST_ASSET_ETCD"),
    dir: assets,
  };
}

/** True when `path` is an executable file. */
export function isExecutable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** Returns a loopback TCP port that was free a moment ago. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function run(cmd: string, args: string[], cwd: string): Promise<void> {
  const output = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  if (!output.success) {
    throw new Error(`${cmd} ${args.join(" ")} failed: ${new TextDecoder().decode(output.stderr)}`);
  }
}

/** Generates a CA, serving and admin certificates and a service-account key pair in `dir` with openssl. */
async function makeCertificates(dir: string): Promise<void> {
  const o = (args: string[]) => run("openssl", args, dir);
  await o([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "3650",
    "-subj",
    "/CN=test-control-plane-ca",
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
  ]);
  await Deno.writeTextFile(
    `${dir}/serving.ext`,
    [
      "basicConstraints=CA:FALSE",
      "keyUsage=digitalSignature,keyEncipherment",
      "extendedKeyUsage=serverAuth",
      "subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default," +
      "DNS:kubernetes.default.svc",
    ].join("\n") + "\n",
  );
  await Deno.writeTextFile(
    `${dir}/client.ext`,
    ["basicConstraints=CA:FALSE", "keyUsage=digitalSignature,keyEncipherment", "extendedKeyUsage=clientAuth"]
      .join("\n") + "\n",
  );
  await o([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=kube-apiserver",
    "-keyout",
    "apiserver.key",
    "-out",
    "apiserver.csr",
  ]);
  await o([
    "x509",
    "-req",
    "-in",
    "apiserver.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "3650",
    "-extfile",
    "serving.ext",
    "-out",
    "apiserver.crt",
  ]);
  await o([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/O=system:masters/CN=test-admin",
    "-keyout",
    "admin.key",
    "-out",
    "admin.csr",
  ]);
  await o([
    "x509",
    "-req",
    "-in",
    "admin.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "3650",
    "-extfile",
    "client.ext",
    "-out",
    "admin.crt",
  ]);
  await o(["genrsa", "-out", "sa.key", "2048"]);
  await o(["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"]);
}

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** True when the host has a default route; kube-apiserver needs one to pick its advertise address. */
async function hasDefaultRoute(): Promise<boolean> {
  try {
    const text = await Deno.readTextFile("/proc/net/route");
    return text.split("\n").slice(1).some((line) => line.split(/\s+/)[1] === "00000000");
  } catch {
    return true;
  }
}

/** Writes a kubeconfig for `url` that trusts the CA and authenticates with `token`. */
export function kubeconfigText(url: string, caPem: string, token: string): string {
  const ca = btoa(caPem);
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: test",
    "  cluster:",
    `    server: ${url}`,
    `    certificate-authority-data: ${ca}`,
    "users:",
    "- name: test-admin",
    "  user:",
    `    token: ${token}`,
    "contexts:",
    "- name: test",
    "  context:",
    "    cluster: test",
    "    user: test-admin",
    "current-context: test",
    "",
  ].join("\n");
}

/** A server process started by {@linkcode startProcess}, its output going to `log`. */
export interface Started {
  /** The process. */
  child: Deno.ChildProcess;
  /** File receiving its standard output and error. */
  log: string;
  /** True once it has exited. */
  exited: boolean;
  /** Its exit status, once it exits. */
  status: Promise<Deno.CommandStatus>;
}

/** Starts `cmd` with its output in `log` (truncated); `detached` gives it its own process group. */
export function startProcess(cmd: string, args: string[], log: string, detached = false): Started {
  const file = Deno.openSync(log, { write: true, create: true, truncate: true });
  const child = new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped", stdin: "null", detached }).spawn();
  const started: Started = { child, log, exited: false, status: child.status };
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) file.writeSync(chunk);
  };
  Promise.all([pump(child.stdout), pump(child.stderr)]).finally(() => file.close()).catch(() => {});
  child.status.then(() => started.exited = true);
  return started;
}

/** Starts a watchdog that kills `pids` when process `parent` has gone (the test process died without cleanup). */
function startWatchdog(parent: number, pids: number[]): Deno.ChildProcess {
  const list = pids.join(" ");
  const script = `while kill -0 ${parent} 2>/dev/null; do sleep 1; done; ` +
    `kill -TERM ${list} 2>/dev/null; sleep 5; kill -KILL ${list} 2>/dev/null; exit 0`;
  const child = new Deno.Command("sh", { args: ["-c", script], stdin: "null", stdout: "null", stderr: "null" })
    .spawn();
  child.unref();
  return child;
}

/** Sends SIGTERM, and SIGKILL when the process has not exited after `graceMs`; resolves once it has exited. */
export async function stopProcess(p: Started, graceMs: number): Promise<void> {
  if (p.exited) return;
  try {
    p.child.kill("SIGTERM");
  } catch {
    return;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => timer = setTimeout(() => resolve("timeout"), graceMs));
  const outcome = await Promise.race([p.status.then(() => "exited" as const), timeout]);
  clearTimeout(timer);
  if (outcome === "timeout") {
    try {
      p.child.kill("SIGKILL");
    } catch { /* already gone */ }
    await p.status;
  }
}

async function waitFor(
  check: () => Promise<boolean>,
  options: { timeoutMs: number; what: string; abortIf: () => string | undefined },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  while (Date.now() < deadline) {
    const reason = options.abortIf();
    if (reason) throw new Error(`${options.what}: ${reason}`);
    try {
      if (await check()) return;
    } catch { /* not up yet */ }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`${options.what}: not ready after ${options.timeoutMs / 1000} s`);
}

/**
 * Starts etcd and kube-apiserver and waits until `/readyz` answers 200 for the admin. On failure everything started
 * is stopped, the directory (with `etcd.log` and `kube-apiserver.log`) is kept and named in the error.
 */
export async function startControlPlane(
  options: {
    binaries?: ControlPlaneBinaries;
    /**
     * Run the servers in their own process group, so a Ctrl-C in the terminal reaches only the caller, which then
     * stops them in order (the demo).
     */
    ownProcessGroup?: boolean;
  } = {},
): Promise<ControlPlane> {
  const binaries = options.binaries ?? findBinaries();
  const started = performance.now();
  const dir = await Deno.makeTempDir({ prefix: "ccm-control-plane-" });
  const processes: Started[] = [];
  let watchdog: Deno.ChildProcess | undefined;
  let httpClient: Deno.HttpClient | undefined;
  const stopAll = async () => {
    for (const p of [...processes].reverse()) await stopProcess(p, 15_000);
    try {
      watchdog?.kill("SIGKILL");
    } catch { /* gone */ }
  };
  try {
    await makeCertificates(dir);
    const token = randomToken();
    await Deno.writeTextFile(`${dir}/tokens.csv`, `${token},test-admin,test-admin-uid,"system:masters"\n`);
    const etcdPort = freePort();
    const apiPort = freePort();
    const etcd = startProcess(
      binaries.etcd,
      [
        `--data-dir=${dir}/etcd-data`,
        `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
        `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
        "--listen-peer-urls=http://127.0.0.1:0",
        "--unsafe-no-fsync=true",
        "--log-level=warn",
      ],
      `${dir}/etcd.log`,
      options.ownProcessGroup,
    );
    processes.push(etcd);
    await waitFor(async () => {
      const response = await fetch(`http://127.0.0.1:${etcdPort}/health`);
      const body = await response.text();
      return response.ok && body.includes('"true"');
    }, {
      timeoutMs: 30_000,
      what: "etcd",
      abortIf: () => etcd.exited ? "exited during startup" : undefined,
    });

    const args = [
      `--etcd-servers=http://127.0.0.1:${etcdPort}`,
      "--bind-address=127.0.0.1",
      `--secure-port=${apiPort}`,
      `--tls-cert-file=${dir}/apiserver.crt`,
      `--tls-private-key-file=${dir}/apiserver.key`,
      `--client-ca-file=${dir}/ca.crt`,
      `--token-auth-file=${dir}/tokens.csv`,
      "--authorization-mode=RBAC",
      // Dual-stack, so tests can create IPv4-only, IPv6-only and dual-stack Services.
      "--service-cluster-ip-range=10.96.0.0/16,fd00:10:96::/108",
      `--service-account-issuer=https://127.0.0.1:${apiPort}`,
      `--service-account-key-file=${dir}/sa.pub`,
      `--service-account-signing-key-file=${dir}/sa.key`,
      "--disable-admission-plugins=ServiceAccount",
      "--profiling=false",
      // ConfigMaps have no watch cache here, so a test can reach etcd's compaction through a watch (410 Gone);
      // the controllers never read ConfigMaps.
      "--watch-cache-sizes=configmaps#0",
      `--cert-dir=${dir}/cert-dir`,
    ];
    if (!(await hasDefaultRoute())) args.push("--advertise-address=198.51.100.10");
    const apiserver = startProcess(binaries.kubeApiserver, args, `${dir}/kube-apiserver.log`, options.ownProcessGroup);
    processes.push(apiserver);
    watchdog = startWatchdog(Deno.pid, processes.map((p) => p.child.pid));

    const caCert = await Deno.readTextFile(`${dir}/ca.crt`);
    httpClient = Deno.createHttpClient({ caCerts: [caCert] });
    const url = `https://127.0.0.1:${apiPort}`;
    const client = httpClient;
    await waitFor(async () => {
      const response = await fetch(`${url}/readyz`, { headers: { authorization: `Bearer ${token}` }, client });
      await response.body?.cancel();
      return response.status === 200;
    }, {
      timeoutMs: READY_TIMEOUT_MS,
      what: "kube-apiserver",
      abortIf: () => apiserver.exited ? "exited during startup" : etcd.exited ? "etcd exited" : undefined,
    });
    const kubeconfigPath = `${dir}/kubeconfig`;
    await Deno.writeTextFile(kubeconfigPath, kubeconfigText(url, caCert, token));
    let stopped = false;
    return {
      url,
      token,
      caCert,
      caFile: `${dir}/ca.crt`,
      caKeyFile: `${dir}/ca.key`,
      adminCert: {
        cert: await Deno.readTextFile(`${dir}/admin.crt`),
        key: await Deno.readTextFile(`${dir}/admin.key`),
      },
      kubeconfigPath,
      dir,
      etcdUrl: `http://127.0.0.1:${etcdPort}`,
      httpClient: client,
      startupMs: Math.round(performance.now() - started),
      async stop() {
        if (stopped) return;
        stopped = true;
        await stopAll();
        client.close();
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      },
    };
  } catch (cause) {
    await stopAll();
    httpClient?.close();
    const message = cause instanceof Error ? cause.message : String(cause);
    throw new Error(
      `control plane did not start (${message}); logs kept in ${dir}/etcd.log and ${dir}/kube-apiserver.log`,
    );
  }
}

/** Connection details of a control plane shared through the environment (see {@linkcode CONTROL_PLANE_ENV}). */
export interface SharedControlPlane {
  /** API server URL. */
  url: string;
  /** Admin bearer token. */
  token: string;
  /** CA PEM. */
  caCert: string;
  /** CA file path. */
  caFile: string;
  /** Admin kubeconfig path. */
  kubeconfigPath: string;
  /** Directory of the control plane (holds the CA key for tests that mint certificates). */
  dir: string;
  /** etcd's client URL. */
  etcdUrl: string;
}

/** The environment variables that hand `plane` to child processes (the test runner sets them). */
export function controlPlaneEnv(plane: SharedControlPlane): Record<string, string> {
  return {
    [CONTROL_PLANE_ENV.url]: plane.url,
    [CONTROL_PLANE_ENV.token]: plane.token,
    [CONTROL_PLANE_ENV.caFile]: plane.caFile,
    [CONTROL_PLANE_ENV.kubeconfig]: plane.kubeconfigPath,
    [CONTROL_PLANE_ENV.dir]: plane.dir,
    [CONTROL_PLANE_ENV.etcdUrl]: plane.etcdUrl,
  };
}

let shared: SharedControlPlane | undefined;

/**
 * The control plane of this test run, started once by `scripts/run_tests.ts` (or `scripts/with_control_plane.ts`)
 * and handed over through the environment.
 *
 * @throws when the test runs outside those scripts, saying how to run it.
 */
export function testControlPlane(): SharedControlPlane {
  if (shared) return shared;
  const url = Deno.env.get(CONTROL_PLANE_ENV.url);
  if (!url) {
    throw new Error(
      "no test control plane: run integration tests with `deno task test`, or " +
        "`deno run -A scripts/with_control_plane.ts -- deno test -A <files>`",
    );
  }
  const caFile = Deno.env.get(CONTROL_PLANE_ENV.caFile)!;
  shared = {
    url,
    token: Deno.env.get(CONTROL_PLANE_ENV.token)!,
    caCert: Deno.readTextFileSync(caFile),
    caFile,
    kubeconfigPath: Deno.env.get(CONTROL_PLANE_ENV.kubeconfig)!,
    dir: Deno.env.get(CONTROL_PLANE_ENV.dir)!,
    etcdUrl: Deno.env.get(CONTROL_PLANE_ENV.etcdUrl)!,
  };
  return shared;
}

/** A name unique to this test run, for objects that must not collide across tests. */
export function uniqueName(prefix: string): string {
  const suffix = crypto.getRandomValues(new Uint32Array(1))[0].toString(36);
  return `${prefix}-${suffix}`.toLowerCase().slice(0, 63).replace(/-+$/, "");
}
