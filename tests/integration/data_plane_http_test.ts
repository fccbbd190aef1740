// deno-lint-ignore-file no-explicit-any -- members answer JSON documents read field by field
/**
 * `http` backends and TLS frontends as HAProxy serves them on the loopback data plane, with real clients: `X-Forwarded-For` and
 * `X-Forwarded-Proto` as the member receives them, every request of a kept-alive connection (bodies of both framings
 * included) reaching the member, `redirect_to_https`, 503 with no member up, TLS terminated with the certificate SNI
 * picks (the first without SNI), and a certificate id the account does not have refused by the API.
 */
import assert from "node:assert/strict";
import tls from "node:tls";
import { selfSignedServingCertificate } from "../../lib/server/self_signed_certificate.ts";
import {
  buildLoadBalancer,
  freePortOn,
  httpMember,
  memberState,
  startDataPlaneWorld,
  waitApplied,
} from "../support/cloud/data_plane_fixtures.ts";
import { eventually } from "../support/wait/eventually.ts";

Deno.test("the member receives X-Forwarded-For and X-Forwarded-Proto, and each request of a kept-alive connection", async () => {
  await using world = await startDataPlaneWorld();
  const host = `${world.networkPrefix}.0.11`;
  const port = freePortOn(host);
  await using member = httpMember("web", { address: host, port });
  const frontendPort = freePortOn("127.0.0.1");
  const lb = await buildLoadBalancer(world, {
    port: frontendPort,
    backend: { mode: "http" },
    members: [{ name: "web", address: host, port }],
  });
  const url = `http://${lb.ipv4}:${frontendPort}`;
  const first = await (await fetch(`${url}/first`, { headers: { "x-forwarded-for": "198.51.100.7" } })).json();
  assert.equal(first.member, "web");
  assert.equal(first.forwarded_for, "198.51.100.7, 127.0.0.1", "the client's address appended to what it sent");
  assert.equal(first.forwarded_proto, "http");
  assert.equal(first.host, `${lb.ipv4}:${frontendPort}`, "the Host header passes unchanged");
  assert.ok(
    first.peer.startsWith(`${world.networkPrefix}.`),
    `the member sees the load balancer's leg, not ${first.peer}`,
  );
  // Requests with bodies of both framings on one connection (fetch keeps it alive).
  const sized = await fetch(`${url}/sized`, { method: "POST", body: "x".repeat(70_000) });
  assert.deepEqual(await sized.json().then((j) => [j.path, j.body_length]), ["/sized", 70_000]);
  const chunked = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode("part one "));
      controller.enqueue(new TextEncoder().encode("part two"));
      controller.close();
    },
  });
  const streamed = await fetch(`${url}/chunked`, { method: "POST", body: chunked });
  assert.deepEqual(await streamed.json().then((j) => [j.path, j.body_length]), ["/chunked", 17]);
  const last = await (await fetch(`${url}/last`)).json();
  assert.equal(last.path, "/last");
  assert.deepEqual(member.requests.map((r) => r.path), ["/first", "/sized", "/chunked", "/last"]);
  const state = await world.state();
  const frontend = state.load_balancers[0].frontends[0];
  assert.equal(frontend.connections_total, 1, "the four requests came over one kept-alive connection");
  assert.equal(state.load_balancers[0].backends[0].members[0].connections_total, 1, "and reached the member over one");
});

Deno.test("a redirect_to_https frontend answers with a redirect to https://, and no member up is a 503", async () => {
  await using world = await startDataPlaneWorld();
  const host = `${world.networkPrefix}.0.11`;
  const port = freePortOn(host);
  const frontendPort = freePortOn("127.0.0.1");
  const lb = await buildLoadBalancer(world, {
    port: frontendPort,
    backend: { mode: "http", health_check: { type: "tcp", interval_seconds: 1 } },
    members: [{ name: "web", address: host, port }],
    frontend: { redirect_to_https: true },
  });
  const redirect = await fetch(`http://${lb.ipv4}:${frontendPort}/a/b?c=1`, { redirect: "manual" });
  await redirect.body?.cancel();
  assert.equal(redirect.status, 301);
  assert.equal(redirect.headers.get("location"), `https://${lb.ipv4}:${frontendPort}/a/b?c=1`);

  const plainPort = freePortOn("127.0.0.1");
  const backendId = lb.backendId;
  await world.call("POST", `/v1/load-balancers/${lb.id}/frontends`, {
    name: "plain",
    port: plainPort,
    backend_id: backendId,
  });
  await waitApplied(world, lb.id);
  // Nothing listens on the member's port: its first check takes it out.
  await eventually(async () => (await memberState(world, lb.id, "web")).health === "down", 5_000, "web down");
  const unavailable = await fetch(`http://${lb.ipv4}:${plainPort}/`);
  assert.equal(unavailable.status, 503);
  assert.match(await unavailable.text(), /No server is available to handle this request/, "HAProxy's own 503 page");
});

async function tlsRequest(
  options: { host: string; port: number; servername?: string; ca: string },
): Promise<{ subject: string; body: any }> {
  return await new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: options.host,
      port: options.port,
      servername: options.servername,
      ca: options.ca,
      // Without SNI the client connects by address, which the test certificates do not name: the chain is checked.
      ...(options.servername ? {} : { checkServerIdentity: () => undefined }),
    }, () => {
      socket.write(`GET /tls HTTP/1.1\r\nHost: ${options.servername ?? options.host}\r\nConnection: close\r\n\r\n`);
    });
    let text = "";
    socket.on("data", (chunk) => text += chunk);
    socket.on("error", reject);
    socket.on("end", () => {
      const subject = String(socket.getPeerCertificate().subject?.CN ?? "");
      socket.destroy();
      resolve({ subject, body: JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) });
    });
  });
}

Deno.test("a TLS frontend answers with the certificate SNI picks, the first one without SNI, and says https", async () => {
  const a = await selfSignedServingCertificate("a.example");
  const b = await selfSignedServingCertificate("b.example");
  await using world = await startDataPlaneWorld({
    certificates: [
      { id: "cert-a", certificate_pem: a.cert, private_key_pem: a.key },
      { id: "cert-b", certificate_pem: b.cert, private_key_pem: b.key },
    ],
  });
  const host = `${world.networkPrefix}.0.11`;
  const port = freePortOn(host);
  await using _member = httpMember("web", { address: host, port });
  const frontendPort = freePortOn("127.0.0.1");
  const lb = await buildLoadBalancer(world, {
    port: frontendPort,
    backend: { mode: "http" },
    members: [{ name: "web", address: host, port }],
    frontend: { tls: true, certificate_ids: ["cert-a", "cert-b"] },
  });
  const withB = await tlsRequest({ host: lb.ipv4, port: frontendPort, servername: "b.example", ca: b.ca });
  assert.match(withB.subject, /^b\.example@/);
  assert.equal(withB.body.forwarded_proto, "https");
  assert.equal(withB.body.path, "/tls");
  const withA = await tlsRequest({ host: lb.ipv4, port: frontendPort, servername: "a.example", ca: a.ca });
  assert.match(withA.subject, /^a\.example@/);
  const without = await tlsRequest({ host: lb.ipv4, port: frontendPort, ca: a.ca });
  assert.match(without.subject, /^a\.example@/, "a client without SNI gets the first certificate");
  const unknown = await tlsRequest({ host: lb.ipv4, port: frontendPort, servername: "c.example", ca: a.ca })
    .catch((e) => e);
  assert.ok(unknown instanceof Error, "a name no certificate covers gets the first one, which the client refuses");

  const refused = await world.call("POST", `/v1/load-balancers/${lb.id}/frontends`, {
    name: "other",
    port: freePortOn("127.0.0.1"),
    backend_id: lb.backendId,
    tls: true,
    certificate_ids: ["cert-a", "cert-x"],
  }, [400]);
  assert.equal(refused.status, 400);
  assert.equal(refused.body.detail, "field certificate_ids.1: the account has no certificate cert-x");
});
