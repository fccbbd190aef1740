/**
 * The certificates of a TLS frontend, from the seed's `certificates` by the frontend's `certificate_ids`: the client's
 * SNI name picks the certificate whose DNS names (subject alternative names, else the common name) match it — exactly
 * or by a one-label wildcard — and the first certificate answers clients without SNI or with a name none matches.
 * {@linkcode certificateFor} is the pure choice; {@linkcode tlsServerOptions} the `node:tls` options from it.
 *
 * @module
 */
import { X509Certificate } from "node:crypto";
import tls from "node:tls";
import type { SeedCertificate } from "../seed.ts";

/** A certificate and the DNS names it answers for. */
export interface NamedCertificate {
  /** The seed certificate's id, as a frontend's `certificate_ids` names it. */
  id: string;
  /** Lower-case DNS names (`*.example.com` for a wildcard). */
  names: string[];
}

/** The DNS names of a PEM certificate (its first block): DNS subject alternative names, else the common name. */
export function certificateNames(pem: string): string[] {
  const certificate = new X509Certificate(pem);
  const alternative = (certificate.subjectAltName ?? "").split(",").map((part) => part.trim())
    .filter((part) => part.startsWith("DNS:")).map((part) => part.slice(4).toLowerCase());
  if (alternative.length) return alternative;
  const common = /(?:^|\n|,\s*)CN=([^,\n]+)/.exec(certificate.subject)?.[1];
  return common ? [common.toLowerCase()] : [];
}

/** True when `name` (an SNI host name) is covered by the DNS name `pattern`. */
export function nameMatches(pattern: string, name: string): boolean {
  const host = name.toLowerCase().replace(/\.$/, "");
  if (pattern === host) return true;
  if (!pattern.startsWith("*.")) return false;
  const dot = host.indexOf(".");
  return dot > 0 && host.slice(dot + 1) === pattern.slice(2);
}

/** The id of the certificate answering SNI name `serverName` (empty for none): a matching one, else the first. */
export function certificateFor(certificates: NamedCertificate[], serverName: string): string {
  if (serverName) {
    const exact = certificates.find((c) => c.names.includes(serverName.toLowerCase()));
    if (exact) return exact.id;
    const wildcard = certificates.find((c) => c.names.some((pattern) => nameMatches(pattern, serverName)));
    if (wildcard) return wildcard.id;
  }
  return certificates[0].id;
}

/**
 * The `node:tls` server options for `certificateIds`, or a message naming the certificate that cannot be used
 * (not seeded, or a PEM `node:tls` refuses).
 */
export function tlsServerOptions(
  certificateIds: string[],
  seeded: ReadonlyMap<string, SeedCertificate> | undefined,
): tls.TlsOptions | string {
  if (certificateIds.length === 0) return "a TLS frontend needs a certificate";
  const contexts = new Map<string, tls.SecureContext>();
  const named: NamedCertificate[] = [];
  for (const id of certificateIds) {
    const certificate = seeded?.get(id);
    if (!certificate) {
      return `certificate ${id} is not in the simulator's seed: add it to "certificates" with its PEM and key`;
    }
    try {
      contexts.set(
        id,
        tls.createSecureContext({ cert: certificate.certificate_pem, key: certificate.private_key_pem }),
      );
      named.push({ id, names: certificateNames(certificate.certificate_pem) });
    } catch (cause) {
      return `certificate ${id} cannot be used: ${(cause as Error).message}`;
    }
  }
  const first = seeded!.get(certificateIds[0])!;
  return {
    cert: first.certificate_pem,
    key: first.private_key_pem,
    SNICallback: (serverName, callback) => callback(null, contexts.get(certificateFor(named, serverName ?? ""))!),
  };
}
