/**
 * `Retry-After` as both API clients follow it (the Ankra Cloud transport, `lib/cloud/transport.ts`, and the
 * Kubernetes client, `lib/kube/errors.ts`): seconds or an HTTP date (RFC 9110 §10.2.3), in milliseconds, and never
 * longer than {@linkcode MAX_RETRY_AFTER_MS}. A leaf: it imports nothing.
 *
 * @module
 */

/**
 * The longest wait a `Retry-After` is followed for: 5 minutes. An API asking for longer (a bug, or `99999999`) is
 * asked again after 5 minutes instead of freezing every call for years; the Ankra request budget holds callers no
 * longer either (`lib/cloud/request_budget.ts`).
 */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

/**
 * Parses a `Retry-After` value (seconds, or an HTTP date counted from `nowMs`) into milliseconds, at most
 * {@linkcode MAX_RETRY_AFTER_MS}; undefined when there is none or it is neither (a date in the past is 0).
 */
export function parseRetryAfter(value: string | null, nowMs = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(MAX_RETRY_AFTER_MS, Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.min(MAX_RETRY_AFTER_MS, Math.max(0, date - nowMs));
}
