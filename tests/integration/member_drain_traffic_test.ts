// deno-lint-ignore-file no-explicit-any -- state documents are read field by field
/**
 * Drain proven by traffic (the real kube-apiserver, the service controller in-process with `--member-drain-period`,
 * the simulator's loopback data plane: HAProxy with `hard-stop-after 300ms`, every change a reload): when node B is
 * excluded, every new connection goes to node A, none failing, B is held at weight 0 and leaves at the end of the
 * period — but a long-lived connection through B ends with the hard stop of the process the weight-0 reload replaced,
 * long before the period ends: HAProxy ends every connection an old process carries, whatever its member's weight.
 * Without a drain (`0`), B leaves at once and its connection ends within the hard stop too. What it costs in requests is
 * measured by `deno task bench:drain` (bench/member_drain_report.md).
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { eventually } from "../support/wait/eventually.ts";
import { kubeOk } from "../support/http/kube_http.ts";
import { startServiceController } from "../support/controller/service_controller.ts";
import { createServedNode, testSeed } from "../support/cloud/simulator.ts";
import {
  createService,
  deleteNodes,
  deleteService,
  getService,
  ingressIps,
} from "../support/controller/service_fixtures.ts";
import { firstLine, type HeldConnection, holdConnection, tcpMember } from "../support/cloud/data_plane_fixtures.ts";

const HARD_STOP_MS = 300;

async function drainWorld(drainMs: number) {
  const octet = 20 + (crypto.getRandomValues(new Uint8Array(1))[0] % 200);
  const seed = testSeed({
    settings: {
      data_plane: "loopback",
      loopback_ipv4_range: `127.${octet}.113.0/24`,
      reload_hard_stop_after_ms: HARD_STOP_MS,
    },
    networks: [{
      id: "net-1",
      name: "private",
      zone: "de-fsn1",
      cidr: `127.${octet}.0.0/16`,
      ula_prefix: "fd64:1:0:1::/64",
    }],
  });
  const env = await startServiceController({ seed, memberDrainMs: drainMs });
  const nodes = [uniqueName("dr-a"), uniqueName("dr-b")];
  const addresses = [`127.${octet}.0.51`, `127.${octet}.0.52`];
  for (const [i, name] of nodes.entries()) {
    await createServedNode(testControlPlane(), env.cloud.simulator.sim.world, { name, address: addresses[i] });
  }
  const name = uniqueName("drain");
  const port = 20_000 + (crypto.getRandomValues(new Uint16Array(1))[0] % 9_000);
  await createService(name, { ports: [{ port }], annotations: { "load-balancer.ankra.cloud/ipv4": "true" } });
  const nodePort = (await getService(name)).spec!.ports![0].nodePort!;
  const echo = nodes.map((node, i) => tcpMember(node, addresses[i], nodePort));
  const address = await eventually(
    async () => ingressIps(await getService(name)).find((ip) => ip.startsWith(`127.${octet}.113.`)),
    { timeoutMs: 20_000, what: "the address" },
  );
  await eventually(async () => (await firstLine(address, port)) !== undefined, { what: "served" });
  /** A connection held open through node B. */
  const throughB = async (): Promise<HeldConnection> => {
    for (let i = 0; i < 30; i++) {
      const held = await holdConnection(address, port);
      if (held.member === nodes[1]) return held;
      held.close();
    }
    throw new Error("no connection reached node B");
  };
  const weightOfB = async () => {
    const state = await (await fetch(`${env.cloud.simulator.url}/_simulator/state`)).json();
    const members = state.load_balancers.flatMap((lb: any) => lb.backends.flatMap((b: any) => b.members));
    return members.find((m: any) => m.address === addresses[1])?.weight as number | undefined;
  };
  const exclude = () =>
    kubeOk(testControlPlane(), "PATCH", `/api/v1/nodes/${nodes[1]}`, {
      body: { metadata: { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "true" } } },
    });
  return {
    address,
    port,
    nodes,
    throughB,
    weightOfB,
    exclude,
    async [Symbol.asyncDispose]() {
      for (const member of echo) member.close();
      await deleteService(name);
      await deleteNodes(nodes);
      await env[Symbol.asyncDispose]();
    },
  };
}

/** True once `held` no longer answers an echo. */
const ended = (held: HeldConnection) => held.echo("ping").then(() => false, () => true);

Deno.test("with a drain, new connections go elsewhere and B leaves at the end; its open connection ends at the hard stop", async () => {
  await using world = await drainWorld(2_000);
  const held = await world.throughB();
  const excludedAt = performance.now();
  await world.exclude();
  await eventually(async () => (await world.weightOfB()) === 0, { what: "node B at weight 0" });
  const answers: (string | undefined)[] = [];
  for (let i = 0; i < 10; i++) answers.push(await firstLine(world.address, world.port));
  assert.deepEqual(answers, Array(10).fill(world.nodes[0]), "every new connection to node A, none failed");
  await eventually(() => ended(held), { timeoutMs: 3_000, what: "the connection through B ended" });
  const endedMs = performance.now() - excludedAt;
  console.log(
    `the connection through B ended ${endedMs.toFixed(0)} ms after the exclusion (drain 2 s, hard stop 300 ms)`,
  );
  assert.ok(endedMs < 1_500, "ended by the hard stop after the weight-0 reload, not kept for the drain");
  await eventually(async () => (await world.weightOfB()) === undefined, { timeoutMs: 6_000, what: "B gone" });
  assert.ok(performance.now() - excludedAt >= 1_900, "B left only at the end of the period");
  held.close();
});

Deno.test("without a drain, an excluded node leaves at once and its open connection ends within the hard stop", async () => {
  await using world = await drainWorld(0);
  const held = await world.throughB();
  const excludedAt = performance.now();
  await world.exclude();
  await eventually(() => ended(held), { timeoutMs: 5_000, what: "the connection through B ended" });
  const after = performance.now() - excludedAt;
  assert.ok(after < 2_000, `it ended ${after.toFixed(0)} ms after the exclusion, not at the end of a drain`);
  assert.equal(await world.weightOfB(), undefined, "B is no member at all");
  held.close();
});
