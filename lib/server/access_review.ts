/**
 * One delegated check of a bearer token, as kube components make it: a TokenReview says who holds the token, then a
 * SubjectAccessReview says whether that user may `get` the non-resource path. Both requests go through the limiter
 * the caller gives (never the controllers' own), and the answers are validated before they are believed.
 *
 * @module
 */
import * as v from "valibot";
import type { KubeClient } from "../kube/client.ts";
import type { RequestLimiter } from "../kube/transport.ts";

/** The verdict for one request. */
export type AuthorizationVerdict = { allowed: true; user: string } | {
  allowed: false;
  /** 401: no valid token; 403: valid, but not allowed; 429: too many checks at once; 503: the check failed. */
  status: 401 | 403 | 429 | 503;
  reason: string;
};

const TokenReviewSchema = v.object({
  status: v.optional(v.object({
    authenticated: v.optional(v.boolean()),
    user: v.optional(v.object({
      username: v.optional(v.string()),
      uid: v.optional(v.string()),
      groups: v.optional(v.array(v.string())),
      extra: v.optional(v.record(v.string(), v.array(v.string()))),
    })),
  })),
});

const SubjectAccessReviewSchema = v.object({
  status: v.optional(v.object({ allowed: v.optional(v.boolean()) })),
});

/** How one check reaches the API server. */
export interface AccessReviewOptions {
  /** The rate limiter both requests wait for. */
  limiter: RequestLimiter;
  /** Ends the check (waiting included) when it aborts. */
  signal: AbortSignal;
}

/**
 * Checks whether the holder of `token` may `get` `path`: allowed, 401 (the token is not valid) or 403 (valid, but
 * not allowed).
 *
 * @throws {KubeApiError} or the signal's reason when the check itself fails (the verdict is then unknown).
 */
export async function reviewAccess(
  client: KubeClient,
  request: { token: string; path: string },
  options: AccessReviewOptions,
): Promise<AuthorizationVerdict> {
  const { token, path } = request;
  const review = v.parse(
    TokenReviewSchema,
    await client.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } },
      signal: options.signal,
      limiter: options.limiter,
    }),
  );
  const user = review.status?.user;
  if (!review.status?.authenticated || !user?.username) {
    return { allowed: false, status: 401, reason: "the token is not valid" };
  }
  const access = v.parse(
    SubjectAccessReviewSchema,
    await client.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
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
      signal: options.signal,
      limiter: options.limiter,
    }),
  );
  if (!access.status?.allowed) {
    return { allowed: false, status: 403, reason: `${user.username} may not get ${path}` };
  }
  return { allowed: true, user: user.username };
}
