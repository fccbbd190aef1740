/**
 * Whoever reaches the health port cannot take leadership away: 10,000 `/metrics` requests, 200 at once, each with a new
 * random bearer token, against the controller process leading on the real kube-apiserver with short Lease periods and a
 * small `--kube-api-qps` budget (tests/support/metrics/metrics_flood.ts: the TokenReviews are counted by the API server
 * itself, the Lease is read from it throughout). The timings in detail: bench/metrics_flood_bench.ts.
 */
import assert from "node:assert/strict";
import { REVIEW_DEFAULTS } from "../../lib/server/delegated_authorizer.ts";
import { floodSummary, quantile, runMetricsFlood } from "../support/metrics/metrics_flood.ts";

Deno.test("10,000 /metrics requests with new random tokens, 200 at once, cost no leadership and few TokenReviews", async () => {
  const result = await runMetricsFlood({ requests: 10_000, concurrency: 200 });
  const summary = floodSummary(result);
  console.log(summary);
  assert.equal(result.leaseProblem, undefined, summary);
  assert.ok(!result.log.some((l) => /lost leadership|renewing failed/.test(l)), "the leader kept its Lease");
  assert.ok(result.renewals >= Math.floor(result.seconds / 2), `the Lease was renewed throughout: ${summary}`);
  // Every caller is answered: 401 for the tokens checked, 429 at once for the rest; none waits for a check.
  assert.equal(result.answers.length, 10_000, summary);
  assert.deepEqual(result.answers.filter((a) => a.status !== 401 && a.status !== 429), [], summary);
  const throttled = result.answers.filter((a) => a.status === 429 && !a.first).map((a) => a.ms).sort((a, b) => a - b);
  assert.ok(throttled.length > 5_000, `most of the flood is refused at once: ${summary}`);
  assert.ok(quantile(throttled, 0.5) < 100, `429 answered within 100 ms: ${summary}`);
  assert.ok(quantile(throttled, 1) < 2_000, `no 429 waited for a check: ${summary}`);
  const limit = REVIEW_DEFAULTS.burst + REVIEW_DEFAULTS.requestsPerSecond * (result.seconds + 2);
  assert.ok(result.tokenReviews > 0 && result.tokenReviews <= limit, `TokenReviews within ${limit}: ${summary}`);
  assert.ok(result.scraperServedAfter, "the scraper let in before the flood is still served right after it");
});
