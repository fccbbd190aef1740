/**
 * Which certificate authorities a client trusts (TLS is always verified). The Ankra Cloud client trusts the
 * operating system's trust store plus `ANKRA_CLOUD_CA_BUNDLE`. A Kubernetes client trusts the cluster's own
 * certificate authority when the kubeconfig (or the in-cluster ca.crt) gives one, as client-go does, and the system
 * store only when none is given.
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
