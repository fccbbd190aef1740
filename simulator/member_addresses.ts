/**
 * Which addresses may be members of a load balancer or an edge on a private network: a host of the network, an
 * address inside its ULA /64, or a global (or some server's public) IPv6 address. Anything else is refused with a 400
 * naming the member.
 *
 * @module
 */
import { type IpAddress, isGlobalIpv6, parseIp, prefixContains } from "../lib/ip_address.ts";
import type { LoadBalancerState } from "./load_balancer_state.ts";
import { badRequest } from "./problem.ts";
import type { World } from "./world.ts";

/** Checks a member address against the load balancer's network (400 naming the member otherwise). */
export function checkMemberAddress(
  world: World,
  lb: Pick<LoadBalancerState, "network_id">,
  options: { address: string; where: string },
): string {
  const { address, where } = options;
  const ip = parseIp(address);
  if (!ip) throw badRequest(`${where}: ${address} is not an IP address`);
  if (!memberAddressAllowed(world, { networkId: lb.network_id, ip })) {
    const network = world.network(lb.network_id);
    throw badRequest(
      `${where}: ${ip.text} is neither a host of network ${network.id} (${network.cidr}), an address in its ` +
        `ULA prefix ${network.ula_prefix}, nor a global IPv6 address`,
    );
  }
  return ip.text;
}

/** The member address rule: a host of the network, inside its ULA /64, or a global (or server public) IPv6. */
export function memberAddressAllowed(world: World, member: { networkId: string; ip: IpAddress }): boolean {
  const { networkId, ip } = member;
  const network = world.network(networkId);
  if (ip.family === 4) return world.isNetworkHost(network, ip);
  return prefixContains(network.prefix6, ip) || isGlobalIpv6(ip) || world.isServerPublicIpv6(ip);
}
