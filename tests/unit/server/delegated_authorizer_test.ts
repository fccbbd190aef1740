/**
 * The `/metrics` gate: how many checks a flood of callers can cause, what they are answered, and how long a verdict
 * is used. The reviews here are a function that counts them and answers when the test says (the API server's side
 * is exercised in tests/integration/metrics_auth_test.ts).
 */
import assert from "node:assert/strict";
import {
  type AuthorizationVerdict,
  DelegatedAuthorizer,
  REVIEW_DEFAULTS,
  type Reviewer,
} from "../../../lib/server/delegated_authorizer.ts";
import { healthApp } from "../../../lib/server/health_server.ts";
import { MetricsRegistry } from "../../../lib/runtime/metrics.ts";

/** A reviewer whose checks wait until the test answers them; `asked` lists the tokens in the order checked. */
function heldReviewer() {
  const asked: string[] = [];
  const waiting: { token: string; answer: (verdict: AuthorizationVerdict | Error) => void }[] = [];
  const review: Reviewer = (request) => {
    asked.push(request.token);
    return new Promise((resolve, reject) => {
      waiting.push({
        token: request.token,
        answer: (verdict) => verdict instanceof Error ? reject(verdict) : resolve(verdict),
      });
    });
  };
  const answerAll = (verdict: (token: string) => AuthorizationVerdict | Error) => {
    for (const held of waiting.splice(0)) held.answer(verdict(held.token));
  };
  return { review, asked, waiting, answerAll };
}

const ALLOW = (token: string): AuthorizationVerdict => ({ allowed: true, user: `user-of-${token}` });
const bearer = (token: string) => `Bearer ${token}`;

/** Resolves once the microtasks queued so far (hashing the token included) have run. */
async function settled(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

Deno.test("concurrent callers with one token share one review, and all get its verdict", async () => {
  const reviewer = heldReviewer();
  const gate = new DelegatedAuthorizer(reviewer.review);
  const verdicts = Array.from({ length: 50 }, () => gate.authorize(bearer("prometheus"), "/metrics"));
  await settled();
  assert.equal(reviewer.asked.length, 1);
  reviewer.answerAll(ALLOW);
  for (const verdict of await Promise.all(verdicts)) assert.deepEqual(verdict, ALLOW("prometheus"));
});

Deno.test("beyond the checks in flight a new token is answered 429 at once, without a review", async () => {
  const reviewer = heldReviewer();
  const gate = new DelegatedAuthorizer(reviewer.review);
  const room = REVIEW_DEFAULTS.maxInFlight - REVIEW_DEFAULTS.reservedForKnown;
  const held = Array.from({ length: room }, (_, i) => gate.authorize(bearer(`new-${i}`), "/metrics"));
  await settled();
  assert.equal(gate.inFlight, room);
  const started = performance.now();
  const excess = await Promise.all(
    Array.from({ length: 500 }, (_, i) => gate.authorize(bearer(`flood-${i}`), "/metrics")),
  );
  const ms = performance.now() - started;
  for (const verdict of excess) assert.equal(!verdict.allowed && verdict.status, 429);
  assert.equal(reviewer.asked.length, room, "the refused callers caused no review");
  assert.ok(ms < 1000, `500 refusals took ${ms.toFixed(0)} ms`);
  reviewer.answerAll(() => ({ allowed: false, status: 401, reason: "the token is not valid" }));
  await Promise.all(held);
  assert.equal(gate.inFlight, 0);
});

Deno.test("a token allowed before is checked again in a kept slot while a flood of new tokens is refused", async () => {
  let now = 0;
  const reviewer = heldReviewer();
  const gate = new DelegatedAuthorizer(reviewer.review, { now: () => now });
  const first = gate.authorize(bearer("prometheus"), "/metrics");
  await settled();
  reviewer.answerAll(ALLOW);
  assert.equal((await first).allowed, true);
  now += REVIEW_DEFAULTS.allowTtlMs + 1; // the verdict has expired: the scraper needs a new check
  const flood = Array.from({ length: 100 }, (_, i) => gate.authorize(bearer(`flood-${i}`), "/metrics"));
  await settled();
  const renewal = gate.authorize(bearer("prometheus"), "/metrics");
  await settled();
  assert.ok(reviewer.asked.includes("prometheus") && reviewer.asked.lastIndexOf("prometheus") > 0);
  reviewer.answerAll((token) => token === "prometheus" ? ALLOW(token) : new Error("unreachable"));
  assert.equal((await renewal).allowed, true);
  const refused = (await Promise.all(flood)).filter((v) => !v.allowed && v.status === 429).length;
  assert.equal(refused, 100 - (REVIEW_DEFAULTS.maxInFlight - REVIEW_DEFAULTS.reservedForKnown));
});

Deno.test("verdicts, allowed or refused, are used for 10 s; the cache holds at most its entries", async () => {
  let now = 0;
  let reviews = 0;
  const gate = new DelegatedAuthorizer((request) => {
    reviews++;
    return Promise.resolve(
      request.token.startsWith("good")
        ? ALLOW(request.token)
        : { allowed: false, status: 401, reason: "the token is not valid" },
    );
  }, { now: () => now, maxEntries: 3 });
  assert.equal((await gate.authorize(bearer("good-1"), "/metrics")).allowed, true);
  assert.equal((await gate.authorize(bearer("bad-1"), "/metrics")).allowed, false);
  assert.equal(reviews, 2);
  now += 9_999;
  await gate.authorize(bearer("good-1"), "/metrics");
  await gate.authorize(bearer("bad-1"), "/metrics");
  assert.equal(reviews, 2, "within 10 s both verdicts come from the cache");
  now += 2;
  await gate.authorize(bearer("good-1"), "/metrics");
  await gate.authorize(bearer("bad-1"), "/metrics");
  assert.equal(reviews, 4, "after 10 s both are checked again");
  for (const token of ["good-2", "good-3", "good-4"]) await gate.authorize(bearer(token), "/metrics");
  assert.equal(reviews, 7);
  await gate.authorize(bearer("good-1"), "/metrics");
  assert.equal(reviews, 8, "the least recently used verdict was pushed out of the full cache");
});

Deno.test("a check that fails is answered 503 and not cached; a request without a bearer token is 401", async () => {
  let fail = true;
  const gate = new DelegatedAuthorizer((request) =>
    fail ? Promise.reject(new Error("down")) : Promise.resolve(
      ALLOW(request.token),
    )
  );
  const failed = await gate.authorize(bearer("prometheus"), "/metrics");
  assert.equal(!failed.allowed && failed.status, 503);
  fail = false;
  assert.equal((await gate.authorize(bearer("prometheus"), "/metrics")).allowed, true);
  const anonymous = await gate.authorize(undefined, "/metrics");
  assert.equal(!anonymous.allowed && anonymous.status, 401);
  const huge = await gate.authorize(bearer("x".repeat(20_000)), "/metrics");
  assert.equal(!huge.allowed && huge.status, 401);
});

Deno.test("/metrics answers 429 with Retry-After while the checks are full, and counts each verdict", async () => {
  const reviewer = heldReviewer();
  const metrics = new MetricsRegistry();
  const gate = new DelegatedAuthorizer(reviewer.review, { metrics, maxInFlight: 1, reservedForKnown: 0 });
  const app = healthApp({ metrics, readiness: () => ({ ready: true, checks: [] }), authorizer: gate });
  const get = (token: string) =>
    app.fetch(new Request("https://ccm.test/metrics", { headers: { authorization: bearer(token) } }));
  const first = get("one");
  await settled();
  const second = await get("two");
  assert.equal(second.status, 429);
  assert.equal(second.headers.get("retry-after"), "1");
  assert.match(await second.text(), /^Too Many Requests: too many \/metrics callers/);
  reviewer.answerAll(ALLOW);
  const allowed = await first;
  assert.equal(allowed.status, 200);
  assert.match(
    await allowed.text(),
    /^metrics_authorization_total\{result="throttled",cached="false"\} 1$/m,
  );
});
