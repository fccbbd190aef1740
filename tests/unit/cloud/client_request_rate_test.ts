/**
 * The Ankra Cloud client against the simulator's rate limit: bursts the API's window allows, the optional upper bound,
 * and one budget shared by several clients.
 */
import assert from "node:assert/strict";
import { startTestCloud, testSeed } from "../../support/cloud/simulator.ts";

Deno.test("following the API's limit, a burst the window allows goes out at once and meets no 429", async () => {
  await using cloud = await startTestCloud(testSeed({ settings: { rate_limit_per_minute: 200 } }));
  await cloud.client.listZones(); // learns the limit
  const started = performance.now();
  await Promise.all(Array.from({ length: 170 }, () => cloud.client.listZones()));
  const elapsedSeconds = (performance.now() - started) / 1000;
  assert.ok(elapsedSeconds < 5, `170 calls of a 200/min window took ${elapsedSeconds.toFixed(2)} s: nothing paced`);
  assert.ok(cloud.simulator.sim.log.every((e) => e.status === 200), "no 429");
  assert.equal(cloud.client.budget.apiLimit, 200);
  assert.equal(cloud.client.budget.apiRemaining, 29);
});

Deno.test("the optional upper bound holds a burst of 500 calls to its rate, and the API never answers 429", async () => {
  const ratePerSecond = 200;
  await using cloud = await startTestCloud(testSeed({ settings: { rate_limit_per_minute: 100_000 } }), {
    maxRequestsPerMinute: ratePerSecond * 60,
    burst: 10,
  });
  const burst = 10;
  const started = performance.now();
  await Promise.all(Array.from({ length: 500 }, () => cloud.client.listZones()));
  const elapsedSeconds = (performance.now() - started) / 1000;
  const minimum = (500 - burst) / ratePerSecond;
  assert.ok(elapsedSeconds >= minimum * 0.97, `500 calls took ${elapsedSeconds.toFixed(2)} s, at least ${minimum} s`);
  const times = cloud.simulator.sim.log.filter((e) => e.operation === "list_zones").map((e) => e.atMs);
  assert.equal(times.length, 500);
  assert.ok(cloud.simulator.sim.log.every((e) => e.status === 200));
  let busiest = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i] - times[j] >= 1000) j++;
    busiest = Math.max(busiest, i - j + 1);
  }
  // Arrival times at the server bunch up a little behind the client's grants (connection scheduling): allow 10%.
  assert.ok(busiest <= ratePerSecond * 1.1 + burst, `busiest second held ${busiest} requests`);
});

Deno.test("clients share one budget: two clients together stay within the upper bound", async () => {
  await using cloud = await startTestCloud(testSeed(), { maxRequestsPerMinute: 100 * 60, burst: 5 });
  const second = cloud.clientWith({ budget: cloud.client.budget });
  const started = performance.now();
  await Promise.all([
    ...Array.from({ length: 50 }, () => cloud.client.listZones()),
    ...Array.from({ length: 50 }, () => second.listZones()),
  ]);
  const elapsed = (performance.now() - started) / 1000;
  assert.ok(elapsed >= (100 - 5) / 100 * 0.97, `100 shared calls took ${elapsed.toFixed(2)} s`);
});
