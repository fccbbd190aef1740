/**
 * HAProxy's health checks, as the loopback data plane runs them for the API's settings, against members on real sockets: a member that
 * stops answering leaves after `fall` failed checks and returns after `rise` passed ones, new connections going
 * around it meanwhile; an `http` check against a member answering the wrong status takes it out; a new member
 * starts up.
 */
import assert from "node:assert/strict";
import {
  buildLoadBalancer,
  type DataPlaneWorld,
  firstLine,
  freePortOn,
  httpMember,
  memberState,
  startDataPlaneWorld,
  tcpMember,
} from "../support/cloud/data_plane_fixtures.ts";
import { eventually } from "../support/wait/eventually.ts";

/** Every check of member `name` the state shows from now on (`[result, health after it]`), until `until` holds. */
async function checksUntil(
  world: DataPlaneWorld,
  where: { lbId: string; name: string },
  until: (checks: [string, string][]) => boolean,
  timeoutMs: number,
): Promise<[string, string][]> {
  const checks: [string, string][] = [];
  let last = (await memberState(world, where.lbId, where.name)).last_check?.at;
  await eventually(
    async () => {
      const member = await memberState(world, where.lbId, where.name);
      if (member.last_check && member.last_check.at !== last) {
        last = member.last_check.at;
        checks.push([member.last_check.result, member.health]);
      }
      return until(checks);
    },
    timeoutMs,
    `checks of ${where.name} reaching the expected sequence (so far ${JSON.stringify(checks)})`,
  );
  return checks;
}

Deno.test("a member that stops answering leaves after fall failed checks and returns after rise passed ones", async () => {
  await using world = await startDataPlaneWorld();
  const hosts = [11, 12].map((n) => `${world.networkPrefix}.0.${n}`);
  const port = freePortOn(hosts[0]);
  let a = tcpMember("a", hosts[0], port);
  await using _b = tcpMember("b", hosts[1], port);
  const frontendPort = freePortOn("127.0.0.1");
  const lb = await buildLoadBalancer(world, {
    port: frontendPort,
    backend: { mode: "tcp", health_check: { type: "tcp", interval_seconds: 1, fall: 3, rise: 2 } },
    members: [{ name: "a", address: hosts[0], port }, { name: "b", address: hosts[1], port }],
  });
  const fresh = await memberState(world, lb.id, "a");
  assert.equal(fresh.health, "up", "a new member starts up");
  await eventually(async () => (await memberState(world, lb.id, "a")).last_check?.result === "passed", 5_000);

  a.close();
  const falling = await checksUntil(
    world,
    { lbId: lb.id, name: "a" },
    (checks) => checks.at(-1)?.[1] === "down",
    8_000,
  );
  assert.deepEqual(
    falling.filter(([result]) => result === "failed"),
    [["failed", "up"], ["failed", "up"], ["failed", "down"]],
    "up through two failed checks, down at the third (fall 3)",
  );
  const meanwhile: (string | undefined)[] = [];
  for (let i = 0; i < 6; i++) meanwhile.push(await firstLine(lb.ipv4, frontendPort));
  assert.deepEqual(meanwhile, Array(6).fill("b"), "new connections go to the member that is up");
  const down = await memberState(world, lb.id, "a");
  assert.equal(down.last_check.result, "failed");
  assert.match(down.last_check.detail, /^L4CON Layer4 connection problem, Connection refused$/);

  a = tcpMember("a", hosts[0], port);
  try {
    const rising = await checksUntil(world, { lbId: lb.id, name: "a" }, (checks) => checks.at(-1)?.[1] === "up", 8_000);
    assert.deepEqual(rising.slice(-2), [["passed", "down"], ["passed", "up"]], "down after one pass, up at the second");
    const back = new Set<string | undefined>();
    for (let i = 0; i < 6; i++) back.add(await firstLine(lb.ipv4, frontendPort));
    assert.deepEqual([...back].sort(), ["a", "b"], "a takes connections again");
  } finally {
    a.close();
  }
});

Deno.test("an http check takes out a member answering the wrong status, and the backend's requests go around it", async () => {
  await using world = await startDataPlaneWorld();
  const hosts = [11, 12].map((n) => `${world.networkPrefix}.0.${n}`);
  const port = freePortOn(hosts[0]);
  await using sick = httpMember("sick", { address: hosts[0], port }, () => new Response("not ready", { status: 503 }));
  await using well = httpMember("well", { address: hosts[1], port });
  const frontendPort = freePortOn("127.0.0.1");
  const lb = await buildLoadBalancer(world, {
    port: frontendPort,
    backend: {
      mode: "http",
      health_check: {
        type: "http",
        path: "/healthz",
        expected_status: "200-299",
        interval_seconds: 1,
        fall: 2,
        rise: 2,
      },
    },
    members: [{ name: "sick", address: hosts[0], port }, { name: "well", address: hosts[1], port }],
  });
  await eventually(async () => (await memberState(world, lb.id, "sick")).health === "down", 5_000, "sick down");
  const sickState = await memberState(world, lb.id, "sick");
  assert.match(sickState.last_check.detail, /^L7STS Layer7 wrong status, code 503\b/, "HAProxy's words");
  // HAProxy spreads the servers' first checks over the interval: the second one's may come later.
  await eventually(async () => (await memberState(world, lb.id, "well")).last_check !== null, 3_000, "well checked");
  const wellState = await memberState(world, lb.id, "well");
  assert.equal(wellState.health, "up");
  assert.match(wellState.last_check.detail, /^L7OK Layer7 check passed, code 200\b/);
  assert.ok(sick.requests.every((r) => r.path === "/healthz"), "the sick member saw only checks");
  assert.ok(well.requests.some((r) => r.path === "/healthz"), "the check asks for its path");
  for (let i = 0; i < 5; i++) {
    const response = await fetch(`http://${lb.ipv4}:${frontendPort}/page-${i}`);
    assert.equal((await response.json()).member, "well");
  }
  assert.ok(!sick.requests.some((r) => r.path.startsWith("/page-")), "no request reached the member that is down");
});
