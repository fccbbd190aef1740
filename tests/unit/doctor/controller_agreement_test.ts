/**
 * The doctor and the controller agree: over the same worlds, the doctor's checklist (from the facts it reads) and
 * the service controller's decision for a new dual-stack load balancer (the pure functions its placement calls, in
 * the same order) come to the same answer — the network, the member addresses of every Node, the Nodes left out of a
 * family (served with a warning), "nothing is created, because of these Nodes", and a pair or a single VM. Each world also pins the expected answer, so both being wrong the same way
 * fails too.
 */
import assert from "node:assert/strict";
import type { Network, Server } from "../../../lib/cloud/client.ts";
import { checklist } from "../../../lib/doctor/checklist.ts";
import { type CloudFacts, leaseKey } from "../../../lib/doctor/facts.ts";
import { fetched } from "../../../lib/doctor/fetched.ts";
import type { Finding } from "../../../lib/doctor/report.ts";
import type { SlimNode, SlimService } from "../../../lib/kube/slim.ts";
import { chooseHighAvailability } from "../../../lib/provider/service/load_balancer_plan.ts";
import {
  namedNetwork,
  placementMessage,
  serviceNetworkMembers,
} from "../../../lib/provider/service/load_balancer_network.ts";
import {
  chooseZone,
  type HighAvailabilityMode,
  serviceFamilies,
  serviceIntent,
} from "../../../lib/provider/service/service_plan.ts";
import { capabilities, server } from "./doctor_fixtures.ts";
import { slimService } from "../../support/fakes/slim_service.ts";

/** A server with its legs: network id → IPv4 address; and its public IPv6 address, if any. */
interface WorldServer {
  id: string;
  legs: Record<string, string>;
  publicIpv6?: string;
}

/** A world: networks, servers with legs, Nodes (what their kubelets report), the settings. */
interface World {
  name: string;
  networks: string[];
  servers: WorldServer[];
  nodes: { name: string; server: string; internalIP: string; excluded?: boolean }[];
  networkId?: string;
  highAvailability?: HighAvailabilityMode;
  computeNodes?: number;
  /**
   * The expected answer: the network, the members (`node address`, IPv6 first) and the Nodes left out of a family;
   * or the Nodes that block it.
   */
  expect: { network: string; members: string[]; pair: boolean; leftOut?: string[] } | { blockedBy: string[] };
}

const CIDR: Record<string, string> = { "net-1": "10.0.0.0/16", "net-2": "10.1.0.0/16", "net-3": "10.2.0.0/16" };

function networksOf(world: World): Network[] {
  return world.networks.map((id) => ({
    id,
    zone: "de-fsn1",
    region: "eu-central",
    zones: ["de-fsn1"],
    name: id,
    cidr: CIDR[id],
    ula_prefix: `fd64:1:0:${id.slice(-1)}::/64`,
    gateway: CIDR[id].replace(".0/16", ".1"),
    members: world.servers.flatMap((s) =>
      s.legs[id]
        ? [{
          id: `if-${s.id}-${id}`,
          server_id: s.id,
          network_id: id,
          address: s.legs[id],
          address6: `fd64:1:0:${id.slice(-1)}::${s.legs[id].split(".")[3]}`,
        }]
        : []
    ),
  }));
}

function nodesOf(world: World): SlimNode[] {
  return world.nodes.map((n) => ({
    name: n.name,
    uid: n.name,
    resourceVersion: "1",
    creationTimestamp: "2025-01-01T00:00:00Z",
    providerID: `ankracloud://de-fsn1/${n.server}`,
    labels: {
      "topology.kubernetes.io/zone": "de-fsn1",
      ...(n.excluded ? { "node.kubernetes.io/exclude-from-external-load-balancers": "true" } : {}),
    },
    taints: [],
    addresses: [{ type: "InternalIP", address: n.internalIP }, { type: "Hostname", address: n.name }],
  }));
}

const SERVICE: SlimService = slimService({ namespace: "default", uid: "uid-web", ipFamilies: ["IPv6", "IPv4"] });

type ControllerDecision =
  | { creates: true; network: string; members: string[]; pair: boolean; leftOut: string[]; notice?: string }
  | { creates: false; message: string };

/** What the service controller decides for a new load balancer: its placement's pure steps, in its order. */
function controllerDecision(world: World): ControllerDecision {
  const defaults = { networkId: world.networkId, highAvailability: world.highAvailability ?? "auto" };
  const intent = serviceIntent(SERVICE, nodesOf(world), { clusterName: "prod", defaults });
  const zone = chooseZone(intent, undefined);
  assert.ok(zone.ok);
  const all = networksOf(world);
  // The controller reads every network, or only the named one.
  const named = namedNetwork(intent.settings.networkId, defaults.networkId);
  const networks = named ? all.filter((n) => n.id === named.id) : all;
  const publicIpv6 = new Map(world.servers.flatMap((s) => (s.publicIpv6 ? [[s.id, s.publicIpv6]] : [])));
  const decided = serviceNetworkMembers(intent, serviceFamilies(SERVICE), {
    networks,
    defaultNetworkId: world.networkId,
    publicIpv6: (id) => publicIpv6.get(id),
  });
  if (!decided.ok) return { creates: false, message: placementMessage(decided) };
  const ha = chooseHighAvailability({
    mode: defaults.highAvailability,
    zone: zone.value,
    capabilities: capabilities(world.computeNodes ?? 2),
  });
  return {
    creates: true,
    network: decided.networkId,
    members: decided.members.map((m) => `${m.node} ${m.address}`),
    pair: ha.pair,
    leftOut: decided.leftOut?.nodes.map((n) => n.node) ?? [],
    notice: decided.leftOut ? placementMessage(decided.leftOut) : undefined,
  };
}

/** The doctor's findings about the network and the zones, from the same world as facts. */
function doctorFindings(world: World): { network: Finding; zone: Finding } {
  const servers: Server[] = world.servers.map((s) => ({
    ...server(s.id, `host-${s.id}`),
    public_ipv6: s.publicIpv6 ?? null,
  }));
  const networks = networksOf(world);
  const configured = world.networkId ? networks.find((n) => n.id === world.networkId) : undefined;
  const cloud: CloudFacts = {
    reachability: { ok: true, url: "u", status: 401, body: "" },
    zones: fetched([{ name: "de-fsn1" }]),
    servers: fetched(servers),
    networks: world.networkId ? undefined : fetched(networks),
    configuredNetwork: configured ? fetched(configured) : undefined,
    loadBalancers: fetched([]),
    probe: { created: false, failure: { kind: "not_found", status: 404, message: "zone not found" } },
    capabilities: { "de-fsn1": fetched(capabilities(world.computeNodes ?? 2)) },
  };
  const findings = checklist({
    warnings: [],
    settings: {
      apiUrl: "https://cloud.example",
      networkId: world.networkId,
      highAvailability: world.highAvailability ?? "auto",
      leaderElect: true,
      leaseName: "ankra-cloud-ccm",
      leaseNamespace: "kube-system",
      delegatedAuthorization: true,
      clusterName: "kubernetes",
    },
    cloud,
    cluster: {
      server: "https://k8s:6443",
      source: "/kubeconfig",
      reachability: { ok: true, url: "u", status: 200, body: "" },
      identity: fetched("admin"),
      version: fetched("v1.37.2"),
      nodes: fetched(nodesOf(world)),
      leases: { [leaseKey("kube-system", "ankra-cloud-ccm")]: fetched(null) },
      access: fetched([]),
    },
    now: new Date("2025-06-01T00:00:00Z"),
  });
  const by = (id: string) => findings.find((f) => f.id === id)!;
  return { network: by("private-network"), zone: by("zone-capabilities") };
}

const BLACK_BOX: World = {
  name: "worker-1's kubelet reports its network-2 address; both servers share network-1",
  networks: ["net-1", "net-2"],
  servers: [{ id: "srv-1", legs: { "net-1": "10.0.0.4", "net-2": "10.1.0.5" } }, {
    id: "srv-2",
    legs: { "net-1": "10.0.0.6" },
  }],
  nodes: [
    { name: "worker-1", server: "srv-1", internalIP: "10.1.0.5" },
    { name: "worker-2", server: "srv-2", internalIP: "10.0.0.6" },
  ],
  expect: { network: "net-1", members: dual(["worker-1", "10.0.0.4"], ["worker-2", "10.0.0.6"]), pair: true },
};

/** The members of Nodes whose servers have legs on net-1 (`[node, IPv4]`): each leg's ULA, then each IPv4. */
function dual(...legs: [node: string, ipv4: string][]): string[] {
  return [
    ...legs.map(([node, ipv4]) => `${node} fd64:1:0:1::${ipv4.split(".")[3]}`),
    ...legs.map(([node, ipv4]) => `${node} ${ipv4}`),
  ];
}

/** Servers with only their public IPv6 (no private network leg). */
const IPV6_ONLY: WorldServer[] = [
  { id: "v6-1", legs: {}, publicIpv6: "2001:db8:10::1" },
  { id: "v6-2", legs: {}, publicIpv6: "2001:db8:10::2" },
];
const IPV6_NODES = [
  { name: "worker-1", server: "v6-1", internalIP: "2001:db8:10::1" },
  { name: "worker-2", server: "v6-2", internalIP: "2001:db8:10::2" },
];

const WORLDS: World[] = [
  BLACK_BOX,
  {
    name: "ANKRA_CLOUD_NETWORK_ID names network-1, and worker-3's server has no leg on it",
    networks: ["net-1", "net-2"],
    servers: [...BLACK_BOX.servers, { id: "srv-3", legs: { "net-2": "10.1.0.7" } }],
    nodes: [...BLACK_BOX.nodes, { name: "worker-3", server: "srv-3", internalIP: "10.1.0.7" }],
    networkId: "net-1",
    expect: {
      network: "net-1",
      members: dual(["worker-1", "10.0.0.4"], ["worker-2", "10.0.0.6"]),
      pair: true,
      leftOut: ["worker-3"],
    },
  },
  {
    name: "IPv6-only servers without legs, ANKRA_CLOUD_NETWORK_ID names network-1: public IPv6 members, no IPv4",
    networks: ["net-1"],
    servers: IPV6_ONLY,
    nodes: IPV6_NODES,
    networkId: "net-1",
    expect: {
      network: "net-1",
      members: ["worker-1 2001:db8:10::1", "worker-2 2001:db8:10::2"],
      pair: true,
      leftOut: ["worker-1", "worker-2"],
    },
  },
  {
    name: "IPv6-only servers without legs and no network named: the operator is asked to name one",
    networks: ["net-1"],
    servers: IPV6_ONLY,
    nodes: IPV6_NODES,
    expect: { blockedBy: [] },
  },
  {
    name: "a mixed world: worker-1's server has a leg on network-1, worker-4's only its public IPv6",
    networks: ["net-1"],
    servers: [BLACK_BOX.servers[0], { id: "v6-4", legs: {}, publicIpv6: "2001:db8:10::4" }],
    nodes: [BLACK_BOX.nodes[0], { name: "worker-4", server: "v6-4", internalIP: "2001:db8:10::4" }],
    networkId: "net-1",
    expect: {
      network: "net-1",
      members: ["worker-1 fd64:1:0:1::4", "worker-4 2001:db8:10::4", "worker-1 10.0.0.4"],
      pair: true,
      leftOut: ["worker-4"],
    },
  },
  {
    name: "the same, with worker-3 excluded from load balancers",
    networks: ["net-1", "net-2"],
    servers: [...BLACK_BOX.servers, { id: "srv-3", legs: { "net-2": "10.1.0.7" } }],
    nodes: [...BLACK_BOX.nodes, { name: "worker-3", server: "srv-3", internalIP: "10.1.0.7", excluded: true }],
    networkId: "net-1",
    expect: { network: "net-1", members: dual(["worker-1", "10.0.0.4"], ["worker-2", "10.0.0.6"]), pair: true },
  },
  {
    name: "the servers share no network",
    networks: ["net-1", "net-2"],
    servers: [{ id: "srv-2", legs: { "net-1": "10.0.0.6" } }, { id: "srv-3", legs: { "net-2": "10.1.0.7" } }],
    nodes: [
      { name: "worker-2", server: "srv-2", internalIP: "10.0.0.6" },
      { name: "worker-3", server: "srv-3", internalIP: "10.1.0.7" },
    ],
    expect: { blockedBy: [] },
  },
  {
    name: "the servers share two networks",
    networks: ["net-1", "net-2"],
    servers: [{ id: "srv-1", legs: { "net-1": "10.0.0.4", "net-2": "10.1.0.5" } }],
    nodes: [{ name: "worker-1", server: "srv-1", internalIP: "10.0.0.4" }],
    expect: { blockedBy: [] },
  },
  {
    ...BLACK_BOX,
    name: "a zone with one compute node: a single VM, with auto",
    computeNodes: 1,
    expect: { network: "net-1", members: dual(["worker-1", "10.0.0.4"], ["worker-2", "10.0.0.6"]), pair: false },
  },
  {
    ...BLACK_BOX,
    name: "a zone with one compute node, a pair asked for",
    computeNodes: 1,
    highAvailability: "true",
    expect: { network: "net-1", members: dual(["worker-1", "10.0.0.4"], ["worker-2", "10.0.0.6"]), pair: true },
  },
];

/** The doctor's member list from the controller's members: per Node by name, its IPv4 address, then its IPv6. */
function doctorMemberList(members: string[]): string {
  const byNode = new Map<string, string[]>();
  for (const member of members) {
    const [node, address] = member.split(" ");
    byNode.set(node, [...(byNode.get(node) ?? []), address]);
  }
  return [...byNode].sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([node, addresses]) =>
      `${node} ${addresses.sort((a, b) => Number(a.includes(":")) - Number(b.includes(":"))).join(" ")}`
    )
    .join(", ");
}

for (const world of WORLDS) {
  Deno.test(`the doctor and the controller agree: ${world.name}`, () => {
    const controller = controllerDecision(world);
    const doctor = doctorFindings(world);
    if ("blockedBy" in world.expect) {
      assert.ok(!controller.creates, "the controller creates nothing");
      assert.equal(doctor.network.status, "fail", `the doctor fails: ${doctor.network.result}`);
      for (const node of world.expect.blockedBy) {
        assert.match(controller.message, new RegExp(`node ${node} `), "the controller's Warning names the node");
        assert.match(doctor.network.result, new RegExp(`node ${node} `), "the doctor names the node");
      }
      // The same problem and fix, in the same words (the doctor may add which networks each node's server is on).
      const problem = world.expect.blockedBy.length > 0
        ? doctor.network.result
        : doctor.network.result.replace(/ \([^()]*\)$/, "");
      assert.equal(controller.message, `${problem}: ${doctor.network.fix}`);
      return;
    }
    assert.ok(controller.creates, `the controller waits: ${!controller.creates && controller.message}`);
    assert.equal(controller.network, world.expect.network);
    assert.deepEqual(controller.members, world.expect.members);
    assert.equal(controller.pair, world.expect.pair);
    assert.deepEqual(controller.leftOut, world.expect.leftOut ?? []);
    assert.match(doctor.network.result, new RegExp(`\\b${controller.network} \\(`), "the doctor names the network");
    assert.ok(
      doctor.network.result.includes(`members: ${doctorMemberList(controller.members)}`),
      `the doctor lists the same members: ${doctor.network.result}`,
    );
    if (controller.notice) {
      // Served with a warning: the same problem and fix, in the same words.
      assert.equal(doctor.network.status, "warn", doctor.network.result);
      const problem = doctor.network.result.slice(doctor.network.result.indexOf("; but ") + "; but ".length);
      assert.equal(controller.notice, `${problem}: ${doctor.network.fix}`);
      for (const node of controller.leftOut) assert.match(controller.notice, new RegExp(`\\b${node}\\b`));
    } else {
      assert.equal(doctor.network.status, "pass", doctor.network.result);
    }
    const doctorPair = /: HA pair|asks for a pair/.test(doctor.zone.result);
    assert.equal(doctorPair, controller.pair, `zone: ${doctor.zone.result}`);
    assert.equal(doctor.zone.status === "fail", controller.pair && (world.computeNodes ?? 2) < 2);
  });
}
