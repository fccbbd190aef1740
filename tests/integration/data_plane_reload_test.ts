/**
 * What a reload does to open connections: the replaced HAProxy worker keeps carrying them (the default); with the
 * seed's `reload_hard_stop_after_ms` (HAProxy's `hard-stop-after`), it is ended that long after the reload, and with
 * it every connection it carried — to a removed member and to a kept one alike — while connections the new process
 * took go on.
 */
import assert from "node:assert/strict";
import {
  buildLoadBalancer,
  freePortOn,
  type HeldConnection,
  holdConnection,
  startDataPlaneWorld,
  tcpMember,
  waitApplied,
} from "../support/cloud/data_plane_fixtures.ts";
import { eventually } from "../support/wait/eventually.ts";

async function world(hardStopMs?: number) {
  const w = await startDataPlaneWorld(
    hardStopMs === undefined ? {} : { settings: { reload_hard_stop_after_ms: hardStopMs } },
  );
  const hosts = [11, 12].map((n) => `${w.networkPrefix}.0.${n}`);
  const port = freePortOn(hosts[0]);
  const members = [tcpMember("a", hosts[0], port), tcpMember("b", hosts[1], port)];
  const frontendPort = freePortOn("127.0.0.1");
  const lb = await buildLoadBalancer(w, {
    port: frontendPort,
    backend: { mode: "tcp", balance: "roundrobin", health_check: { type: "none" } },
    members: [{ name: "a", address: hosts[0], port }, { name: "b", address: hosts[1], port }],
  });
  const setMembers = (list: Record<string, unknown>[]) =>
    w.call("PUT", `/v1/load-balancers/${lb.id}/backends/${lb.backendId}/members`, { members: list });
  const held = async (name: string) => {
    for (let i = 0; i < 10; i++) {
      const connection = await holdConnection(lb.ipv4, frontendPort);
      if (connection.member === name) return connection;
      connection.close();
    }
    throw new Error(`no connection reached ${name}`);
  };
  return {
    w,
    hosts,
    applied: () => waitApplied(w, lb.id),
    port,
    setMembers,
    held,
    async [Symbol.asyncDispose]() {
      for (const m of members) m.close();
      await w[Symbol.asyncDispose]();
    },
  };
}

Deno.test("without a hard stop, a removed member's open connection goes on after the reload", async () => {
  await using env = await world();
  const onB = await env.held("b");
  await env.setMembers([{ name: "a", address: env.hosts[0], port: env.port }]);
  await env.applied();
  await new Promise((resolve) => setTimeout(resolve, 300)); // a negative check: nothing ends it within 300 ms
  assert.equal(await onB.echo("still there?"), "still there?", "the replaced HAProxy worker still carries it");
  onB.close();
});

Deno.test("with reload_hard_stop_after_ms, every connection of the replaced process ends then, a kept member's too", async () => {
  await using env = await world(300);
  const onA = await env.held("a");
  const onB = await env.held("b");
  const changed = performance.now();
  await env.setMembers([{ name: "a", address: env.hosts[0], port: env.port }]);
  await env.applied();
  const fresh = await env.held("a");
  const ended = async (held: HeldConnection) => {
    await eventually(() => held.echo("x").then(() => false, () => true), { timeoutMs: 3_000, what: "ended" });
    return performance.now() - changed;
  };
  const [aEnded, bEnded] = [await ended(onA), await ended(onB)];
  console.log(
    `hard stop 300 ms: the removed member's connection ended after ${bEnded.toFixed(0)} ms, the kept ` +
      `member's after ${aEnded.toFixed(0)} ms`,
  );
  assert.ok(bEnded >= 250 && aEnded >= 250, "not before the hard stop");
  assert.equal(await fresh.echo("new process"), "new process", "a connection the new process took goes on");
  for (const held of [onA, onB, fresh]) held.close();
});
