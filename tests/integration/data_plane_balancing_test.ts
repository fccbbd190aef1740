/**
 * HAProxy, as the loopback data plane runs it, balances real connections over a load balancer's members as the backend asks: weights and
 * `enabled` over many connections, `leastconn` with a connection held, `source` stickiness; and with no member that
 * may take a connection, the connection is closed at once.
 */
import assert from "node:assert/strict";
import {
  buildLoadBalancer,
  firstLine,
  freePortOn,
  holdConnection,
  memberState,
  startDataPlaneWorld,
  tcpMember,
  waitApplied,
} from "../support/cloud/data_plane_fixtures.ts";
import { eventually } from "../support/wait/eventually.ts";

function tally(names: (string | undefined)[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of names) counts[name ?? "nothing"] = (counts[name ?? "nothing"] ?? 0) + 1;
  return counts;
}

Deno.test("roundrobin follows the weights over 120 connections and a disabled or weight-0 member gets none", async () => {
  await using world = await startDataPlaneWorld();
  const hosts = [11, 12, 13, 14].map((n) => `${world.networkPrefix}.0.${n}`);
  const port = freePortOn(hosts[0]);
  await using a = tcpMember("a", hosts[0], port);
  await using _b = tcpMember("b", hosts[1], port);
  await using c = tcpMember("c", hosts[2], port);
  await using d = tcpMember("d", hosts[3], port);
  const lb = await buildLoadBalancer(world, {
    port: freePortOn("127.0.0.1"),
    // No health checks here: a check is a connection too, and this test counts the forwarded ones.
    backend: { mode: "tcp", balance: "roundrobin", health_check: { type: "none" } },
    members: [
      { name: "a", address: hosts[0], port, weight: 200 },
      { name: "b", address: hosts[1], port, weight: 100 },
      { name: "c", address: hosts[2], port, enabled: false },
      { name: "d", address: hosts[3], port, weight: 0 },
    ],
  });
  const frontendPort = (await world.call("GET", `/v1/load-balancers/${lb.id}`)).body.load_balancer.frontends[0].port;
  const answers: (string | undefined)[] = [];
  for (let i = 0; i < 120; i++) answers.push(await firstLine(lb.ipv4, frontendPort));
  assert.deepEqual(tally(answers), { a: 80, b: 40 }, "weights 200:100; c is disabled and d has weight 0");
  assert.equal(c.accepted + d.accepted, 0, "the disabled and the weight-0 member saw no connection");
  assert.ok(a.peers.every((peer) => peer.startsWith(`${world.networkPrefix}.`)), "connections leave from the network");

  // Disabling a and giving d a weight is one change each; new connections follow once HAProxy has reloaded.
  const members = (await world.call("GET", `/v1/load-balancers/${lb.id}`)).body.load_balancer.backends[0].members;
  const byName = Object.fromEntries(members.map((m: { name: string; id: string }) => [m.name, m.id]));
  await world.call("PATCH", `/v1/load-balancers/${lb.id}/backends/${lb.backendId}/members/${byName.a}`, {
    enabled: false,
  });
  await world.call("PATCH", `/v1/load-balancers/${lb.id}/backends/${lb.backendId}/members/${byName.d}`, {
    weight: 100,
  });
  await waitApplied(world, lb.id);
  const after: (string | undefined)[] = [];
  for (let i = 0; i < 100; i++) after.push(await firstLine(lb.ipv4, frontendPort));
  assert.deepEqual(tally(after), { b: 50, d: 50 }, "a disabled, d at weight 100 beside b");
});

Deno.test("leastconn sends new connections past a member holding one open", async () => {
  await using world = await startDataPlaneWorld();
  const hosts = [11, 12].map((n) => `${world.networkPrefix}.0.${n}`);
  const port = freePortOn(hosts[0]);
  await using _a = tcpMember("a", hosts[0], port);
  await using _b = tcpMember("b", hosts[1], port);
  const frontendPort = freePortOn("127.0.0.1");
  const lb = await buildLoadBalancer(world, {
    port: frontendPort,
    backend: { mode: "tcp", balance: "leastconn" },
    members: [{ name: "a", address: hosts[0], port }, { name: "b", address: hosts[1], port }],
  });
  const held = await holdConnection(lb.ipv4, frontendPort);
  assert.equal(await held.echo("still there?"), "still there?");
  const others: string[] = [];
  for (let i = 0; i < 10; i++) {
    const name = (await firstLine(lb.ipv4, frontendPort))!;
    others.push(name);
    // The next connection comes once this one is closed at the load balancer too (no lingering count).
    await eventually(async () => (await memberState(world, lb.id, name)).connections_active === 0);
  }
  const other = held.member === "a" ? "b" : "a";
  assert.deepEqual(
    tally(others),
    { [other]: 10 },
    `while ${held.member} holds a connection, ${other} gets every new one`,
  );
  held.close();
});

Deno.test("source sends one client address to one member while it is up, and another address may land elsewhere", async () => {
  await using world = await startDataPlaneWorld();
  const hosts = [11, 12, 13].map((n) => `${world.networkPrefix}.0.${n}`);
  const port = freePortOn(hosts[0]);
  await using _a = tcpMember("a", hosts[0], port);
  await using _b = tcpMember("b", hosts[1], port);
  await using _c = tcpMember("c", hosts[2], port);
  const frontendPort = freePortOn("127.0.0.1");
  const lb = await buildLoadBalancer(world, {
    port: frontendPort,
    backend: { mode: "tcp", balance: "source" },
    members: hosts.map((address, i) => ({ name: "abc"[i], address, port })),
  });
  const chosen = new Map<string, string>();
  for (let client = 1; client <= 24; client++) {
    const from = `127.0.${client}.9`;
    const answers: string[] = [];
    for (let i = 0; i < 5; i++) answers.push((await firstLine(lb.ipv4, frontendPort, from))!);
    assert.equal(new Set(answers).size, 1, `client ${from}: one member, got ${JSON.stringify(tally(answers))}`);
    chosen.set(from, answers[0]);
  }
  assert.ok(new Set(chosen.values()).size > 1, "24 client addresses do not all land on one member");
});

Deno.test("with no member that may take it, a tcp connection is closed without a byte", async () => {
  await using world = await startDataPlaneWorld();
  const host = `${world.networkPrefix}.0.11`;
  const port = freePortOn(host);
  await using member = tcpMember("a", host, port);
  const frontendPort = freePortOn("127.0.0.1");
  const lb = await buildLoadBalancer(world, {
    port: frontendPort,
    backend: { mode: "tcp" },
    members: [{ name: "a", address: host, port, enabled: false }],
  });
  assert.equal(await firstLine(lb.ipv4, frontendPort), undefined);
  assert.equal(member.accepted, 0);
});
