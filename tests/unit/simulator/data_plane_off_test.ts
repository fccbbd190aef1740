/**
 * The data plane is opt-in: without `--data-plane` (or `settings.data_plane`) a running load balancer with a frontend
 * opens no socket — the state says `{mode: "off"}` and nothing listens on the frontend's port — while the API itself
 * behaves the same (the configuration counts as applied at once).
 */
import assert from "node:assert/strict";
import { startTestCloud, testSeed } from "../../support/cloud/simulator.ts";
import { eventually } from "../../support/wait/eventually.ts";

/** The TCP ports listened on in this network namespace (/proc/self/net/tcp and tcp6, state 0A = LISTEN). */
async function listeningPorts(): Promise<Set<number>> {
  const ports = new Set<number>();
  for (const file of ["/proc/self/net/tcp", "/proc/self/net/tcp6"]) {
    const text = await Deno.readTextFile(file).catch(() => "");
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === "0A") ports.add(parseInt(fields[1].split(":").pop()!, 16));
    }
  }
  return ports;
}

Deno.test("without a data plane, a running load balancer's frontend opens no socket and the state says off", async () => {
  await using cloud = await startTestCloud(testSeed({ settings: { load_balancer_create_delay_ms: 50 } }));
  const { loadBalancer } = await cloud.client.createLoadBalancer({
    zone: "de-fsn1",
    name: "quiet",
    network_id: "net-1",
    public_ipv4: true,
  });
  const backend = await cloud.client.createBackend(loadBalancer.id, { name: "tcp-80", mode: "tcp" });
  await cloud.client.createFrontend(loadBalancer.id, { name: "tcp-80", port: 18_080, backend_id: backend.id });
  const running = await eventually(async () => {
    const lb = await cloud.client.getLoadBalancer(loadBalancer.id);
    return lb.state === "running" ? lb : undefined;
  }, { what: "running" });
  assert.equal(running.is_configuration_applied, true, "applied at once: nothing to wait for");
  const state = await (await fetch(`${cloud.simulator.url}/_simulator/state`)).json();
  assert.deepEqual(state.data_plane, { mode: "off" });
  assert.ok(!(await listeningPorts()).has(18_080), "nothing listens on the frontend's port");
});
