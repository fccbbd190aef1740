/**
 * The private network of a load balancer and each Node's member address — one rule for the service controller
 * (before any create, and for an existing load balancer) and the doctor:
 *
 * - **the network**: the one named (the `load-balancer.ankra.cloud/network-id` annotation, `ANKRA_CLOUD_NETWORK_ID`,
 *   or an existing load balancer's own), else the one network every Node's server has a leg on. Membership comes
 *   from the API's list of each network's legs (`get_network` members), never from the Nodes' reported addresses:
 *   a kubelet may report an address on another network (`--node-ip`), and a Node not yet initialised has none.
 * - **the member address of a Node, per IP family** — what `replace_load_balancer_members` accepts: its server's leg
 *   on that network (the leg's IPv4 `address`, its ULA `address6`); for IPv6, where the server has no leg there, the
 *   server's `public_ipv6` (from the server document, never from the Node). kube-proxy answers a NodePort on every
 *   address of the node, so these addresses reach it whatever InternalIP the kubelet chose. A server without a leg
 *   has no IPv4 address the load balancer may use.
 * - **a Node with no address for any of the Service's families** stays out, and the user is told which Node and what
 *   to do; a Node with an address for some of them serves over those. When no Node has any address, nothing is
 *   created or changed.
 *
 * Pure functions.
 *
 * @module
 */
import { ANNOTATION_PREFIX } from "../../ankra_names.ts";
import type { Interface, Network } from "../../cloud/schemas.ts";
import { type DesiredMember, selectMembers } from "./member_selection.ts";
import { providerServerId } from "../server_match.ts";
import type { LoadBalancerIntent } from "./service_plan.ts";

/** A server's leg on a private network, as the API lists it. */
type Leg = Pick<Interface, "server_id" | "network_id" | "address" | "address6">;

/** A private network and the legs on it (`get_network` carries them as `members`). */
export type NetworkWithLegs = Pick<Network, "id" | "name" | "cidr"> & { members?: Leg[] };

/** A Node that becomes a member, and the server it is. */
export interface NodeOnServer {
  /** Name of the Node, as reported in `missing` and `leftOut`. */
  node: string;
  /** From the Node's providerID: the server whose leg on the network gives the member address. */
  serverId: string;
  /** The server's `public_ipv6` (its document's, not the Node's): the IPv6 member address where it has no leg. */
  publicIpv6?: string;
}

/**
 * The Nodes initialised with an Ankra providerID and their servers (other Nodes are skipped); `publicIpv6` gives a
 * server's public IPv6 address where it is known.
 */
function nodesOnServers(
  nodes: readonly { name: string; providerID?: string }[],
  publicIpv6: (serverId: string) => string | undefined = () => undefined,
): NodeOnServer[] {
  return nodes.flatMap((node) => {
    const serverId = providerServerId(node);
    if (!serverId) return [];
    const ipv6 = publicIpv6(serverId);
    return [ipv6 ? { node: node.name, serverId, publicIpv6: ipv6 } : { node: node.name, serverId }];
  });
}

/** A member address rule for `selectMembers`: a Node's address, from {@linkcode placeOnNetwork}. */
function addressOnNetwork(
  addresses: Map<string, NodeAddresses>,
): (node: { name: string }, family: 4 | 6) => string | undefined {
  return (node, family) => addresses.get(node.name)?.[family];
}

/** Where a named network comes from. */
type NetworkSource = "annotation" | "ANKRA_CLOUD_NETWORK_ID" | "load balancer";

/** A Node's member addresses, per IP family it has one for. */
type NodeAddresses = Partial<Record<4 | 6, string>>;

/** A Node missing the member address of some families, and which. */
interface LeftOut extends NodeOnServer {
  /** The families (of those asked for) it has no address for, IPv6 first. */
  families: (4 | 6)[];
  /** True when it has no address for any asked family: it is not a member at all. */
  out: boolean;
}

/** The network and the member addresses, or why none can be used. */
export type NetworkPlacement =
  | {
    ok: true;
    /** The network's id. */
    networkId: string;
    /** Named (and by what), or `shared`: the one network every Node's server is on. */
    source: NetworkSource | "shared";
    /** Each Node's addresses, by Node name (only Nodes with at least one of the asked families). */
    addresses: Map<string, NodeAddresses>;
    /** The Nodes missing some family's address (by name), with the problem and the fix; absent when none is. */
    leftOut?: { nodes: LeftOut[]; problem: string; fix: string };
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
interface NetworkPlacementInput {
  /** The Nodes that become members (eligible, matched to servers). */
  nodes: NodeOnServer[];
  /** The networks the API lists, with their legs (for a named network, at least that one). */
  networks: NetworkWithLegs[];
  /** The named network, when one is named. */
  named?: { id: string; source: NetworkSource };
  /** The IP families members are wanted for, IPv6 first (default both). */
  families?: (4 | 6)[];
}

const SET_NETWORK = `set the ${ANNOTATION_PREFIX}network-id annotation or ANKRA_CLOUD_NETWORK_ID`;

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
 * Each Node's member addresses for `families` on `network` (its server's leg there; for IPv6 without a leg, its
 * public IPv6), and the Nodes missing some family. A network the API does not list (`undefined`) has no legs.
 */
function memberAddressesOn(
  network: NetworkWithLegs | undefined,
  nodes: NodeOnServer[],
  options: { networkId?: string; families?: (4 | 6)[] } = {},
): { addresses: Map<string, NodeAddresses>; leftOut: LeftOut[] } {
  const networkId = options.networkId ?? network?.id ?? "";
  const families = options.families ?? [6, 4];
  const legs = new Map((network?.members ?? []).map((leg) => [leg.server_id, leg]));
  const addresses = new Map<string, NodeAddresses>();
  const leftOut: LeftOut[] = [];
  for (const entry of nodes) {
    const leg = legs.get(entry.serverId);
    const onNetwork = leg && leg.network_id === networkId ? leg : undefined;
    const found: NodeAddresses = {};
    for (const family of families) {
      const address = family === 4 ? onNetwork?.address : onNetwork?.address6 || entry.publicIpv6;
      if (address) found[family] = address;
    }
    const lacking = families.filter((family) => !found[family]);
    if (lacking.length < families.length) addresses.set(entry.node, found);
    if (lacking.length > 0) leftOut.push({ ...entry, families: lacking, out: lacking.length === families.length });
  }
  return { addresses, leftOut: leftOut.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0)) };
}

function familyNames(families: (4 | 6)[]): string {
  return families.map((f) => `IPv${f}`).join(" or ");
}

/**
 * What is wrong, and what to do, when Nodes lack a member address: `nodes` grouped by what they lack. `serving` is
 * false when no Node has any address (nothing can be created or changed).
 */
function missingAddressProblem(
  networkId: string,
  nodes: LeftOut[],
  options: { source: NetworkSource | "shared"; serving: boolean },
): { problem: string; fix: string } {
  const groups = new Map<string, LeftOut[]>();
  for (const entry of nodes) {
    const key = `${entry.out}|${entry.families.join(",")}`;
    groups.set(key, [...(groups.get(key) ?? []), entry]);
  }
  const parts = [...groups.values()].map((group) => {
    const names = nodeNames(group.map((m) => m.node));
    const one = group.length === 1;
    const which = one ? `node ${names} (server ${group[0].serverId}) has` : `nodes ${names} have`;
    const families = group[0].families;
    const consequence = group[0].out
      ? `so ${one ? "it is" : "they are"} not a member`
      : `so ${one ? "it serves" : "they serve"} this Service over ${
        familyNames(([6, 4] as const).filter((f) => !families.includes(f)))
      } only`;
    const why = `${one ? "its server has" : "their servers have"} no leg there${
      families.includes(6) ? " and no public IPv6 address" : ""
    }`;
    return `${which} no ${
      familyNames(families)
    } address for the load balancer on network ${networkId} (${why}), ${consequence}`;
  });
  const lacksIpv4 = nodes.some((n) => n.families.includes(4));
  const lacksIpv6 = nodes.some((n) => n.families.includes(6));
  const servers = nodes.length === 1 ? "its server" : "their servers";
  const elsewhere = options.source === "load balancer"
    ? "or delete and recreate the Service to place its load balancer on a network every node is on"
    : `or ${SET_NETWORK} to a network every node's server is on`;
  const fixes = [
    `attach ${servers} to ${networkId} (Ankra Cloud portal): IPv4 members need a leg on the load balancer's network`,
    ...(lacksIpv6 ? ["an IPv6 member is the server's leg there, else its public IPv6 address"] : []),
    `label ${
      nodes.length === 1 ? "the node" : "those nodes"
    } node.kubernetes.io/exclude-from-external-load-balancers=true`,
    ...(lacksIpv4 && !lacksIpv6 && !options.serving
      ? [
        "serve the Service over IPv6 (spec.ipFamilies: [IPv6]): servers without a leg are members by their public IPv6",
      ]
      : []),
    elsewhere,
  ];
  return {
    problem: `${parts.join("; ")}${options.serving ? "" : ": no node can be a member"}`,
    fix: fixes.join(", "),
  };
}

/** The message of a failed placement for an event or a log line: the problem, then what to do. */
export function placementMessage(placement: { problem: string; fix: string }): string {
  return `${placement.problem}: ${placement.fix}`;
}

/**
 * The network of a load balancer and each Node's member addresses (see the module documentation). Nothing may be
 * created or changed when this is not ok.
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
          : `${SET_NETWORK} to the id of the private network the load balancer sits on`,
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
      const fix = shared.length > 1 || nodes.length === 0
        ? SET_NETWORK
        : `${SET_NETWORK} to the private network the load balancer sits on (it needs one): nodes whose servers ` +
          "have no leg there are members by their public IPv6 address";
      return { ok: false, missing: [], problem: `no private network for the load balancer: ${why}`, fix };
    }
    networkId = shared[0].id;
    source = "shared";
  }
  const network = networks.find((n) => n.id === networkId);
  const { addresses, leftOut } = memberAddressesOn(network, nodes, { networkId, families: input.families });
  if (nodes.length > 0 && addresses.size === 0) {
    return {
      ok: false,
      networkId,
      missing: leftOut.map((m) => m.node),
      ...missingAddressProblem(networkId, leftOut, { source, serving: false }),
    };
  }
  if (leftOut.length === 0) return { ok: true, networkId, source, addresses };
  return {
    ok: true,
    networkId,
    source,
    addresses,
    leftOut: { nodes: leftOut, ...missingAddressProblem(networkId, leftOut, { source, serving: true }) },
  };
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
interface ServiceNetworkInput {
  /** The networks read (with their legs): every network, or only the named one. */
  networks: NetworkWithLegs[];
  /** `ANKRA_CLOUD_NETWORK_ID`. */
  defaultNetworkId?: string;
  /** The network of the Service's existing load balancer (it cannot move). */
  existingNetworkId?: string;
  /** A server's public IPv6 address, by server id (the IPv6 member address of a server without a leg). */
  publicIpv6?: (serverId: string) => string | undefined;
}

/**
 * The service controller's decision for one Service: its load balancer's network (an existing load balancer's own,
 * else {@linkcode namedNetwork}, else the shared one) and the members — each chosen Node's address per IP family
 * (`selectMembers` with {@linkcode addressOnNetwork}) and how many addresses were candidates (more than the members
 * when the backend's limit left some out). Not ok: nothing may be created or changed.
 */
export function serviceNetworkMembers(
  intent: Pick<LoadBalancerIntent, "key" | "nodes" | "settings">,
  families: (4 | 6)[],
  input: ServiceNetworkInput,
):
  | (Extract<NetworkPlacement, { ok: true }> & { members: readonly DesiredMember[]; candidates: number })
  | Extract<NetworkPlacement, { ok: false }> {
  const named = input.existingNetworkId
    ? { id: input.existingNetworkId, source: "load balancer" as const }
    : namedNetwork(intent.settings.networkId, input.defaultNetworkId);
  const placement = placeOnNetwork({
    nodes: nodesOnServers(intent.nodes, input.publicIpv6),
    networks: input.networks,
    named,
    families,
  });
  if (!placement.ok) return placement;
  const address = addressOnNetwork(placement.addresses);
  const selection = selectMembers(intent.nodes, families, { serviceKey: intent.key, address });
  return { ...placement, members: selection.members, candidates: selection.candidates };
}
