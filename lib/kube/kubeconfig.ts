/**
 * Where the Kubernetes API is and how to authenticate: a kubeconfig file (clusters, users, contexts; client
 * certificates as files or data, token, tokenFile and exec credential plugins — the forms k3s, kubeadm and managed
 * clusters write) or the in-cluster service account. TLS is always verified: `insecure-skip-tls-verify` is refused,
 * and so is a plain `http://` server other than a loopback one (`kubectl proxy`).
 * The YAML parser is loaded only when a kubeconfig file is parsed, so an in-cluster controller never holds it.
 *
 * @module
 */
import * as v from "valibot";
import { encryptedOrLoopback } from "../tls.ts";

/** An exec credential plugin (`users[].user.exec`). */
export interface ExecConfig {
  /** A bare name is looked up in `PATH`; a relative path is resolved against `baseDir`. */
  command: string;
  /** Passed to `command` as they are (no shell); empty when the kubeconfig has none. */
  args: string[];
  /** Added to the controller's own environment, which the plugin inherits. */
  env: Record<string, string>;
  /** `client.authentication.k8s.io/v1` or `v1beta1`. */
  apiVersion: string;
  /** Directory relative paths in `command` are resolved against (the kubeconfig's). */
  baseDir: string;
}

/** How requests authenticate (besides an optional client certificate). */
export type AuthSource =
  | { kind: "none" }
  | { kind: "token"; token: string }
  | { kind: "tokenFile"; path: string }
  | { kind: "exec"; exec: ExecConfig };

/** Everything needed to talk to an API server. */
export interface KubeConnectionConfig {
  /** Base URL, e.g. `https://127.0.0.1:6443`. */
  server: string;
  /**
   * PEM CAs to trust: when given, the only ones trusted for the API server (the system roots are not); when empty,
   * the system roots.
   */
  caCerts: string[];
  /** PEM client certificate and key. */
  clientCert?: { cert: string; key: string };
  /** Where the bearer token comes from, if any; read again when it can change (file, exec plugin). */
  auth: AuthSource;
  /** Where this came from, for messages. */
  source: string;
}

/** A configuration problem naming the file and the field. */
export class KubeconfigError extends Error {
  /** `message` names the kubeconfig (or in-cluster source) and the field at fault, in one line. */
  constructor(message: string) {
    super(message);
    this.name = "KubeconfigError";
  }
}

/**
 * A kubeconfig that asks for an unprotected connection (plain http to a host that is not loopback,
 * `insecure-skip-tls-verify`): refused until the file is changed, so the controller exits 2 (a configuration error,
 * not retried by the systemd unit) instead of 1.
 */
export class InsecureKubeconfigError extends KubeconfigError {
  /** `message` names the source and the unprotected setting (plain `http://` or `insecure-skip-tls-verify`). */
  constructor(message: string) {
    super(message);
    this.name = "InsecureKubeconfigError";
  }
}

const Named = <T extends v.GenericSchema>(key: string, inner: T) =>
  v.array(
    v.looseObject({ name: v.string(), [key]: inner } as { name: v.StringSchema<undefined> } & { [k: string]: T }),
  );

const ClusterSchema = v.looseObject({
  server: v.string(),
  "certificate-authority": v.optional(v.string()),
  "certificate-authority-data": v.optional(v.string()),
  "insecure-skip-tls-verify": v.optional(v.boolean()),
  "tls-server-name": v.optional(v.string()),
});

const UserSchema = v.looseObject({
  "client-certificate": v.optional(v.string()),
  "client-certificate-data": v.optional(v.string()),
  "client-key": v.optional(v.string()),
  "client-key-data": v.optional(v.string()),
  token: v.optional(v.string()),
  tokenFile: v.optional(v.string()),
  username: v.optional(v.string()),
  "auth-provider": v.optional(v.unknown()),
  exec: v.optional(v.looseObject({
    apiVersion: v.optional(v.string(), "client.authentication.k8s.io/v1"),
    command: v.string(),
    args: v.optional(v.nullable(v.array(v.string())), []),
    env: v.optional(v.nullable(v.array(v.object({ name: v.string(), value: v.string() }))), []),
  })),
});

const KubeconfigSchema = v.looseObject({
  clusters: v.optional(v.nullable(Named("cluster", ClusterSchema)), []),
  users: v.optional(v.nullable(Named("user", v.optional(v.nullable(UserSchema), {}))), []),
  contexts: v.optional(
    v.nullable(Named("context", v.looseObject({ cluster: v.string(), user: v.optional(v.string(), "") }))),
    [],
  ),
  "current-context": v.optional(v.string(), ""),
});

function dirname(path: string): string {
  const at = path.lastIndexOf("/");
  return at <= 0 ? (at === 0 ? "/" : ".") : path.slice(0, at);
}

function resolvePath(baseDir: string, path: string): string {
  return path.startsWith("/") ? path : `${baseDir}/${path}`;
}

function decodeData(data: string, what: string, source: string): string {
  try {
    return new TextDecoder().decode(Uint8Array.from(atob(data.replace(/\s+/g, "")), (c) => c.charCodeAt(0)));
  } catch {
    throw new KubeconfigError(`${source}: ${what} is not valid base64`);
  }
}

function readFileFor(path: string, what: string, source: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch (cause) {
    if (cause instanceof Deno.errors.NotCapable) {
      throw new KubeconfigError(
        `${source}: ${what} ${path} is outside what the runtime may read: keep it under /etc/ankra-cloud-ccm, or ` +
          "beside the kubeconfig given to the launcher (which allows that file's directory)",
      );
    }
    throw new KubeconfigError(`${source}: ${what} ${path} cannot be read`);
  }
}

/**
 * Parses kubeconfig text (YAML or JSON) for the current context, or `context` when given. Relative paths are
 * resolved against `path`'s directory.
 *
 * @throws {KubeconfigError} naming the file and what is wrong.
 */
export async function parseKubeconfig(text: string, path: string, context?: string): Promise<KubeConnectionConfig> {
  const { load: loadYaml } = await import("js-yaml");
  let document: unknown;
  try {
    document = loadYaml(text);
  } catch (cause) {
    throw new KubeconfigError(`${path}: not valid YAML: ${(cause as Error).message.split("\n")[0]}`);
  }
  const parsed = v.safeParse(KubeconfigSchema, document);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    throw new KubeconfigError(`${path}: field ${v.getDotPath(issue) ?? "(document)"}: ${issue.message}`);
  }
  const config = parsed.output;
  const baseDir = dirname(path);
  const contextName = context ?? config["current-context"];
  const contexts = config.contexts ?? [];
  const ctx = contexts.find((c) => c.name === contextName) ??
    (contextName === "" && contexts.length === 1 ? contexts[0] : undefined);
  if (!ctx) {
    throw new KubeconfigError(`${path}: context "${contextName}" not found; set current-context`);
  }
  const contextDoc = ctx.context as { cluster: string; user: string };
  const cluster = (config.clusters ?? []).find((c) => c.name === contextDoc.cluster)?.cluster as
    | v.InferOutput<typeof ClusterSchema>
    | undefined;
  if (!cluster) {
    throw new KubeconfigError(`${path}: cluster "${contextDoc.cluster}" of context "${ctx.name}" not found`);
  }
  if (cluster["insecure-skip-tls-verify"]) {
    throw new InsecureKubeconfigError(
      `${path}: cluster "${contextDoc.cluster}" sets insecure-skip-tls-verify; this controller always verifies TLS: ` +
        "give certificate-authority(-data) instead",
    );
  }
  const caCerts: string[] = [];
  if (cluster["certificate-authority-data"]) {
    caCerts.push(decodeData(cluster["certificate-authority-data"], "certificate-authority-data", path));
  } else if (cluster["certificate-authority"]) {
    caCerts.push(
      readFileFor(resolvePath(baseDir, cluster["certificate-authority"]), "certificate-authority", path),
    );
  }
  const user = ((config.users ?? []).find((u) => u.name === contextDoc.user)?.user ?? {}) as v.InferOutput<
    typeof UserSchema
  >;
  if (user["auth-provider"]) {
    throw new KubeconfigError(
      `${path}: user "${contextDoc.user}" uses an auth-provider, which Kubernetes removed: use an exec plugin`,
    );
  }
  let clientCert: { cert: string; key: string } | undefined;
  const certPem = user["client-certificate-data"]
    ? decodeData(user["client-certificate-data"], "client-certificate-data", path)
    : user["client-certificate"]
    ? readFileFor(resolvePath(baseDir, user["client-certificate"]), "client-certificate", path)
    : undefined;
  const keyPem = user["client-key-data"]
    ? decodeData(user["client-key-data"], "client-key-data", path)
    : user["client-key"]
    ? readFileFor(resolvePath(baseDir, user["client-key"]), "client-key", path)
    : undefined;
  if (certPem && keyPem) clientCert = { cert: certPem, key: keyPem };
  else if (certPem || keyPem) {
    throw new KubeconfigError(`${path}: user "${contextDoc.user}" has a client certificate without its key`);
  }
  let auth: AuthSource = { kind: "none" };
  if (user.token) auth = { kind: "token", token: user.token };
  else if (user.tokenFile) auth = { kind: "tokenFile", path: resolvePath(baseDir, user.tokenFile) };
  else if (user.exec) {
    auth = {
      kind: "exec",
      exec: {
        command: user.exec.command,
        args: user.exec.args ?? [],
        env: Object.fromEntries((user.exec.env ?? []).map((e) => [e.name, e.value])),
        apiVersion: user.exec.apiVersion,
        baseDir,
      },
    };
  }
  let server: URL;
  try {
    server = new URL(cluster.server);
  } catch {
    throw new KubeconfigError(`${path}: cluster "${contextDoc.cluster}" server "${cluster.server}" is not a URL`);
  }
  if (!encryptedOrLoopback(server)) {
    throw new InsecureKubeconfigError(
      `${path}: server ${cluster.server} is not https: the credentials would travel unencrypted; use the API ` +
        "server's https:// URL (plain http only to 127.0.0.1, ::1 or localhost, e.g. kubectl proxy)",
    );
  }
  return { server: cluster.server.replace(/\/+$/, ""), caCerts, clientCert, auth, source: path };
}

/** Reads and parses the kubeconfig file at `path`. */
async function loadKubeconfigFile(path: string): Promise<KubeConnectionConfig> {
  return await parseKubeconfig(readFileFor(path, "kubeconfig", "--kubeconfig"), path);
}

/** Paths of the in-cluster service account. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * The in-cluster configuration: `KUBERNETES_SERVICE_HOST`/`_PORT`, the mounted CA and the service-account token,
 * re-read from its file so bound tokens rotate.
 */
export function inClusterConfig(
  env: Record<string, string | undefined> = {
    KUBERNETES_SERVICE_HOST: Deno.env.get("KUBERNETES_SERVICE_HOST"),
    KUBERNETES_SERVICE_PORT: Deno.env.get("KUBERNETES_SERVICE_PORT"),
  },
  dir = SERVICE_ACCOUNT_DIR,
): KubeConnectionConfig {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new KubeconfigError(
      "not running in a cluster (KUBERNETES_SERVICE_HOST/PORT unset): pass --kubeconfig=<file>",
    );
  }
  const ca = readFileFor(`${dir}/ca.crt`, "service account CA", "in-cluster configuration");
  readFileFor(`${dir}/token`, "service account token", "in-cluster configuration");
  const hostPart = host.includes(":") ? `[${host}]` : host;
  return {
    server: `https://${hostPart}:${port}`,
    caCerts: [ca],
    auth: { kind: "tokenFile", path: `${dir}/token` },
    source: "in-cluster service account",
  };
}

/**
 * Where the API server is for a command line: `--kubeconfig`, else in-cluster; `--master` overrides the server. (The
 * controller and the doctor both call this; it lives here so the doctor loads no controller code.)
 */
export async function kubeConnection(
  config: { kubeconfig?: string; master?: string },
): Promise<KubeConnectionConfig> {
  const connection = config.kubeconfig ? await loadKubeconfigFile(config.kubeconfig) : inClusterConfig();
  return config.master ? { ...connection, server: config.master.replace(/\/+$/, "") } : connection;
}
