// deno-lint-ignore-file no-explicit-any -- members answer JSON documents read field by field
/**
 * Every traffic-shaping annotation proven by traffic (the real kube-apiserver, the service controller in-process, the
 * simulator with its loopback data plane; each Node runs an HTTP member on the Service's node port):
 *
 * - `health-check-type: http` with `health-check-path`: the Node whose member answers that path with 500 gets no
 *   request;
 * - `spec.sessionAffinity: ClientIP` (the `source` balance): each client address reaches one Node, every time;
 * - `protocol: http` with `redirect-http-to-https`, `tls-ports` and `certificate-ids`: the plain port answers with a
 *   redirect to https, the TLS port presents the seeded certificate and the member sees `X-Forwarded-Proto: https`.
 */
import assert from "node:assert/strict";
import net from "node:net";
import tls from "node:tls";
import { selfSignedServingCertificate } from "../../lib/server/self_signed_certificate.ts";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { eventually } from "../support/wait/eventually.ts";
import { startServiceController } from "../support/controller/service_controller.ts";
import { createServedNode, testSeed } from "../support/cloud/simulator.ts";
import {
  createService,
  deleteNodes,
  deleteService,
  getService,
  ingressIps,
} from "../support/controller/service_fixtures.ts";
import { kubeOk } from "../support/http/kube_http.ts";
import { type HttpMember, httpMember } from "../support/cloud/data_plane_fixtures.ts";

const randomPort = () => 20_000 + (crypto.getRandomValues(new Uint16Array(1))[0] % 9_000);

/** A controller over two Nodes whose servers sit on a network in 127.0.0.0/8, served by the loopback data plane. */
async function twoNodeWorld(extraSeed: Record<string, unknown> = {}) {
  const octet = 20 + (crypto.getRandomValues(new Uint8Array(1))[0] % 200);
  const seed = testSeed({
    ...extraSeed,
    settings: { data_plane: "loopback", loopback_ipv4_range: `127.${octet}.113.0/24` },
    networks: [{
      id: "net-1",
      name: "private",
      zone: "de-fsn1",
      cidr: `127.${octet}.0.0/16`,
      ula_prefix: "fd64:1:0:1::/64",
    }],
  });
  const env = await startServiceController({ seed });
  const nodes = [uniqueName("an-a"), uniqueName("an-b")];
  const addresses = [`127.${octet}.0.41`, `127.${octet}.0.42`];
  for (const [i, name] of nodes.entries()) {
    await createServedNode(testControlPlane(), env.cloud.simulator.sim.world, { name, address: addresses[i] });
  }
  return { env, octet, nodes, addresses };
}

async function publishedIpv4(name: string, octet: number): Promise<string> {
  return await eventually(
    async () => ingressIps(await getService(name)).find((ip) => ip.startsWith(`127.${octet}.113.`)),
    { timeoutMs: 20_000, what: `${name}'s published IPv4` },
  );
}

Deno.test("an http health check on a path takes out the Node answering it with 500; ClientIP keeps each client on one Node", async () => {
  const world = await twoNodeWorld();
  await using _env = world.env;
  const { octet, nodes, addresses } = world;
  const checked = uniqueName("hc");
  const sticky = uniqueName("sticky");
  const [checkedPort, stickyPort] = [randomPort(), randomPort() + 1];
  await createService(checked, {
    ports: [{ port: checkedPort }],
    annotations: {
      "load-balancer.ankra.cloud/ipv4": "true",
      "load-balancer.ankra.cloud/health-check-type": "http",
      "load-balancer.ankra.cloud/health-check-path": "/healthz",
      "load-balancer.ankra.cloud/health-check-interval": "1",
      "load-balancer.ankra.cloud/health-check-fall": "1",
    },
  });
  await kubeOk(testControlPlane(), "POST", "/api/v1/namespaces/default/services", {
    body: {
      metadata: { name: sticky, annotations: { "load-balancer.ankra.cloud/ipv4": "true" } },
      spec: {
        type: "LoadBalancer",
        selector: { app: sticky },
        sessionAffinity: "ClientIP",
        ports: [{ name: "p0", port: stickyPort }],
      },
    },
  });
  const members: HttpMember[] = [];
  try {
    const checkedNodePort = (await getService(checked)).spec!.ports![0].nodePort!;
    const stickyNodePort = (await getService(sticky)).spec!.ports![0].nodePort!;
    for (const [i, node] of nodes.entries()) {
      // Node B's member is sick: 500 on the checked path.
      members.push(
        httpMember(
          node,
          { address: addresses[i], port: checkedNodePort },
          (request) =>
            new URL(request.url).pathname === "/healthz" && i === 1
              ? new Response("sick", { status: 500 })
              : Response.json({ member: node }),
        ),
      );
      members.push(httpMember(node, { address: addresses[i], port: stickyNodePort }));
    }
    const address = await publishedIpv4(checked, octet);
    await eventually(async () => {
      const state = await (await fetch(`${world.env.cloud.simulator.url}/_simulator/state`)).json();
      const all = state.load_balancers.flatMap((lb: any) => lb.backends.flatMap((b: any) => b.members));
      return all.some((m: any) => m.health === "down" && m.address === addresses[1] && m.port === checkedNodePort);
    }, { what: "node B down by its http check" });
    const answered = new Set<string>();
    for (let i = 0; i < 20; i++) {
      answered.add((await (await fetch(`http://${address}:${checkedPort}/`)).json()).member);
    }
    assert.deepEqual([...answered], [nodes[0]], "every request to the healthy Node");

    const stickyAddress = await publishedIpv4(sticky, octet);
    const seen = new Map<string, Set<string>>();
    for (const source of [`127.${octet}.7.1`, `127.${octet}.7.2`, `127.${octet}.7.3`, `127.${octet}.7.4`]) {
      for (let i = 0; i < 8; i++) {
        const member = await requestFrom(stickyAddress, stickyPort, source);
        seen.set(source, (seen.get(source) ?? new Set()).add(member));
      }
    }
    for (const [source, set] of seen) assert.equal(set.size, 1, `${source} reached ${[...set]}: one Node every time`);
  } finally {
    for (const member of members) await member[Symbol.asyncDispose]();
    await deleteService(checked);
    await deleteService(sticky);
    await deleteNodes(nodes);
  }
});

Deno.test("protocol http with a TLS port and a redirect: https with the seeded certificate, plain redirected", async () => {
  const certificate = await selfSignedServingCertificate("shop.example");
  const world = await twoNodeWorld({
    certificates: [{ id: "cert-shop", certificate_pem: certificate.cert, private_key_pem: certificate.key }],
  });
  await using _env = world.env;
  const { octet, nodes, addresses } = world;
  const name = uniqueName("shop");
  const [plain, secure] = [randomPort(), randomPort() + 1];
  await createService(name, {
    ports: [{ port: plain }, { port: secure }],
    annotations: {
      "load-balancer.ankra.cloud/ipv4": "true",
      "load-balancer.ankra.cloud/protocol": "http",
      "load-balancer.ankra.cloud/redirect-http-to-https": "true",
      "load-balancer.ankra.cloud/tls-ports": String(secure),
      "load-balancer.ankra.cloud/certificate-ids": "cert-shop",
    },
  });
  const members: HttpMember[] = [];
  try {
    const ports = (await getService(name)).spec!.ports!;
    for (const [i, node] of nodes.entries()) {
      for (const port of ports) members.push(httpMember(node, { address: addresses[i], port: port.nodePort! }));
    }
    const address = await publishedIpv4(name, octet);
    const redirect = await eventually(async () => {
      const response = await fetch(`http://${address}:${plain}/cart?x=1`, { redirect: "manual" }).catch(() =>
        undefined
      );
      await response?.body?.cancel();
      return response?.status === 301 ? response : undefined;
    }, { what: "the plain port's redirect" });
    assert.equal(redirect.headers.get("location"), `https://${address}:${plain}/cart?x=1`);
    const answer = await tlsGet(address, secure, "shop.example", certificate.ca);
    assert.match(answer.subject, /^shop\.example@/, "the seeded certificate");
    assert.equal(answer.body.forwarded_proto, "https");
    assert.ok(nodes.includes(answer.body.member));
  } finally {
    for (const member of members) await member[Symbol.asyncDispose]();
    await deleteService(name);
    await deleteNodes(nodes);
  }
});

/** One HTTP request to `address:port` from the local address `source`; the member that answered. */
function requestFrom(address: string, port: number, source: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: address, port, localAddress: source }, () => {
      socket.write(`GET / HTTP/1.1\r\nHost: ${address}\r\nConnection: close\r\n\r\n`);
    });
    let text = "";
    socket.on("data", (chunk) => text += chunk);
    socket.on("error", reject);
    socket.on("end", () => {
      socket.destroy();
      resolve(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)).member);
    });
  });
}

/** A GET over TLS with SNI `servername`, trusting `ca`: the certificate's subject and the JSON body. */
function tlsGet(host: string, port: number, servername: string, ca: string): Promise<{ subject: string; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host, port, servername, ca }, () => {
      socket.write(`GET /secure HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n\r\n`);
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
