/**
 * The operating system's trust store, shared by the Kubernetes and the Ankra Cloud clients (TLS is always verified;
 * extra certificate authorities are added to these, never substituted for them).
 *
 * @module
 */

/** The trust store files tried in turn (Debian/Ubuntu/Alpine, Fedora/RHEL, macOS/BSD). */
export const SYSTEM_CA_FILES: readonly string[] = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/cert.pem",
];

/** PEM certificates of the operating system's trust store, when one is found. */
export function systemCaCertificates(): string[] {
  for (const file of SYSTEM_CA_FILES) {
    try {
      return [Deno.readTextFileSync(file)];
    } catch { /* try the next */ }
  }
  return [];
}
