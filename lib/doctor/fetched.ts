/**
 * The outcome of one of the doctor's requests, as plain data the checks read: a read's value or why there is none
 * ({@linkcode Fetched}, {@linkcode ReadFailure}), and whether an endpoint answered at all ({@linkcode Reachability}).
 * Every request is made in `gather_facts.ts`; the checks only look at these.
 *
 * @module
 */

/** A failed read, as the checks see it. */
export interface ReadFailure {
  /** The error kind of the client (`unauthorized`, `forbidden`, `not_found`, `network`, …). */
  kind: string;
  /** HTTP status, when an answer arrived. */
  status?: number;
  /** The problem document's `reason` (Ankra Cloud) or the Status `reason` (Kubernetes). */
  reason?: string;
  /** One line naming the operation and what happened (never the token). */
  message: string;
}

/** The answer of one read: its value, or why there is none. */
export type Fetched<T> = { ok: true; value: T } | { ok: false; failure: ReadFailure };

/** A successful read. */
export function fetched<T>(value: T): Fetched<T> {
  return { ok: true, value };
}

/** A failed read. */
export function failedRead<T = never>(failure: ReadFailure): Fetched<T> {
  return { ok: false, failure };
}

/** Why an endpoint did not answer. */
export type UnreachableKind = "tls" | "dns" | "refused" | "timeout" | "network";

/** The outcome of one reachability request. */
export type Reachability =
  | { ok: true; url: string; status: number; body: string }
  | { ok: false; url: string; kind: UnreachableKind; message: string };
