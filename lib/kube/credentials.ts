/**
 * Bearer tokens and client certificates for the Kubernetes API, kept fresh: a token file is re-read every minute
 * (bound service-account tokens rotate), an exec credential plugin runs again when its credential expires (or after
 * a 401), a static token stays.
 *
 * @module
 */
import * as v from "valibot";
import type { AuthSource, ExecConfig } from "./kubeconfig.ts";

/** A credential for one request. */
interface Credential {
  /** Bearer token, if any. */
  token?: string;
  /** PEM client certificate and key from an exec plugin, if any. */
  clientCert?: { cert: string; key: string };
}

const ExecCredentialSchema = v.looseObject({
  status: v.looseObject({
    token: v.optional(v.string()),
    clientCertificateData: v.optional(v.string()),
    clientKeyData: v.optional(v.string()),
    expirationTimestamp: v.optional(v.string()),
  }),
});

/** How long a token read from a file is used before the file is read again: client-go's one minute. */
const FILE_REREAD_MS = 60_000;

/** Supplies credentials from an {@linkcode AuthSource}. */
export class CredentialSource {
  readonly #auth: AuthSource;
  readonly #now: () => number;
  #cached?: Credential;
  #expiresAt = 0;
  #pending?: Promise<Credential>;

  /** Creates the source; `now` is the clock (tests). */
  constructor(auth: AuthSource, now: () => number = Date.now) {
    this.#auth = auth;
    this.#now = now;
  }

  /** The current credential. */
  get(): Promise<Credential> {
    if (this.#cached && this.#now() < this.#expiresAt) return Promise.resolve(this.#cached);
    this.#pending ??= this.#load().finally(() => this.#pending = undefined);
    return this.#pending;
  }

  /** Forgets the cached credential (after a 401), so the next request reads it again. */
  invalidate(): void {
    this.#expiresAt = 0;
  }

  async #load(): Promise<Credential> {
    const auth = this.#auth;
    let credential: Credential;
    let ttl = Infinity;
    switch (auth.kind) {
      case "none":
        credential = {};
        break;
      case "token":
        credential = { token: auth.token };
        break;
      case "tokenFile":
        credential = { token: (await Deno.readTextFile(auth.path)).trim() };
        ttl = FILE_REREAD_MS;
        break;
      case "exec": {
        const result = await runExecPlugin(auth.exec);
        credential = result.credential;
        ttl = result.expiresAt ? Math.max(0, result.expiresAt - this.#now() - 10_000) : Infinity;
        break;
      }
    }
    this.#cached = credential;
    this.#expiresAt = this.#now() + ttl;
    return credential;
  }
}

/** Runs an exec credential plugin as kubectl does (`KUBERNETES_EXEC_INFO`, non-interactive). */
async function runExecPlugin(exec: ExecConfig): Promise<{ credential: Credential; expiresAt?: number }> {
  const command = exec.command.includes("/") && !exec.command.startsWith("/")
    ? `${exec.baseDir}/${exec.command}`
    : exec.command;
  const info = JSON.stringify({
    apiVersion: exec.apiVersion,
    kind: "ExecCredential",
    spec: { interactive: false },
  });
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(command, {
      args: exec.args,
      env: { ...exec.env, KUBERNETES_EXEC_INFO: info },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (cause) {
    if (cause instanceof Deno.errors.NotCapable) {
      throw new Error(
        `exec credential plugin ${exec.command} cannot be started: the controller runs without permission to start ` +
          "processes; use a kubeconfig with a token or client certificate (systemd: write-kubeconfig.sh)",
      );
    }
    throw new Error(`exec credential plugin ${exec.command} could not start: ${(cause as Error).message}`);
  }
  if (!output.success) {
    const stderr = new TextDecoder().decode(output.stderr).trim().split("\n")[0] ?? "";
    throw new Error(`exec credential plugin ${exec.command} exited ${output.code}: ${stderr.slice(0, 200)}`);
  }
  let parsed;
  try {
    parsed = v.parse(ExecCredentialSchema, JSON.parse(new TextDecoder().decode(output.stdout)));
  } catch {
    throw new Error(`exec credential plugin ${exec.command} did not print an ExecCredential`);
  }
  const status = parsed.status;
  const credential: Credential = { token: status.token };
  if (status.clientCertificateData && status.clientKeyData) {
    credential.clientCert = { cert: status.clientCertificateData, key: status.clientKeyData };
  }
  if (!credential.token && !credential.clientCert) {
    throw new Error(`exec credential plugin ${exec.command} returned neither a token nor a client certificate`);
  }
  const expiresAt = status.expirationTimestamp ? Date.parse(status.expirationTimestamp) : undefined;
  return { credential, expiresAt: Number.isNaN(expiresAt) ? undefined : expiresAt };
}
