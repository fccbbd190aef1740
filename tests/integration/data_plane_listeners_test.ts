// deno-lint-ignore-file no-explicit-any -- state documents are read field by field
/**
 * The loopback data plane's listeners follow the API through HAProxy reloads: a frontend deleted while a connection
 * is open (it survives, new ones are refused); a load balancer deleted (its HAProxy stopped, nothing left bound, its
 * connections end with it); a port already taken (shown in the state with the error, logged once, the
 * configuration not applied until it binds); IPv6 addresses shown as not served; a member outside loopback never
 * contacted; a combined edge's members served once its sync finishes.
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

async function refused(address: string, port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname: address, port });
    conn.close();
    return false;
  } catch (cause) {
    return cause instanceof Deno.errors.ConnectionRefused;
  }
}

Deno.test("a frontend deleted while a connection is open: the connection goes on, new ones are refused", async () => {
  await using world = await startDataPlaneWorld();
  const host = `${world.networkPrefix}.0.11`;
  const port = freePortOn(host);
  await using _member = tcpMember("a", host, port);
  const frontendPort = freePortOn("127.0.0.1");
  const lb = await buildLoadBalancer(world, {
    port: frontendPort,
    backend: { mode: "tcp" },
    members: [{ name: "a", address: host, port }],
  });
  const held = await holdConnection(lb.ipv4, frontendPort);
  assert.equal(held.member, "a");
  await world.call("DELETE", `/v1/load-balancers/${lb.id}/frontends/${lb.frontendId}`);
  const after = await waitApplied(world, lb.id);
  assert.deepEqual(after.frontends, []);
  assert.ok(await refused(lb.ipv4, frontendPort), "a new connection to the deleted frontend is refused");
  assert.equal(await held.echo("after the reload"), "after the reload", "the open connection still carries bytes");
  held.close();
});

Deno.test("a load balancer deleted: its HAProxy ends, nothing stays bound and its connections end", async () => {
  await using world = await startDataPlaneWorld();
  const host = `${world.networkPrefix}.0.11`;
  const port = freePortOn(host);
  await using _member = tcpMember("a", host, port);
  const frontendPort = freePortOn("127.0.0.1");
  const lb = await buildLoadBalancer(world, {
    port: frontendPort,
    backend: { mode: "tcp" },
    members: [{ name: "a", address: host, port }],
  });
  const held = await holdConnection(lb.ipv4, frontendPort);
  const haproxy = (await world.state()).load_balancers[0].haproxy.pid as number;
  await world.call("DELETE", `/v1/load-balancers/${lb.id}`);
  await eventually(async () => (await refused(lb.ipv4, frontendPort)), 5_000, "listener closed");
  await eventually(async () =>
    (await world.call("GET", `/v1/load-balancers/${lb.id}`, undefined, [404])).status === 404
  );
  await eventually(async () => (await world.state()).data_plane.listeners.length === 0, 5_000, "no listener left");
  const stat = await Deno.readTextFile(`/proc/${haproxy}/stat`).catch(() => "");
  assert.ok(stat === "" || /^\d+ \(.*\) Z/.test(stat), "its HAProxy has ended");
  await assert.rejects(held.echo("anyone?"), Error, "the connection ended with the load balancer's VMs");
  held.close();
  const rebind = Deno.listen({ hostname: lb.ipv4, port: frontendPort });
  rebind.close();
});

Deno.test("a port already taken is shown in the state and logged once; the listener binds once it is free", async () => {
  await using world = await startDataPlaneWorld();
  const host = `${world.networkPrefix}.0.11`;
  const port = freePortOn(host);
  await using _member = tcpMember("a", host, port);
  const { body } = await world.call("POST", "/v1/load-balancers", {
    zone: "de-fsn1",
    name: "taken",
    network_id: "net-1",
    high_availability: false,
    public_ipv4: true,
  });
  const lb = await waitApplied(world, body.load_balancer.id);
  const frontendPort = freePortOn(lb.public_ipv4);
  const squatter = Deno.listen({ hostname: lb.public_ipv4, port: frontendPort });
  const backend = (await world.call("POST", `/v1/load-balancers/${lb.id}/backends`, { name: "b", mode: "tcp" })).body
    .backend;
  await world.call("PUT", `/v1/load-balancers/${lb.id}/backends/${backend.id}/members`, {
    members: [{ name: "a", address: host, port }],
  });
  await world.call("POST", `/v1/load-balancers/${lb.id}/frontends`, {
    name: "f",
    port: frontendPort,
    backend_id: backend.id,
  });
  let listener: any;
  await eventually(
    async () => {
      const state = await world.state();
      listener = state.load_balancers[0].frontends[0].listeners.find((l: any) => l.address === lb.public_ipv4);
      return listener?.state === "failed";
    },
    5_000,
    "the listener shown as failed",
  );
  assert.match(listener.error, new RegExp(`cannot listen on ${lb.public_ipv4}:${frontendPort}: the address is in use`));
  const logged = world.logLines.filter((line) => line.includes(`${lb.public_ipv4}:${frontendPort}`));
  assert.equal(logged.length, 1, `logged once: ${JSON.stringify(world.logLines)}`);
  assert.match(logged[0], new RegExp(`load balancer ${lb.id}: .*for frontend fe-`), "HAProxy's own alert");
  const unapplied = (await world.call("GET", `/v1/load-balancers/${lb.id}`)).body.load_balancer;
  assert.equal(unapplied.is_configuration_applied, false, "a configuration that cannot bind is not applied");

  squatter.close();
  await waitApplied(world, lb.id);
  assert.equal(await firstLine(lb.public_ipv4, frontendPort), "a", "once free, the port is served");
});

Deno.test("IPv6 addresses are shown as not served, and a member outside loopback is never contacted", async () => {
  await using world = await startDataPlaneWorld();
  const frontendPort = freePortOn("127.0.0.1");
  const { body } = await world.call("POST", "/v1/load-balancers", {
    zone: "de-fsn1",
    name: "pair",
    network_id: "net-1",
    public_ipv4: true,
  });
  const id = body.load_balancer.id;
  const backend = (await world.call("POST", `/v1/load-balancers/${id}/backends`, {
    name: "b",
    mode: "tcp",
    health_check: { interval_seconds: 1 },
  })).body.backend;
  await world.call("PUT", `/v1/load-balancers/${id}/backends/${backend.id}/members`, {
    members: [{ name: "ula", address: "fd64:1:0:1::7f00:b", port: 30080 }],
  });
  await world.call("POST", `/v1/load-balancers/${id}/frontends`, {
    name: "f",
    port: frontendPort,
    backend_id: backend.id,
  });
  const lb = await waitApplied(world, id);
  assert.equal(lb.public_ipv6_addresses.length, 2, "a pair: two IPv6 addresses");
  const listeners = (await world.state()).load_balancers[0].frontends[0].listeners;
  assert.deepEqual(
    listeners.map((l: any) => [l.address, l.state]),
    [[lb.public_ipv6_addresses[0], "not_served"], [lb.public_ipv6_addresses[1], "not_served"], [
      lb.public_ipv4,
      "listening",
    ]],
  );
  assert.match(listeners[0].reason, /serves IPv4 only/);
  await eventually(async () => (await memberState(world, id, "ula")).health === "down", 5_000, "ula member down");
  assert.match((await memberState(world, id, "ula")).last_check.detail, /not checked: .* not a loopback address/);
  assert.equal(await firstLine(lb.public_ipv4, frontendPort), undefined, "no member may take it: closed");
});

Deno.test("a combined edge's members are served on its IPv4 once its sync finishes", async () => {
  await using world = await startDataPlaneWorld();
  const hosts = [11, 12].map((n) => `${world.networkPrefix}.0.${n}`);
  const port = freePortOn(hosts[0]);
  await using _a = tcpMember("a", hosts[0], port);
  await using _b = tcpMember("b", hosts[1], port);
  const frontendPort = freePortOn("127.0.0.1");
  const created = await fetch(`${world.simulator.url}/_simulator/edges`, {
    method: "POST",
    body: JSON.stringify({
      id: "edge-1",
      network_id: "net-1",
      roles: ["load_balancer", "nat_gateway"],
      placement: "combined",
      members: [{ name: "a", frontend_port: frontendPort, address: hosts[0], port }],
    }),
  });
  const edge = (await created.json()).edge;
  await eventually(async () => (await firstLine(edge.public_ipv4, frontendPort)) === "a", 5_000, "edge serves a");
  const { body } = await world.call("PATCH", "/v1/edges/edge-1", {
    members: [{ name: "b", frontend_port: frontendPort, address: hosts[1], port }],
  });
  assert.equal(body.operation.kind, "edge.sync");
  await eventually(async () => (await firstLine(edge.public_ipv4, frontendPort)) === "b", 5_000, "edge serves b");
  const state = (await world.state()).edges[0];
  assert.equal(state.members[0].name, "b");
  assert.equal(state.members[0].health, "up");
  assert.ok(state.listeners.some((l: any) => l.address === edge.public_ipv4 && l.state === "listening"));
});
