/**
 * Authorizes requests to `/metrics` the way kube components delegate it (a TokenReview, then a SubjectAccessReview
 * for `get` on the path: `access_review.ts`), built so that callers who reach the port cannot cost the controller
 * its Kubernetes API budget, its Lease or its memory:
 *
 * - **its own limiter**: reviews go through a token bucket of their own ({@linkcode REVIEW_DEFAULTS}: 5 API requests
 *   a second, burst 10), never the controllers' `--kube-api-qps` bucket, which the Lease renewals also skip;
 * - **a cap on checks in flight** (8): a caller beyond it is answered 429 at once, without waiting and without a
 *   request; 2 of the 8 are kept for tokens that were allowed before (Prometheus renewing its cached verdict), so
 *   a flood of new tokens cannot lock out the scraper that was already let in;
 * - **one check per token**: concurrent callers with the same token share one review;
 * - **a bounded cache** (4,096 entries, least recently used first) of verdicts by the token's SHA-256 (the token
 *   itself is never kept), fresh for 10 s whether allowed or refused — k8s.io/apiserver's delegating defaults
 *   (`CacheTTL`, `AllowCacheTTL` and `DenyCacheTTL` all 10 s; 10 s review timeout). A check that fails (the API
 *   server unreachable) is answered 503 and not cached.
 *
 * @module
 */
import * as log from "../log.ts";
import { DEFAULTS } from "../defaults.ts";
import type { KubeClient } from "../kube/client.ts";
import type { MetricsRegistry } from "../runtime/metrics.ts";
import { TokenBucket } from "../runtime/token_bucket.ts";
import { type AccessReviewOptions, type AuthorizationVerdict, reviewAccess } from "./access_review.ts";
import { VerdictCache } from "./verdict_cache.ts";

export type { AuthorizationVerdict };

/** Checks one token for one path (the API server's reviews; tests give their own). */
export type Reviewer = (
  request: { token: string; path: string },
  options: AccessReviewOptions,
) => Promise<AuthorizationVerdict>;

/** The {@linkcode Reviewer} that asks the API server through `client`. */
export function kubeReviewer(client: KubeClient): Reviewer {
  return (request, options) => reviewAccess(client, request, options);
}

/** Limits of {@linkcode DelegatedAuthorizer}. */
interface ReviewLimits {
  /** API requests per second for reviews (a TokenReview and a SubjectAccessReview count one each). */
  requestsPerSecond: number;
  /** Burst of {@linkcode ReviewLimits.requestsPerSecond}. */
  burst: number;
  /** Checks in flight at most; callers beyond are answered 429 at once. */
  maxInFlight: number;
  /** Of {@linkcode ReviewLimits.maxInFlight}, the checks kept for tokens that were allowed before. */
  reservedForKnown: number;
  /** Verdicts cached at most. */
  maxEntries: number;
  /** How long an allowed verdict is used, milliseconds. */
  allowTtlMs: number;
  /** How long a refused verdict is used, milliseconds. */
  denyTtlMs: number;
  /** How long one check (waiting for the limiter included) may take, milliseconds. */
  timeoutMs: number;
}

/** The defaults: 5 requests/s, burst 10, 8 in flight (2 kept), 4,096 verdicts for 10 s, 10 s per check. */
export const REVIEW_DEFAULTS: ReviewLimits = {
  requestsPerSecond: 5,
  burst: 10,
  maxInFlight: 8,
  reservedForKnown: 2,
  maxEntries: 4096,
  allowTtlMs: 10_000,
  denyTtlMs: 10_000,
  timeoutMs: 10_000,
};

/** Options of {@linkcode DelegatedAuthorizer}. */
interface DelegatedAuthorizerOptions extends Partial<ReviewLimits> {
  /** Counts verdicts by result. */
  metrics?: MetricsRegistry;
  /** Clock of the cache, milliseconds (tests). */
  now?: () => number;
}

/** Tokens longer than this are refused without a review (service account tokens are about 1 KiB). */
const MAX_TOKEN_CHARS = 16 * 1024;

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Checks bearer tokens against the API server, within {@linkcode ReviewLimits}. */
export class DelegatedAuthorizer {
  readonly #review: Reviewer;
  readonly #limits: ReviewLimits;
  readonly #limiter: TokenBucket;
  readonly #cache: VerdictCache<AuthorizationVerdict>;
  readonly #pending = new Map<string, Promise<AuthorizationVerdict>>();
  readonly #results?: ReturnType<MetricsRegistry["counter"]>;
  #lastFailureLog = -Infinity;

  /** Creates the authorizer over `review` (usually {@linkcode kubeReviewer}). */
  constructor(review: Reviewer, options: DelegatedAuthorizerOptions = {}) {
    this.#review = review;
    const { metrics, now, ...limits } = options;
    this.#limits = { ...REVIEW_DEFAULTS, ...limits };
    this.#limiter = new TokenBucket({
      requestsPerMinute: this.#limits.requestsPerSecond * 60,
      burst: this.#limits.burst,
    });
    this.#cache = new VerdictCache({ maxEntries: this.#limits.maxEntries, now });
    this.#results = metrics?.counter(
      "metrics_authorization_total",
      "Requests to /metrics by verdict (allowed, unauthorized, forbidden, throttled: answered 429 because too many " +
        "checks were in flight; failed: the check could not be made) and whether it came from the cache.",
    );
  }

  /** Checks in flight now. */
  get inFlight(): number {
    return this.#pending.size;
  }

  /** Decides whether the holder of the `authorization` header may `get` `path`. */
  async authorize(authorization: string | undefined, path: string): Promise<AuthorizationVerdict> {
    const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
    if (!token) return this.#count({ allowed: false, status: 401, reason: "a bearer token is required" }, false);
    if (token.length > MAX_TOKEN_CHARS) {
      return this.#count({ allowed: false, status: 401, reason: "the token is not valid" }, false);
    }
    const key = `${await sha256(token)} ${path}`;
    const cached = this.#cache.get(key);
    if (cached?.fresh) return this.#count(cached.value, true);
    const pending = this.#pending.get(key);
    if (pending) return this.#count(await pending, false);
    const knownBefore = cached?.value.allowed === true;
    const room = knownBefore ? this.#limits.maxInFlight : this.#limits.maxInFlight - this.#limits.reservedForKnown;
    if (this.#pending.size >= room) {
      return this.#count({
        allowed: false,
        status: 429,
        reason: "too many /metrics callers are being checked at once; try again in a second",
      }, false);
    }
    const check = this.#check(token, path, key).finally(() => this.#pending.delete(key));
    this.#pending.set(key, check);
    return this.#count(await check, false);
  }

  async #check(token: string, path: string, key: string): Promise<AuthorizationVerdict> {
    let verdict: AuthorizationVerdict;
    try {
      verdict = await this.#review({ token, path }, {
        limiter: this.#limiter,
        signal: AbortSignal.timeout(this.#limits.timeoutMs),
      });
    } catch (cause) {
      const now = performance.now();
      if (now - this.#lastFailureLog >= DEFAULTS.authorizationFailureLogMs) {
        this.#lastFailureLog = now;
        log.warn("could not check a /metrics caller with the API server", { error: cause });
      }
      return { allowed: false, status: 503, reason: "the token could not be checked with the API server; try again" };
    }
    this.#cache.set(key, verdict, verdict.allowed ? this.#limits.allowTtlMs : this.#limits.denyTtlMs);
    return verdict;
  }

  #count(verdict: AuthorizationVerdict, cached: boolean): AuthorizationVerdict {
    const result = verdict.allowed
      ? "allowed"
      : ({ 401: "unauthorized", 403: "forbidden", 429: "throttled", 503: "failed" } as const)[verdict.status];
    this.#results?.inc({ result, cached: String(cached) });
    return verdict;
  }
}
