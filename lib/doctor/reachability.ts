/**
 * Whether an HTTPS endpoint answers at all, with its certificate verified: one unauthenticated GET whose answer
 * (any HTTP status) proves the name resolves, the port is open and TLS is trusted; without an answer, the error's
 * whole cause chain is kept and classified, so a certificate problem is told apart from DNS, a refused connection
 * or a timeout. (The API clients keep only the outer "fetch failed"; this keeps the inner reason.)
 *
 * No credential is sent, so nothing can be refused or counted against a rate limit.
 *
 * @module
 */
import { causeChain } from "../error_text.ts";
import { redact } from "../log.ts";
import { systemCaCertificates } from "../tls.ts";
import { USER_AGENT } from "../version.ts";

/** Why an endpoint did not answer. */
export type UnreachableKind = "tls" | "dns" | "refused" | "timeout" | "network";

/** The outcome of one reachability request. */
export type Reachability =
  | { ok: true; url: string; status: number; body: string }
  | { ok: false; url: string; kind: UnreachableKind; message: string };

/** Classifies a failed request by its cause chain's text. */
export function classifyUnreachable(text: string, timedOut: boolean): UnreachableKind {
  if (timedOut) return "timeout";
  if (/dns error|failed to lookup|name or service not known|no such host|nodename nor servname/i.test(text)) {
    return "dns";
  }
  if (/certificate|UnknownIssuer|NotValidForName|\btls\b|\bssl\b|handshake|BadSignature/i.test(text)) return "tls";
  if (/connection refused|ECONNREFUSED|os error 111/i.test(text)) return "refused";
  return "network";
}

/** Options of {@linkcode checkReachable}. */
export interface ReachabilityOptions {
  /** Extra PEM certificate authorities, trusted besides the system roots. */
  caCerts?: string[];
  /** Client certificate and key, for API servers that want one at the handshake. */
  clientCert?: { cert: string; key: string };
  /** Timeout, milliseconds (default 15 s). */
  timeoutMs?: number;
}

/** Sends one unauthenticated `GET url` and reports whether (and how) it was answered. */
export async function checkReachable(url: string, options: ReachabilityOptions = {}): Promise<Reachability> {
  let client: Deno.HttpClient;
  try {
    client = Deno.createHttpClient({
      caCerts: [...systemCaCertificates(), ...(options.caCerts ?? [])],
      ...(options.clientCert ? { cert: options.clientCert.cert, key: options.clientCert.key } : {}),
    });
  } catch (cause) {
    return { ok: false, url, kind: "tls", message: `the certificates cannot be used: ${redact(causeChain(cause))}` };
  }
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 15_000);
  try {
    const response = await fetch(url, {
      headers: { accept: "application/json", "user-agent": USER_AGENT },
      client,
      signal: timeout,
    });
    const body = await response.text();
    return { ok: true, url, status: response.status, body: body.slice(0, 2_000) };
  } catch (cause) {
    const text = redact(causeChain(cause));
    return { ok: false, url, kind: classifyUnreachable(text, timeout.aborted), message: text };
  } finally {
    client.close();
  }
}
