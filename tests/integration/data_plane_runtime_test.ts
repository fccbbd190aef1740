// deno-lint-ignore-file no-explicit-any -- state documents are read field by field
/**
 * What `/_simulator/state` shows of members is HAProxy's runtime API: with connections held open and a member down,
 * each member's `health`, `connections_total` and `connections_active` equal what the load balancer's HAProxy answers
 * on its master socket (`show stat` of its current worker) at the same moment.
 */
import assert from "node:assert/strict";
import {
  buildLoadBalancer,
  freePortOn,
  holdConnection,
  memberState,
  startDataPlaneWorld,
  tcpMember,
} from "../support/cloud/data_plane_fixtures.ts";
import { eventually } from "../support/wait/eventually.ts";

/** One command to an HAProxy master CLI; its answer. */
async function masterCommand(socket: string, command: string): Promise<string> {
  const conn = await Deno.connect({ transport: "unix", path: socket });
  await conn.write(new TextEncoder().encode(`${command}\n`));
  await conn.closeWrite();
  return await new Response(conn.readable).text();
}

Deno.test("each member's health and connection counts in the state are HAProxy's show stat at that moment", async () => {
  await using world = await startDataPlaneWorld();
  const hosts = [11, 12, 13].map((n) => `${world.networkPrefix}.0.${n}`);
  const port = freePortOn(hosts[0]);
  await using _a = tcpMember("a", hosts[0], port);
  await using _b = tcpMember("b", hosts[1], port);
  const frontendPort = freePortOn("127.0.0.1");
  const lb = await buildLoadBalancer(world, {
    port: frontendPort,
    backend: { mode: "tcp", balance: "roundrobin", health_check: { type: "tcp", interval_seconds: 1 } },
    members: ["a", "b", "c"].map((name, i) => ({ name, address: hosts[i], port })),
  });
  await eventually(async () => (await memberState(world, lb.id, "c")).health === "down", 5_000, "c (no server) down");
  const held = [];
  for (let i = 0; i < 3; i++) held.push(await holdConnection(lb.ipv4, frontendPort));
  assert.ok(held.every((h) => h.member === "a" || h.member === "b"), "c is down: the connections went to a and b");

  const state = await world.state();
  const doc = state.load_balancers.find((l: any) => l.id === lb.id);
  const socket = doc.haproxy.master_socket as string;
  const worker = /# workers\n(\d+)/.exec(await masterCommand(socket, "show proc"))![1];
  const csv = (await masterCommand(socket, `@!${worker} show stat`)).trim().split("\n");
  const columns = csv[0].slice(2).split(",");
  const rows = csv.slice(1).map((line) => Object.fromEntries(line.split(",").map((v, i) => [columns[i], v])));
  for (const member of doc.backends[0].members) {
    const row = rows.find((r) => r.pxname === `${lb.backendId}.vm0` && r.svname.startsWith(`${member.id}_`))!;
    assert.ok(row, `HAProxy has a server for member ${member.name}`);
    assert.equal(member.health, /^UP/.test(row.status) ? "up" : "down", `${member.name}: status ${row.status}`);
    assert.equal(member.connections_total, Number(row.connect), `${member.name}: connect`);
    assert.equal(member.connections_active, Number(row.scur), `${member.name}: scur`);
  }
  const byName = Object.fromEntries(doc.backends[0].members.map((m: any) => [m.name, m]));
  assert.equal(byName.c.health, "down");
  assert.equal(
    byName.a.connections_active + byName.b.connections_active,
    3,
    "the three held connections, as HAProxy counts them",
  );
  for (const h of held) h.close();
});
