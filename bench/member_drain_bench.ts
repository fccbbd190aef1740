/**
 * Member drain benchmark: what a node's removal from a Service's load balancer costs the traffic through it, with
 * `--member-drain-period` and without (`0`: removed at once):
 *
 *     source scripts/env.sh && deno task bench:drain
 *
 * The service controller in-process against the test control plane, the simulator with its loopback data plane
 * (HAProxy, every change a reload) and `reload_hard_stop_after_ms` (default 1 s, `BENCH_HARD_STOP_MS`): the process a
 * reload replaces, and every connection it still carries, ends that long after the reload (HAProxy's
 * `hard-stop-after`; without it the simulator keeps them until they close; what Ankra's VMs do is not documented). Two Nodes, each an echo server on the Service's node port. Per setting: a
 * long-lived connection through node B, new connections every 50 ms (20/s) for the whole run, node B excluded from
 * load balancers (`node.kubernetes.io/exclude-from-external-load-balancers`), then `BENCH_SECONDS` (default 8) of
 * echoes over the long-lived connection every 200 ms. Reported: new connections that failed, whether the long-lived one
 * lived through the drain and how long it lasted after the exclusion, and when node B got its last new connection.
 * Writes bench/member_drain_report.md (`BENCH_REPORT` for another path).
 *
 * @module
 */
import { testControlPlane, uniqueName } from "../tests/support/control_plane/control_plane.ts";
import { eventually } from "../tests/support/wait/eventually.ts";
import { kubeOk } from "../tests/support/http/kube_http.ts";
import { startServiceController } from "../tests/support/controller/service_controller.ts";
import {
  createService,
  deleteNodes,
  deleteService,
  getService,
  ingressIps,
} from "../tests/support/controller/service_fixtures.ts";
import { createServedNode, testSeed } from "../tests/support/cloud/simulator.ts";
import { firstLine, holdConnection, tcpMember } from "../tests/support/cloud/data_plane_fixtures.ts";

const HARD_STOP_MS = Number(Deno.env.get("BENCH_HARD_STOP_MS") ?? 1_000);
const SECONDS = Number(Deno.env.get("BENCH_SECONDS") ?? 8);
const DRAIN_MS = Number(Deno.env.get("BENCH_DRAIN_MS") ?? 5_000);
const REPORT = Deno.env.get("BENCH_REPORT") ?? new URL("./member_drain_report.md", import.meta.url).pathname;

/** What one run measured. */
interface DrainRun {
  drainMs: number;
  attempts: number;
  failed: number;
  longLived: "survived" | "ended";
  longLivedMs: number;
  lastNewOnBMs: number;
}

async function run(drainMs: number): Promise<DrainRun> {
  const octet = 20 + (crypto.getRandomValues(new Uint8Array(1))[0] % 200);
  const seed = testSeed({
    settings: {
      data_plane: "loopback",
      loopback_ipv4_range: `127.${octet}.113.0/24`,
      reload_hard_stop_after_ms: HARD_STOP_MS,
    },
    networks: [{
      id: "net-1",
      name: "bench",
      zone: "de-fsn1",
      cidr: `127.${octet}.0.0/16`,
      ula_prefix: "fd64:1:0:1::/64",
    }],
  });
  await using env = await startServiceController({ seed, memberDrainMs: drainMs });
  const plane = testControlPlane();
  const nodes = [uniqueName("drain-a"), uniqueName("drain-b")];
  const addresses = [`127.${octet}.0.11`, `127.${octet}.0.12`];
  for (const [i, name] of nodes.entries()) {
    await createServedNode(plane, env.cloud.simulator.sim.world, { name, address: addresses[i] });
  }
  const name = uniqueName("drain");
  const port = 20_000 + (crypto.getRandomValues(new Uint16Array(1))[0] % 9_000);
  await createService(name, { ports: [{ port }], annotations: { "load-balancer.ankra.cloud/ipv4": "true" } });
  const nodePort = (await getService(name)).spec!.ports![0].nodePort!;
  const echo = nodes.map((node, i) => tcpMember(node, addresses[i], nodePort));
  try {
    const ipv4 = await eventually(
      async () => ingressIps(await getService(name)).find((ip) => ip.startsWith(`127.${octet}.113.`)),
      { timeoutMs: 20_000, what: "the address" },
    );
    await eventually(async () => (await firstLine(ipv4, port)) !== undefined, { what: "served" });
    let long = await holdConnection(ipv4, port);
    for (let i = 0; long.member !== nodes[1] && i < 20; i++) {
      long.close();
      long = await holdConnection(ipv4, port);
    }
    let attempts = 0;
    let failed = 0;
    let lastOnB = 0;
    let stop = false;
    const excludedAt = { value: 0 };
    const clients = (async () => {
      while (!stop) {
        attempts++;
        const who = await firstLine(ipv4, port);
        if (who === undefined) failed++;
        else if (who === nodes[1] && excludedAt.value) lastOnB = performance.now() - excludedAt.value;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    excludedAt.value = performance.now();
    await kubeOk(plane, "PATCH", `/api/v1/nodes/${nodes[1]}`, {
      body: { metadata: { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "true" } } },
    });
    let longLived: DrainRun["longLived"] = "survived";
    let longLivedMs = SECONDS * 1_000;
    while (performance.now() - excludedAt.value < SECONDS * 1_000) {
      if (longLived === "survived") {
        try {
          await long.echo("ping");
        } catch {
          longLived = "ended";
          longLivedMs = performance.now() - excludedAt.value;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    stop = true;
    await clients;
    long.close();
    return { drainMs, attempts, failed, longLived, longLivedMs, lastNewOnBMs: lastOnB };
  } finally {
    for (const member of echo) member.close();
    await deleteService(name);
    await deleteNodes(nodes);
  }
}

if (import.meta.main) {
  const runs = [await run(0), await run(DRAIN_MS)];
  const lines = [
    "# Member drain: a node's removal with and without --member-drain-period",
    "",
    `Measured ${new Date().toISOString().slice(0, 10)} on ${navigator.hardwareConcurrency} cores with ` +
    "`deno task bench:drain` (bench/member_drain_bench.ts): the simulator's loopback data plane is HAProxy, every " +
    `change a reload with hard-stop-after ${HARD_STOP_MS} ms (reload_hard_stop_after_ms); new connections every ` +
    `50 ms through the whole run; node B excluded 1 s in; the long-lived connection through B echoed every 200 ms for ` +
    `${SECONDS} s after.`,
    "",
    "| --member-drain-period | new connections | failed | long-lived connection through B | last new connection to B |",
    "| --- | --- | --- | --- | --- |",
    ...runs.map((r) =>
      `| ${r.drainMs / 1000} s | ${r.attempts} | ${r.failed} | ${r.longLived} (${
        (r.longLivedMs / 1000).toFixed(1)
      } s after the exclusion) | ${(r.lastNewOnBMs / 1000).toFixed(2)} s after the exclusion |`
    ),
    "",
    "Without a drain, the member leaves at once: its open connection ends with the reload's hard stop. With one, it",
    "stays at weight 0 (no new connections) and leaves at the end of the period — but setting weight 0 is itself a",
    "reload, and HAProxy's hard stop ends every connection the replaced process carries, whatever its member's weight:",
    "the long-lived connection ends as early as without a drain. (The TypeScript data plane this replaced ended only a",
    "removed member's connections, so there the drain kept it: 2026-12-02, drain 5 s, it ended 6.5 s after the",
    "exclusion against 1.4 s without.) A drain keeps an open connection only where hard-stop-after is longer than the",
    "drain, or absent.",
    "",
  ];
  await Deno.writeTextFile(REPORT, lines.join("\n"));
  console.log(lines.join("\n"));
}
