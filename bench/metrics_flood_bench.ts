/**
 * `/metrics` flood benchmark: how fast the controller refuses callers it cannot check, and what they cost it. Runs
 * tests/support/metrics/metrics_flood.ts (the controller from `main.ts` with the launcher's permissions, leading on the
 * test control plane) `BENCH_ROUNDS` times (default 3) with `BENCH_REQUESTS` (10,000) requests, `BENCH_CONCURRENCY`
 * (200) at once, each with a new random token, and prints per round: answers by status, TokenReviews (counted by the
 * API server) and per second, the 429s' times on an open connection (p50, p95, p99, max), the first request of each
 * connection (its TLS handshake included), and the Lease's renewals and longest gap.
 *
 *     source scripts/env.sh && deno run -A scripts/with_control_plane.ts -- deno run -A bench/metrics_flood_bench.ts
 *
 * The target is a 429 within 100 ms. With 200 requests in flight on one machine the time measured is mostly the
 * queue (200 ÷ the answers per second, Little's law), shared by the flood's own process, the controller and the API
 * server; the controller answers a 429 without I/O.
 *
 * @module
 */
import { floodSummary, quantile, runMetricsFlood } from "../tests/support/metrics/metrics_flood.ts";

const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 3);
const requests = Number(Deno.env.get("BENCH_REQUESTS") ?? 10_000);
const concurrency = Number(Deno.env.get("BENCH_CONCURRENCY") ?? 200);

console.log(`${rounds} rounds of ${requests} /metrics requests, ${concurrency} at once, each with a new random token`);
for (let round = 1; round <= rounds; round++) {
  const result = await runMetricsFlood({ requests, concurrency });
  const firsts = result.answers.filter((a) => a.first).map((a) => a.ms).sort((a, b) => a - b);
  console.log(`round ${round}: ${floodSummary(result)}`);
  console.log(
    `  ${(result.answers.length / result.seconds).toFixed(0)} answers/s; ${
      (result.tokenReviews / result.seconds).toFixed(1)
    } TokenReviews/s; first request of a connection p50 ${quantile(firsts, 0.5).toFixed(0)} ms, max ${
      quantile(firsts, 1).toFixed(0)
    } ms; scraper served after the flood: ${result.scraperServedAfter}`,
  );
}
