/**
 * The private network new load balancers sit on. With ANKRA_CLOUD_NETWORK_ID set, that network must exist, reach
 * the configured zone, and hold the matched nodes' servers (their addresses become the members). Without it, the
 * controller takes the one network every node shares; several or none leave it without a choice, and every new
 * LoadBalancer Service then waits for the annotation `load-balancer.ankra.cloud/network-id`.
 *
 * Membership comes from `get_network` (its `members` are the servers' legs), not from node addresses, so it is
 * right before the controller has set any address.
 *
 * @module
 */
import type { Network, Server } from "../cloud/client.ts";
import type { Fetched } from "./facts.ts";
import { type CheckName, fail, type Finding, nameList, pass, plural, skip, warn } from "./finding.ts";

/** The check of the private network. */
export const PRIVATE_NETWORK: CheckName = { id: "private-network", title: "One private network for load balancers" };

const SET_NETWORK_FIX = "set ANKRA_CLOUD_NETWORK_ID (chart: loadBalancer.networkID) to the network the load " +
  "balancers should use, or the annotation load-balancer.ankra.cloud/network-id on each LoadBalancer Service";

function describe(network: Pick<Network, "id" | "name" | "cidr">): string {
  return `${network.id} (${network.name}, ${network.cidr})`;
}

/** The ids of the networks each server has a leg on, from the networks' members. */
export function serverNetworks(networks: Network[]): Map<string, Set<string>> {
  const legs = new Map<string, Set<string>>();
  for (const network of networks) {
    for (const member of network.members ?? []) {
      if (!legs.has(member.server_id)) legs.set(member.server_id, new Set());
      legs.get(member.server_id)!.add(network.id);
    }
  }
  return legs;
}

/** The networks every one of `servers` has a leg on. */
export function sharedNetworks(networks: Network[], servers: Pick<Server, "id">[]): Network[] {
  if (servers.length === 0) return [];
  const legs = serverNetworks(networks);
  return networks.filter((network) => servers.every((server) => legs.get(server.id)?.has(network.id)));
}

/** What the network check reads. */
export interface NetworkCheckInput {
  /** ANKRA_CLOUD_NETWORK_ID. */
  configuredId?: string;
  /** `get_network` of it. */
  configured?: Fetched<Network>;
  /** Every network with its members (when none is configured). */
  networks?: Fetched<Network[]>;
  /** The servers of the matched nodes. */
  servers: Server[];
  /** ANKRA_CLOUD_ZONE. */
  zone?: string;
}

/** The finding of the private network. */
export function networkFinding(input: NetworkCheckInput): Finding {
  if (input.configuredId) return configuredNetworkFinding(input.configuredId, input);
  if (input.servers.length === 0) return skip(PRIVATE_NETWORK, "skipped: no node is matched to a server yet");
  if (!input.networks) return skip(PRIVATE_NETWORK, "skipped: the networks were not read");
  if (!input.networks.ok) {
    return skip(PRIVATE_NETWORK, `skipped: reading the networks failed: ${input.networks.failure.message}`);
  }
  const networks = input.networks.value;
  const shared = sharedNetworks(networks, input.servers);
  if (shared.length === 1) {
    return pass(
      PRIVATE_NETWORK,
      `${
        input.servers.length === 1 ? "the matched server is on" : `the ${input.servers.length} matched servers share`
      } ` +
        `${describe(shared[0])}, which new load balancers will use`,
    );
  }
  if (shared.length > 1) {
    return fail(
      PRIVATE_NETWORK,
      `the matched servers share ${shared.length} networks (${
        nameList(shared.map(describe))
      }): the controller cannot choose one`,
      SET_NETWORK_FIX,
    );
  }
  const legs = serverNetworks(networks);
  const where = input.servers.map((server) => {
    const ids = [...(legs.get(server.id) ?? [])].sort();
    return `${server.hostname}: ${ids.length > 0 ? ids.join("+") : "none"}`;
  });
  return fail(
    PRIVATE_NETWORK,
    `the matched servers share no private network (${nameList(where)})`,
    `attach every node's server to one private network (Ankra Cloud portal), or ${SET_NETWORK_FIX}`,
  );
}

function configuredNetworkFinding(id: string, input: NetworkCheckInput): Finding {
  const configured = input.configured;
  if (!configured) return skip(PRIVATE_NETWORK, `skipped: ANKRA_CLOUD_NETWORK_ID ${id} was not read`);
  if (!configured.ok) {
    if (configured.failure.kind === "not_found") {
      return fail(
        PRIVATE_NETWORK,
        `ANKRA_CLOUD_NETWORK_ID ${id} names no network of the account (HTTP 404 on get_network)`,
        "set ANKRA_CLOUD_NETWORK_ID to the id of the private network the nodes share (portal: Networks), or " +
          "unset it to let the controller use the one network every node shares",
      );
    }
    return skip(PRIVATE_NETWORK, `skipped: get_network ${id} failed: ${configured.failure.message}`);
  }
  const network = configured.value;
  if (input.zone && network.zones.length > 0 && !network.zones.includes(input.zone)) {
    return fail(
      PRIVATE_NETWORK,
      `ANKRA_CLOUD_NETWORK_ID ${describe(network)} does not reach ANKRA_CLOUD_ZONE ${input.zone} (it spans ${
        network.zones.join(", ")
      }): creates would be refused`,
      "choose a network and a zone that go together: set ANKRA_CLOUD_ZONE to one of the network's zones, or " +
        "ANKRA_CLOUD_NETWORK_ID to a network in that zone",
    );
  }
  const members = new Set((network.members ?? []).map((m) => m.server_id));
  const outside = input.servers.filter((server) => !members.has(server.id)).map((server) => server.hostname).sort();
  if (outside.length > 0) {
    return warn(
      PRIVATE_NETWORK,
      `ANKRA_CLOUD_NETWORK_ID ${describe(network)} exists, but ${plural(outside.length, "matched server")} ` +
        `${outside.length === 1 ? "has" : "have"} no leg on it: ${nameList(outside)}`,
      "a load balancer reaches its members over this network (or public IPv6): attach those servers to it in the " +
        `Ankra Cloud portal, or ${SET_NETWORK_FIX}`,
    );
  }
  return pass(
    PRIVATE_NETWORK,
    `ANKRA_CLOUD_NETWORK_ID ${describe(network)} exists${
      input.servers.length > 0 ? ` and holds all ${plural(input.servers.length, "matched server")}` : ""
    }`,
  );
}
