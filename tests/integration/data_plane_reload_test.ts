/**
 * What becomes of a connection to a member that leaves its backend: HAProxy's reload keeps it (the default); with the
 * seed's `reload_hard_stop_after_ms`, it ends that long after the change that removed the member; a member kept with
 * weight 0 keeps its connections either way (what `--member-drain-period` relies on).
 */
import assert from "node:assert/strict";
import {
  buildLoadBalancer,
  freePortOn,
  holdConnection,
  startDataPlaneWorld,
  tcpMember,
} from "../support/data_plane_fixtures.ts";
import { eventually } from "../support/eventually.ts";

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
    port,
    setMembers,
    held,
    async [Symbol.asyncDispose]() {
      for (const m of members) m.close();
      await w[Symbol.asyncDispose]();
    },
  };
}

Deno.test("without a hard stop, a removed member's open connection goes on", async () => {
  await using env = await world();
  const onB = await env.held("b");
  await env.setMembers([{ name: "a", address: env.hosts[0], port: env.port }]);
  await new Promise((resolve) => setTimeout(resolve, 300)); // a negative check: nothing ends it within 300 ms
  assert.equal(await onB.echo("still there?"), "still there?");
  onB.close();
});

Deno.test("with reload_hard_stop_after_ms, a removed member's connection ends then; a weight-0 member's goes on", async () => {
  await using env = await world(200);
  const onA = await env.held("a");
  const onB = await env.held("b");
  await env.setMembers([
    { name: "a", address: env.hosts[0], port: env.port, weight: 0 },
  ]);
  const cut = await eventually(() => onB.echo("x").then(() => false, () => true), {
    timeoutMs: 3_000,
    what: "b's connection ended",
  });
  assert.ok(cut);
  assert.equal(await onA.echo("draining"), "draining", "weight 0: no new connections, the open one goes on");
  onA.close();
});
