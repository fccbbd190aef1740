/**
 * The private network of a load balancer and each Node's member address on it — one rule for the service
 * controller (before any create, and for an existing load balancer) and the doctor:
 *
 * - **the network**: the one named (the `load-balancer.ankra.cloud/network-id` annotation, `ANKRA_CLOUD_NETWORK_ID`,
 *   or an existing load balancer's own), else the one network every Node's server has a leg on. Membership comes
 *   from the API's list of each network's legs (`get_network` members), never from the Nodes' reported addresses:
 *   a kubelet may report an address on another network (`--node-ip`), and a Node not yet initialised has none.
 * - **the member address of a Node**: its server's leg on that network — the leg's IPv4 `address` for IPv4 members,
 *   its ULA `address6` for IPv6 members. kube-proxy answers a NodePort on every address of the node, so the
 *   address on the load balancer's network is the one that reaches it, whatever InternalIP the kubelet chose.
 * - **a Node without a leg on the network** has no address the load balancer may use (the API refuses the member):
 *   nothing is created or changed, and the user is told which Node and what to do.
 *
 * Pure functions.
 *
 * @module
 */
import type { Interface, Network } from "../cloud/schemas.ts";
import { type DesiredMember, selectMembers } from "./member_selection.ts";
import { providerServerId } from "./server_match.ts";
import type { ServiceIntent } from "./service_plan.ts";

/** A server's leg on a private network, as the API lists it. */
export type Leg = Pick<Interface, "server_id" | "network_id" | "address" | "address6">;

/** A private network and the legs on it (`get_network` carries them as `members`). */
export type NetworkWithLegs = Pick<Network, "id" | "name" | "cidr"> & { members?: Leg[] };

/** A Node that becomes a member, and the server it is. */
export interface NodeOnServer {
  /** Node name. */
  node: string;
  /** Server id. */
  serverId: string;
}

/** The Nodes initialised with an Ankra providerID and their servers (other Nodes are skipped). */
export function nodesOnServers(nodes: { name: string; providerID?: string }[]): NodeOnServer[] {
  return nodes.flatMap((node) => {
    const serverId = providerServerId(node);
    return serverId ? [{ node: node.name, serverId }] : [];
  });
}

/** A member address rule for `selectMembers`: a Node's address on the network, from {@linkcode placeOnNetwork}. */
export function addressOnNetwork(
  addresses: Map<string, NodeAddresses>,
): (node: { name: string }, family: 4 | 6) => string | undefined {
  return (node, family) => addresses.get(node.name)?.[family];
}

/** Where a named network comes from. */
export type NetworkSource = "annotation" | "ANKRA_CLOUD_NETWORK_ID" | "load balancer";

/** A Node's member addresses on the chosen network, per IP family. */
export type NodeAddresses = Record<4 | 6, string>;

/** The network and the member addresses, or why none can be used. */
export type NetworkPlacement =
  | {
    ok: true;
    /** The network's id. */
    networkId: string;
    /** Named (and by what), or `shared`: the one network every Node's server is on. */
    source: NetworkSource | "shared";
    /** Each Node's addresses on the network, by Node name. */
    addresses: Map<string, NodeAddresses>;
  }
  | {
    ok: false;
    /** What is wrong, naming the network and the Nodes. */
    problem: string;
    /** What to do. */
    fix: string;
    /** The Nodes without an address on the network (empty when no network could be chosen at all). */
    missing: string[];
    /** The network, when one was chosen. */
    networkId?: string;
  };

/** What {@linkcode placeOnNetwork} decides from. */
export interface NetworkPlacementInput {
  /** The Nodes that become members (eligible, matched to servers). */
  nodes: NodeOnServer[];
  /** The networks the API lists, with their legs (for a named network, at least that one). */
  networks: NetworkWithLegs[];
  /** The named network, when one is named. */
  named?: { id: string; source: NetworkSource };
}

const SET_NETWORK = "set the load-balancer.ankra.cloud/network-id annotation or ANKRA_CLOUD_NETWORK_ID";

/** The ids of the networks each server has a leg on. */
export function serverNetworks(networks: NetworkWithLegs[]): Map<string, Set<string>> {
  const legs = new Map<string, Set<string>>();
  for (const network of networks) {
    for (const leg of network.members ?? []) {
      if (!legs.has(leg.server_id)) legs.set(leg.server_id, new Set());
      legs.get(leg.server_id)!.add(network.id);
    }
  }
  return legs;
}

/** The networks every one of `serverIds` has a leg on (none for no servers). */
export function sharedNetworks<N extends NetworkWithLegs>(networks: N[], serverIds: string[]): N[] {
  if (serverIds.length === 0) return [];
  const legs = serverNetworks(networks);
  return networks.filter((network) => serverIds.every((id) => legs.get(id)?.has(network.id)));
}

/** `worker-1`, `worker-1 and worker-2`, `worker-1, worker-2 and 3 more`. */
function nodeNames(names: string[], limit = 5): string {
  if (names.length === 1) return names[0];
  if (names.length <= limit) return `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
  return `${names.slice(0, limit).join(", ")} and ${names.length - limit} more`;
}

/**
 * Each Node's addresses on `network` (its server's leg there), or the Nodes whose server has no leg on it. A
 * network the API does not list (`undefined`) holds no Node.
 */
export function memberAddressesOn(
  network: NetworkWithLegs | undefined,
  nodes: NodeOnServer[],
  networkId = network?.id ?? "",
): { addresses: Map<string, NodeAddresses>; missing: NodeOnServer[] } {
  const legs = new Map((network?.members ?? []).map((leg) => [leg.server_id, leg]));
  const addresses = new Map<string, NodeAddresses>();
  const missing: NodeOnServer[] = [];
  for (const entry of nodes) {
    const leg = legs.get(entry.serverId);
    if (leg && leg.network_id === networkId) addresses.set(entry.node, { 4: leg.address, 6: leg.address6 });
    else missing.push(entry);
  }
  return { addresses, missing: missing.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0)) };
}

/** What is wrong, and what to do, when Nodes have no address on the load balancer's network. */
export function missingAddressProblem(
  networkId: string,
  missing: NodeOnServer[],
  source: NetworkSource | "shared",
): { problem: string; fix: string } {
  const names = nodeNames(missing.map((m) => m.node));
  const which = missing.length === 1 ? `node ${names} (server ${missing[0].serverId}) has` : `nodes ${names} have`;
  const servers = missing.length === 1 ? "its server" : "their servers";
  const elsewhere = source === "load balancer"
    ? "or delete and recreate the Service to place its load balancer on a network every node is on"
    : `or ${SET_NETWORK} to a network every node's server is on`;
  return {
    problem: `${which} no address on network ${networkId}, the load balancer's network, so ${
      missing.length === 1 ? "it" : "they"
    } cannot be a member`,
    fix: `attach ${servers} to ${networkId} (Ankra Cloud portal), label ${
      missing.length === 1 ? "the node" : "those nodes"
    } node.kubernetes.io/exclude-from-external-load-balancers=true, ${elsewhere}`,
  };
}

/** The message of a failed placement for an event or a log line: the problem, then what to do. */
export function placementMessage(placement: { problem: string; fix: string }): string {
  return `${placement.problem}: ${placement.fix}`;
}

/**
 * The network of a load balancer and each Node's member address on it (see the module documentation). Nothing may
 * be created or changed when this is not ok.
 */
export function placeOnNetwork(input: NetworkPlacementInput): NetworkPlacement {
  const { nodes, networks, named } = input;
  let networkId: string;
  let source: NetworkSource | "shared";
  if (named) {
    networkId = named.id;
    source = named.source;
    if (!networks.some((n) => n.id === networkId)) {
      return {
        ok: false,
        networkId,
        missing: [],
        problem: `network ${networkId} (${named.source}) is not a network of the account`,
        fix: named.source === "load balancer"
          ? "the load balancer's network is gone: delete and recreate the Service"
          : `${SET_NETWORK} to the id of the private network the nodes share`,
      };
    }
  } else {
    const serverIds = [...new Set(nodes.map((n) => n.serverId))];
    const shared = sharedNetworks(networks, serverIds);
    if (shared.length !== 1) {
      const why = nodes.length === 0
        ? "no node is matched to an Ankra server yet"
        : shared.length > 1
        ? `the nodes' servers share ${shared.length} networks (${shared.map((n) => n.id).join(", ")})`
        : "the nodes' servers do not share one Ankra private network";
      return { ok: false, missing: [], problem: `no private network for the load balancer: ${why}`, fix: SET_NETWORK };
    }
    networkId = shared[0].id;
    source = "shared";
  }
  const network = networks.find((n) => n.id === networkId);
  const { addresses, missing } = memberAddressesOn(network, nodes, networkId);
  if (missing.length > 0) {
    return {
      ok: false,
      networkId,
      missing: missing.map((m) => m.node),
      ...missingAddressProblem(networkId, missing, source),
    };
  }
  return { ok: true, networkId, source, addresses };
}

/** The network a Service's load balancer is told to use: the annotation, else `ANKRA_CLOUD_NETWORK_ID`. */
export function namedNetwork(
  annotation: string | undefined,
  defaultNetworkId: string | undefined,
): { id: string; source: NetworkSource } | undefined {
  if (annotation) return { id: annotation, source: "annotation" };
  if (defaultNetworkId) return { id: defaultNetworkId, source: "ANKRA_CLOUD_NETWORK_ID" };
  return undefined;
}

/** What {@linkcode serviceNetworkMembers} decides from, besides the Service's intent. */
export interface ServiceNetworkInput {
  /** The networks read (with their legs): every network, or only the named one. */
  networks: NetworkWithLegs[];
  /** `ANKRA_CLOUD_NETWORK_ID`. */
  defaultNetworkId?: string;
  /** The network of the Service's existing load balancer (it cannot move). */
  existingNetworkId?: string;
}

/**
 * The service controller's decision for one Service: its load balancer's network (an existing load balancer's own,
 * else {@linkcode namedNetwork}, else the shared one) and the members on it — each chosen Node's address there, per
 * IP family (`selectMembers` with {@linkcode addressOnNetwork}). Not ok: nothing may be created or changed.
 */
export function serviceNetworkMembers(
  intent: Pick<ServiceIntent, "key" | "nodes" | "settings">,
  families: (4 | 6)[],
  input: ServiceNetworkInput,
): (Extract<NetworkPlacement, { ok: true }> & { members: DesiredMember[] }) | Extract<NetworkPlacement, { ok: false }> {
  const named = input.existingNetworkId
    ? { id: input.existingNetworkId, source: "load balancer" as const }
    : namedNetwork(intent.settings.networkId, input.defaultNetworkId);
  const placement = placeOnNetwork({ nodes: nodesOnServers(intent.nodes), networks: input.networks, named });
  if (!placement.ok) return placement;
  const address = addressOnNetwork(placement.addresses);
  return { ...placement, members: selectMembers(intent.nodes, families, { serviceKey: intent.key, address }).members };
}
