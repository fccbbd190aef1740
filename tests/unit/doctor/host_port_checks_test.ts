/**
 * The doctor's checks of what node-address Services publish on the nodes: a port a hostNetwork or hostPort pod takes
 * on a serving node (kube-proxy captures the Service's address and port first), the pods as the doctor keeps them,
 * and a server whose /64 is due to be renumbered (its published IPv6 will change).
 */
import assert from "node:assert/strict";
import type { V1Pod } from "@kubernetes/client-node";
import type { HostPortPod, ServiceFacts } from "../../../lib/doctor/facts.ts";
import { hostPortPod } from "../../../lib/doctor/gather_facts.ts";
import { hostPortsFinding } from "../../../lib/doctor/host_port_checks.ts";
import { matchNodes } from "../../../lib/doctor/placement_checks.ts";
import { ipv6RenumberFinding } from "../../../lib/doctor/server_address_checks.ts";
import { slimService } from "../../support/fakes/slim_service.ts";
import { node, server } from "./doctor_fixtures.ts";

const ON_NODES = { "load-balancer.ankra.cloud/mode": "node-addresses" };

function readyNode(name: string, extra = {}) {
  return node(name, { providerID: `ankracloud://de-fsn1/s-${name}`, taints: [], ready: "True", ...extra });
}

const NODES = [readyNode("a"), readyNode("b", { labels: { pool: "edge" } })];
const MATCHES = matchNodes(NODES, [server("s-a", "a"), server("s-b", "b")]);

function traefik(extra: Partial<ServiceFacts> = {}): ServiceFacts {
  return slimService({
    namespace: "kube-system",
    name: "traefik",
    annotations: ON_NODES,
    ports: [{ protocol: "TCP", port: 80 }, { protocol: "TCP", port: 443 }],
    ...extra,
  });
}

function pod(name: string, nodeName: string, ports: { port: number; protocol?: string }[], hostNetwork = true) {
  return {
    namespace: "ingress",
    name,
    nodeName,
    hostNetwork,
    labels: { app: name },
    ports: ports.map((p) => ({ port: p.port, protocol: p.protocol ?? "TCP" })),
  } satisfies HostPortPod;
}

function finding(services: ServiceFacts[], pods: HostPortPod[]) {
  return hostPortsFinding({ settings: { clusterName: "kubernetes" }, services, nodes: NODES, matches: MATCHES, pods });
}

Deno.test("a hostNetwork or hostPort pod on a serving node taking a node-address Service's port is named", () => {
  const nginx = pod("nginx-7d9", "a", [{ port: 80 }, { port: 10254 }]);
  const proxy = pod("proxy-x1", "b", [{ port: 443 }], false);
  const found = finding([traefik()], [nginx, proxy]);
  assert.equal(found.status, "warn");
  assert.match(
    found.result,
    /^2 ports of node-address Services are also taken on a node that serves it by a pod listening on the node's own addresses: kube-system\/traefik port 80\/TCP: ingress\/nginx-7d9 \(hostNetwork\) on a, kube-system\/traefik port 443\/TCP: ingress\/proxy-x1 \(hostPort\) on b; kube-proxy captures the Service's address and port first/,
  );
  assert.match(found.fix!, /another port.*mode: load-balancer.*node-selector/);
});

Deno.test("only serving nodes, the same protocol, and not the Service's own pods count", () => {
  // b is left out by the node selector: its pod takes 80 there without harm.
  const onB = pod("nginx-b", "b", [{ port: 80 }]);
  const selected = traefik({ annotations: { ...ON_NODES, "load-balancer.ankra.cloud/node-selector": "pool!=edge" } });
  assert.equal(finding([selected], [onB]).status, "pass");
  // A UDP port is not the TCP port.
  assert.equal(finding([traefik()], [pod("dns", "a", [{ port: 80, protocol: "UDP" }])]).status, "pass");
  // A hostNetwork ingress controller behind its own Service gets its traffic either way.
  const own = { ...pod("traefik-5c", "a", [{ port: 80 }]), namespace: "kube-system", labels: { app: "traefik" } };
  const pass = finding([traefik({ selector: { app: "traefik" } })], [own]);
  assert.equal(pass.status, "pass", pass.result);
  assert.match(
    pass.result,
    /no hostNetwork or hostPort pod on a serving node takes a port of the 1 node-address Service/,
  );
  // A Service served by an Ankra load balancer has its own address: no clash.
  assert.equal(finding([traefik({ annotations: {} })], [pod("nginx", "a", [{ port: 80 }])]).status, "pass");
});

Deno.test("before any node-address Service exists, the ports pods take on the nodes are listed", () => {
  const found = hostPortsFinding({
    settings: { clusterName: "kubernetes", defaultLoadBalancerMode: "node-addresses" },
    services: [],
    nodes: NODES,
    matches: MATCHES,
    pods: [pod("nginx", "a", [{ port: 80 }, { port: 443 }])],
  });
  assert.equal(found.status, "pass");
  assert.match(
    found.result,
    /no node-address Service yet; .*: 443\/TCP \(ingress\/nginx \(hostNetwork\) on a\), 80\/TCP/,
  );
});

Deno.test("the pods the doctor keeps: hostNetwork ones with every port, others with their hostPorts, running ones", () => {
  const read = (spec: Record<string, unknown>, phase = "Running") =>
    hostPortPod(
      { metadata: { namespace: "ns", name: "p", labels: { app: "x" } }, spec, status: { phase } } as unknown as V1Pod,
    );
  assert.deepEqual(
    read({
      nodeName: "a",
      hostNetwork: true,
      containers: [{ name: "c", ports: [{ containerPort: 80 }, { containerPort: 53, protocol: "UDP" }] }],
      initContainers: [
        { name: "sidecar", restartPolicy: "Always", ports: [{ containerPort: 9000 }] },
        { name: "once", ports: [{ containerPort: 9001 }] },
      ],
    }),
    {
      namespace: "ns",
      name: "p",
      nodeName: "a",
      hostNetwork: true,
      labels: { app: "x" },
      ports: [{ port: 80, protocol: "TCP" }, { port: 53, protocol: "UDP" }, { port: 9000, protocol: "TCP" }],
    },
  );
  const hostPort = read({
    nodeName: "b",
    containers: [{ name: "c", ports: [{ containerPort: 8080, hostPort: 80 }, { containerPort: 9090 }] }],
  });
  assert.deepEqual(hostPort?.ports, [{ port: 80, protocol: "TCP" }]);
  assert.equal(read({ nodeName: "a", containers: [{ name: "c", ports: [{ containerPort: 80 }] }] }), undefined);
  assert.equal(read({ hostNetwork: true, containers: [{ name: "c", ports: [{ containerPort: 80 }] }] }), undefined);
  assert.equal(
    read(
      { nodeName: "a", hostNetwork: true, containers: [{ name: "c", ports: [{ containerPort: 80 }] }] },
      "Succeeded",
    ),
    undefined,
  );
});

Deno.test("a server whose /64 is in a pool being drained is warned: its published IPv6 will change", () => {
  const due = { ...server("s-a", "a"), public_ipv6: "2001:db8:1:2::1", ipv6_renumber_available: true };
  const steady = { ...server("s-b", "b"), public_ipv6: "2001:db8:3:4::1" };
  const warned = ipv6RenumberFinding(matchNodes(NODES, [due, steady]));
  assert.equal(warned.status, "warn");
  assert.match(
    warned.result,
    /^the server of 1 node has its \/64 in a pool Ankra Cloud is draining \(ipv6_renumber_available\): a \(server s-a, 2001:db8:1:2::1\); when the server moves to a new \/64, the public IPv6 the cluster publishes for it changes$/,
  );
  assert.match(warned.fix!, /within --server-list-period \(60 s\), with a Normal NodeAddressesChanged event/);
  assert.match(warned.fix!, /DNS records, firewall rules, and a kubelet whose --node-ip names it/);
  const fine = ipv6RenumberFinding(matchNodes(NODES, [steady, { ...server("s-a", "a"), public_ipv6: "2001:db8::a" }]));
  assert.equal(fine.status, "pass");
  assert.match(fine.result, /no server of the 2 matched nodes has its \/64 in a pool being drained/);
});
