/**
 * Which addresses the data plane may use on this machine, per mode — the rule that keeps every byte on it (the modes'
 * table in docs/simulator.md): `loopback` serves and contacts only 127.0.0.0/8 and `::1` (public IPv6 addresses stay
 * in 2001:db8::/32, not served; a member outside loopback is never contacted); `netns` every address, inside a network
 * namespace its caller made (`netns_routes.ts`). Also the private address a load balancer VM's connections leave
 * from: its leg on the load balancer's network. Pure functions.
 *
 * @module
 */
import { addressInPrefix, type IpAddress, parseIp, parsePrefix, prefixContains } from "../../lib/ip_address.ts";
import type { NetworkState } from "../world_state.ts";

/** A data plane that carries traffic. */
export type ActiveDataPlaneMode = "loopback" | "netns";

const LOOPBACK4 = parsePrefix("127.0.0.0/8")!;

/** True for an address of 127.0.0.0/8 or `::1`. */
export function isLoopback(ip: IpAddress): boolean {
  return ip.family === 4 ? prefixContains(LOOPBACK4, ip) : ip.value === 1n;
}

/** Whether a published address is served here, and why not. */
export type Servability = { served: true } | { served: false; reason: string };

/** Whether the data plane listens on the published `address` in `mode`. */
export function servability(address: string, mode: ActiveDataPlaneMode): Servability {
  const ip = parseIp(address);
  if (!ip) return { served: false, reason: `${address} is not an IP address` };
  if (mode === "netns" || isLoopback(ip)) return { served: true };
  return {
    served: false,
    reason: ip.family === 6
      ? "the loopback data plane serves IPv4 only: IPv6 addresses come from 2001:db8::/32 (use --data-plane=netns)"
      : `${ip.text} is outside 127.0.0.0/8: the loopback data plane serves only loopback addresses`,
  };
}

/** Why the data plane may not connect to `address` in `mode`, or undefined when it may. */
export function unreachableReason(address: string, mode: ActiveDataPlaneMode): string | undefined {
  const ip = parseIp(address);
  if (!ip) return `${address} is not an IP address`;
  if (mode === "netns" || isLoopback(ip)) return undefined;
  return `${ip.text} is not a loopback address: the loopback data plane never sends traffic off this machine`;
}

/**
 * The address on `network` that a load balancer VM's connections to a member of family `family` leave from: its leg.
 * IPv4 legs are counted down from the top of the network (VM `vm` of the load balancer with sequence `seq`), away
 * from the servers' addresses, which are allocated from the bottom; the IPv6 leg is the network's ULA /64 with the
 * IPv4 leg in its low 32 bits, as servers' legs are.
 */
export function vmLegAddress(network: NetworkState, vm: { seq: number; index: number }, family: 4 | 6): string {
  const size = 1n << BigInt(32 - network.prefix4.length);
  const usable = size / 2n > 1n ? size / 2n - 1n : 1n;
  const offset = size - 2n - (BigInt(vm.seq * 2 + vm.index) % usable);
  const leg = addressInPrefix(network.prefix4, offset);
  return family === 4 ? leg.text : addressInPrefix(network.prefix6, leg.value).text;
}
