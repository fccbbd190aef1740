/**
 * Which certificate authorities a client trusts (TLS is always verified), and which URLs may go without TLS.
 *
 * - The Ankra Cloud client trusts the operating system's trust store plus `ANKRA_CLOUD_CA_BUNDLE`.
 * - A Kubernetes client trusts the cluster's own certificate authority alone when the kubeconfig (or the in-cluster
 *   ca.crt) gives one, as client-go does, and the operating system's store only when none is given.
 *
 * Deno adds a client's `caCerts` to a process-wide default store (Mozilla's roots unless `DENO_TLS_CA_STORE` says
 * otherwise), so "alone" needs that store to be empty: {@linkcode restrictDefaultTrustStore} empties it before the
 * first client is made, and every client names all it trusts. Plain `http://` is accepted only to a loopback address
 * ({@linkcode encryptedOrLoopback}): the simulator in tests, `kubectl proxy`.
 *
 * @module
 */

import { ConfigError } from "./config_error.ts";

/** The trust store files tried in turn (Debian/Ubuntu/Alpine, Fedora/RHEL, macOS/BSD). */
export const SYSTEM_CA_FILES: readonly string[] = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/cert.pem",
];

/** The variable naming Deno's default trust stores (`mozilla`, `system`); empty means none. */
export const TRUST_STORE_VARIABLE = "DENO_TLS_CA_STORE";

/** PEM certificates of the operating system's trust store, when one is found. */
export function systemCaCertificates(): string[] {
  for (const file of SYSTEM_CA_FILES) {
    try {
      return [Deno.readTextFileSync(file)];
    } catch { /* try the next */ }
  }
  return [];
}

/**
 * The certificate authorities a Kubernetes client trusts: `clusterCaCerts` alone when there are any (the cluster's
 * CA, as client-go trusts it), else the operating system's store (`systemCerts`, read only then).
 */
export function kubeTrustedCertificates(
  clusterCaCerts: readonly string[],
  systemCerts: () => string[] = systemCaCertificates,
): string[] {
  return clusterCaCerts.length > 0 ? [...clusterCaCerts] : systemCerts();
}

let restricted = false;

/**
 * Empties the process's default trust store (sets {@linkcode TRUST_STORE_VARIABLE} to nothing), so a client trusts
 * exactly the `caCerts` it is made with. Deno reads the variable when the first HTTP client of the process is made:
 * the controller and the doctor call this first thing (`main.ts`); repeated calls do nothing. Child processes (exec
 * credential plugins) inherit the empty value.
 *
 * @throws {ConfigError} when the runtime may not set the variable (the launcher, the image and `deno task run` allow
 * it).
 */
export function restrictDefaultTrustStore(): void {
  if (restricted) return;
  try {
    Deno.env.set(TRUST_STORE_VARIABLE, "");
  } catch (cause) {
    if (!(cause instanceof Deno.errors.NotCapable || cause instanceof Deno.errors.PermissionDenied)) throw cause;
    throw new ConfigError(
      `the runtime may not set ${TRUST_STORE_VARIABLE}, so a client could trust more than the certificates it is ` +
        `given: add ${TRUST_STORE_VARIABLE} to --allow-env (the release launcher, the image and deno task run do)`,
    );
  }
  restricted = true;
}

/** True for `localhost` and literal loopback addresses (127.0.0.0/8, ::1), the hosts plain http may reach. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (host === "localhost" || host === "::1" || host === "0:0:0:0:0:0:0:1") return true;
  return /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(host) &&
    host.split(".").every((part) => Number(part) <= 255);
}

/** True when `url` may carry a token: https, or plain http to a loopback host (nothing leaves the machine in clear). */
export function encryptedOrLoopback(url: URL): boolean {
  return url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname));
}
