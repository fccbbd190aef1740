/**
 * Authorizes requests to `/metrics` the way kube components delegate it: the caller's bearer token is checked with a
 * TokenReview, then the user is checked with a SubjectAccessReview for `get` on the non-resource path. Answers are
 * cached for 10 seconds by a hash of the token (the token itself is never stored).
 *
 * @module
 */
import * as log from "../log.ts";
import type { KubeClient } from "../kube/client.ts";

/** The verdict for one request. */
export type AuthorizationVerdict = { allowed: true; user: string } | {
  allowed: false;
  status: 401 | 403;
  reason: string;
};

const CACHE_MS = 10_000;

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Checks bearer tokens against the API server. */
export class DelegatedAuthorizer {
  readonly #client: KubeClient;
  readonly #cache = new Map<string, { verdict: AuthorizationVerdict; until: number }>();

  /** Creates the authorizer. */
  constructor(client: KubeClient) {
    this.#client = client;
  }

  /** Decides whether the holder of the `authorization` header may `get` `path`. */
  async authorize(authorization: string | undefined, path: string): Promise<AuthorizationVerdict> {
    const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
    if (!token) return { allowed: false, status: 401, reason: "a bearer token is required" };
    const key = `${await sha256(token)} ${path}`;
    const cached = this.#cache.get(key);
    if (cached && cached.until > Date.now()) return cached.verdict;
    const verdict = await this.#review(token, path);
    this.#cache.set(key, { verdict, until: Date.now() + CACHE_MS });
    if (this.#cache.size > 1000) {
      for (const [k, v] of this.#cache) if (v.until <= Date.now()) this.#cache.delete(k);
    }
    return verdict;
  }

  async #review(token: string, path: string): Promise<AuthorizationVerdict> {
    try {
      const review = await this.#client.request<{
        status?: {
          authenticated?: boolean;
          user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
        };
      }>("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
        body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } },
        timeoutMs: 10_000,
      });
      const user = review.status?.user;
      if (!review.status?.authenticated || !user?.username) {
        return { allowed: false, status: 401, reason: "the token is not valid" };
      }
      const access = await this.#client.request<{ status?: { allowed?: boolean } }>(
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {
          body: {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SubjectAccessReview",
            spec: {
              user: user.username,
              uid: user.uid,
              groups: user.groups,
              extra: user.extra,
              nonResourceAttributes: { path, verb: "get" },
            },
          },
          timeoutMs: 10_000,
        },
      );
      if (!access.status?.allowed) {
        return { allowed: false, status: 403, reason: `${user.username} may not get ${path}` };
      }
      return { allowed: true, user: user.username };
    } catch (cause) {
      log.warn("could not check a /metrics caller with the API server", { error: cause });
      return { allowed: false, status: 401, reason: "the token could not be checked" };
    }
  }
}
