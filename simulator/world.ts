/**
 * The simulator's world: zones, networks, servers, tokens, operations and the address pools, with a clock that
 * drives life cycles. Time-driven transitions (a load balancer becoming `running`, an edge sync finishing) are
 * applied lazily by {@linkcode World.tick} on every request, so the simulator needs no timers.
 *
 * The shapes of the state are in `world_state.ts` and the API documents rendered from it in `world_documents.ts`;
 * load balancers and edges live in their own modules and keep their state here.
 *
 * @module
 */
import {
  addressInPrefix,
  formatIpv4,
  type IpAddress,
  type IpPrefix,
  parseIp,
  parsePrefix,
  prefixContains,
} from "../lib/ip_address.ts";
import { advanceOperations, newOperation, type OperationTimeline } from "./operation_clock.ts";
import { badRequest, conflict, notFound, ProblemError } from "./problem.ts";
import type { Seed, SeedCertificate, SeedServer, SimulatorSettings } from "./seed.ts";
import type {
  InterfaceState,
  NetworkState,
  OperationState,
  ServerState,
  TokenState,
  ZoneState,
} from "./world_state.ts";

/** The world. */
export class World {
  /** Timings and limits (the control API changes them). */
  settings: SimulatorSettings;
  readonly zones = new Map<string, ZoneState>();
  readonly networks = new Map<string, NetworkState>();
  readonly servers = new Map<string, ServerState>();
  readonly operations = new Map<string, OperationState>();
  readonly tokens = new Map<string, TokenState>();
  /** The account's load balancer certificates by id; undefined when the seed lists none (any id is accepted). */
  readonly certificates: ReadonlyMap<string, SeedCertificate> | undefined;
  readonly #clock: () => number;
  #seq = 0;
  #ipv6Pool = 0;
  #ipv4Pool = 0;

  /** Creates a world from a parsed seed. */
  constructor(seed: Seed, options: { clock?: () => number } = {}) {
    this.#clock = options.clock ?? Date.now;
    this.settings = { ...seed.settings } as SimulatorSettings;
    this.certificates = seed.certificates ? new Map(seed.certificates.map((c) => [c.id, c])) : undefined;
    for (const token of seed.tokens) this.tokens.set(token.token, { token: token.token, scope: token.scope });
    for (const zone of seed.zones) {
      this.zones.set(zone.name, {
        name: zone.name,
        region: zone.region,
        display_name: zone.display_name ?? zone.name,
        position: zone.position ?? this.zones.size * 10,
        compute_nodes: zone.compute_nodes,
        servers: zone.servers ?? zone.compute_nodes,
        storage_backends: zone.storage_backends,
        created_at: this.isoNow(),
      });
    }
    for (const network of seed.networks) this.addNetwork(network);
    for (const server of seed.servers) this.addServer(server);
  }

  /** The clock, milliseconds. */
  now(): number {
    return this.#clock();
  }

  /** The clock as an RFC 3339 string. */
  isoNow(offsetMs = 0): string {
    return new Date(this.#clock() + offsetMs).toISOString();
  }

  /** A new id `prefix-<sequence>`; ids of one kind sort in creation order. */
  newId(prefix: string): { id: string; seq: number } {
    const seq = ++this.#seq;
    return { id: `${prefix}-${seq.toString(36).padStart(6, "0")}`, seq };
  }

  /** Applies every start, step and finish of an operation whose time has come (`operation_clock.ts`). */
  tick(): void {
    advanceOperations(this.operations.values(), this.now());
  }

  /** Starts an operation about a load balancer, an edge or a server, unfolding as `timeline` says. */
  startOperation(
    kind: string,
    options: OperationTimeline & { loadBalancerId?: string; edgeId?: string; serverId?: string },
  ): OperationState {
    const { id, seq } = this.newId("op");
    const op = newOperation({ id, seq, kind }, options, options, this.now());
    this.operations.set(id, op);
    return op;
  }

  // --- address pools ---------------------------------------------------------------------------------------------

  /** A fresh public /64 and its first address (documentation range 2001:db8::/32). */
  allocatePublicIpv6(): { address: string; prefix: string } {
    const n = ++this.#ipv6Pool;
    const prefix = parsePrefix(`2001:db8:${(n >> 16).toString(16)}:${(n & 0xffff).toString(16)}::/64`)!;
    return { address: addressInPrefix(prefix, 1n).text, prefix: `${addressInPrefix(prefix, 0n).text}/64` };
  }

  /**
   * A fresh public IPv4: from `public_ipv4_ranges` in order (the documentation ranges 203.0.113.0/24, then
   * 198.51.100.0/24, by default; each range's first and last address skipped); with the `loopback` data plane from
   * `loopback_ipv4_range` (127.203.113.0/24 by default), so the address can be served on this machine.
   */
  allocatePublicIpv4(): string {
    if (this.settings.data_plane === "loopback") {
      const range = parsePrefix(this.settings.loopback_ipv4_range)!;
      const offset = BigInt(this.#ipv4Pool + 1);
      if (offset >= (1n << BigInt(32 - range.length)) - 1n) {
        throw new ProblemError(503, `no public IPv4 address is free in ${this.settings.loopback_ipv4_range}`);
      }
      this.#ipv4Pool++;
      return addressInPrefix(range, offset).text;
    }
    let n = this.#ipv4Pool;
    for (const text of this.settings.public_ipv4_ranges) {
      const range = parsePrefix(text)!;
      const hosts = Number((1n << BigInt(32 - range.length)) - 2n);
      if (n < hosts) {
        this.#ipv4Pool++;
        return addressInPrefix(range, BigInt(n + 1)).text;
      }
      n -= hosts;
    }
    throw new ProblemError(503, "no public IPv4 address is free");
  }

  /** How many public IPv4 addresses are still free (of the first range's hosts, as zone capabilities report). */
  publicIpv4Free(): number {
    const first = parsePrefix(this.settings.public_ipv4_ranges[0])!;
    return Math.max(0, Number((1n << BigInt(32 - first.length)) - 2n) - this.#ipv4Pool);
  }

  // --- zones -----------------------------------------------------------------------------------------------------

  /** The zone or a 404. */
  zone(name: string): ZoneState {
    const zone = this.zones.get(name);
    if (!zone) throw notFound("zone", name);
    return zone;
  }

  /** Zones in listing order. */
  listZones(): ZoneState[] {
    return [...this.zones.values()].sort((a, b) => a.position - b.position || a.name.localeCompare(b.name));
  }

  // --- networks --------------------------------------------------------------------------------------------------

  /**
   * Adds a network; its zone must exist, its CIDR must be RFC 1918 /16–/29 (or, with the `loopback` data plane, inside
   * 127.0.0.0/8, so its members can be local listeners) and its ULA prefix a /64.
   */
  addNetwork(input: { id: string; name: string; zone: string; zones?: string[]; cidr: string; ula_prefix: string }) {
    const zone = this.zone(input.zone);
    const prefix4 = parsePrefix(input.cidr);
    const loopback = this.settings.data_plane === "loopback";
    if (
      !prefix4 || prefix4.family !== 4 || prefix4.length < 16 || prefix4.length > 29 ||
      !(isPrivateIpv4(prefix4) || (loopback && isLoopbackIpv4(prefix4)))
    ) {
      throw badRequest(
        `network ${input.id}: cidr must be an RFC 1918 IPv4 prefix from /16 to /29` +
          (loopback ? " (or one inside 127.0.0.0/8 with the loopback data plane)" : ""),
      );
    }
    const prefix6 = parsePrefix(input.ula_prefix);
    if (!prefix6 || prefix6.family !== 6 || prefix6.length !== 64) {
      throw badRequest(`network ${input.id}: ula_prefix must be an IPv6 /64`);
    }
    if (this.networks.has(input.id)) throw conflict(`network ${input.id} already exists`);
    const { seq } = this.newId("net");
    const zones = input.zones ??
      [...this.zones.values()].filter((z) => z.region === zone.region).map((z) => z.name).sort();
    const network: NetworkState = {
      id: input.id,
      name: input.name,
      zone: zone.name,
      region: zone.region,
      zones,
      cidr: `${formatIpv4(prefix4.network)}/${prefix4.length}`,
      ula_prefix: `${addressInPrefix(prefix6, 0n).text}/64`,
      gateway: addressInPrefix(prefix4, 1n).text,
      prefix4,
      prefix6,
      created_at: this.isoNow(),
      seq,
    };
    this.networks.set(network.id, network);
    return network;
  }

  /** The network or a 404. */
  network(networkId: string): NetworkState {
    const network = this.networks.get(networkId);
    if (!network) throw notFound("network", networkId);
    return network;
  }

  /** True when `ip` is a usable host address of the network (not the network, broadcast or gateway address). */
  isNetworkHost(network: NetworkState, ip: IpAddress): boolean {
    if (ip.family !== 4 || !prefixContains(network.prefix4, ip)) return false;
    const size = 1n << BigInt(32 - network.prefix4.length);
    const offset = ip.value - network.prefix4.network;
    return offset > 1n && offset < size - 1n;
  }

  /** The leg's ULA address: the network's /64 with the IPv4 address in the low 32 bits. */
  address6For(network: NetworkState, address: string): string {
    return addressInPrefix(network.prefix6, parseIp(address)!.value).text;
  }

  #allocateNetworkAddress(network: NetworkState): string {
    const used = new Set(
      [...this.servers.values()].flatMap((s) => s.interfaces).filter((i) => i.network_id === network.id)
        .map((i) => i.address),
    );
    const size = 1n << BigInt(32 - network.prefix4.length);
    for (let offset = 10n; offset < size - 1n; offset++) {
      const candidate = addressInPrefix(network.prefix4, offset).text;
      if (!used.has(candidate)) return candidate;
    }
    throw new ProblemError(503, `network ${network.id} has no free address`);
  }

  // --- servers ---------------------------------------------------------------------------------------------------

  /** Adds a server (seed or control API); allocates what is not given. */
  addServer(input: SeedServer): ServerState {
    const zone = this.zone(input.zone);
    const { id: generated, seq } = this.newId("srv");
    const id = input.id ?? generated;
    if (this.servers.has(id)) throw conflict(`server ${id} already exists`);
    const publicIpv6 = input.public_ipv6 === undefined ? this.allocatePublicIpv6() : null;
    let ipv6Text = publicIpv6?.address ?? null;
    let ipv6Prefix = publicIpv6?.prefix ?? null;
    if (input.public_ipv6) ({ address: ipv6Text, prefix: ipv6Prefix } = publicIpv6Of(id, input.public_ipv6));
    if (input.public_ipv4) publicIpv4Of(id, input.public_ipv4);
    const server: ServerState = {
      id,
      zone: zone.name,
      hostname: input.hostname,
      title: input.title ?? input.hostname,
      plan: input.plan,
      state: input.state,
      public_ipv4: input.public_ipv4 ?? null,
      public_ipv6: ipv6Text,
      public_ipv6_prefix: ipv6Prefix,
      public_ipv6_is_private: input.public_ipv6_is_private ?? false,
      ipv6_renumber_available: input.ipv6_renumber_available ?? false,
      labels: { ...input.labels },
      mac_address: macFor(seq, 0),
      created_at: this.isoNow(),
      updated_at: this.isoNow(),
      interfaces: [],
      active_operation: null,
      seq,
    };
    this.servers.set(id, server);
    try {
      this.setInterfaces(server, input.interfaces);
    } catch (cause) {
      this.servers.delete(id);
      throw cause;
    }
    return server;
  }

  /**
   * Changes a server's public addresses, as Ankra Cloud changes them under a running server: the IPv4 add-on bought
   * (`public_ipv4`: an address) or released (`null`); the server's /64 renumbered (`public_ipv6`: an address of the new
   * /64, which becomes `public_ipv6_prefix`) or removed (`null`). A renumbered /64 no longer comes from a pool being
   * drained, so `ipv6_renumber_available` turns false unless the change sets it; it can also be set alone (the server's
   * /64 is now in a pool being drained). Throws a 400 naming the field for an address of the wrong family.
   */
  changePublicAddresses(
    server: ServerState,
    change: { public_ipv4?: string | null; public_ipv6?: string | null; ipv6_renumber_available?: boolean },
  ): void {
    const given = <T>(value: string | null | undefined, read: (id: string, text: string) => T) =>
      value === undefined || value === null ? value : read(server.id, value);
    const ipv4 = given(change.public_ipv4, publicIpv4Of);
    const ipv6 = given(change.public_ipv6, publicIpv6Of);
    if (ipv4 !== undefined) server.public_ipv4 = ipv4;
    if (ipv6 !== undefined) {
      server.public_ipv6 = ipv6?.address ?? null;
      server.public_ipv6_prefix = ipv6?.prefix ?? null;
      server.ipv6_renumber_available = false;
    }
    if (change.ipv6_renumber_available !== undefined) server.ipv6_renumber_available = change.ipv6_renumber_available;
  }

  /** Replaces a server's network legs (at most 7; one per network). */
  setInterfaces(server: ServerState, legs: { network_id: string; address?: string }[]): void {
    if (legs.length > 7) throw badRequest(`server ${server.id}: at most 7 interfaces`);
    const seen = new Set<string>();
    const interfaces: InterfaceState[] = [];
    server.interfaces = [];
    legs.forEach((leg, index) => {
      const network = this.network(leg.network_id);
      if (seen.has(network.id)) throw badRequest(`server ${server.id}: two interfaces on network ${network.id}`);
      seen.add(network.id);
      let address = leg.address;
      if (address !== undefined) {
        const ip = parseIp(address);
        if (!ip || !this.isNetworkHost(network, ip)) {
          throw badRequest(`server ${server.id}: ${address} is not a host address of ${network.cidr}`);
        }
        address = ip.text;
      } else {
        address = this.#allocateNetworkAddress(network);
      }
      interfaces.push({
        id: `${server.id}-nic${index}`,
        server_id: server.id,
        network_id: network.id,
        address,
        address6: this.address6For(network, address),
        mac_address: macFor(server.seq, index + 1),
        device_index: index + 1,
      });
      server.interfaces = interfaces;
    });
  }

  /** The server or a 404. */
  server(serverId: string): ServerState {
    const server = this.servers.get(serverId);
    if (!server) throw notFound("server", serverId);
    return server;
  }

  /** True when `address` is some server's public IPv6 (allowed as a member address even when it is a ULA). */
  isServerPublicIpv6(ip: IpAddress): boolean {
    return [...this.servers.values()].some((s) => s.public_ipv6 && parseIp(s.public_ipv6)?.text === ip.text);
  }
}

/** `text` as server `id`'s public IPv6 (canonical) and its /64, or a 400 naming the field. */
function publicIpv6Of(id: string, text: string): { address: string; prefix: string } {
  const ip = parseIp(text);
  if (!ip || ip.family !== 6) throw badRequest(`server ${id}: public_ipv6 must be an IPv6 address, not "${text}"`);
  return { address: ip.text, prefix: `${addressInPrefix(parsePrefix(`${ip.text}/64`)!, 0n).text}/64` };
}

/** `text` as server `id`'s public IPv4 (canonical), or a 400 naming the field. */
function publicIpv4Of(id: string, text: string): string {
  const ip = parseIp(text);
  if (!ip || ip.family !== 4) throw badRequest(`server ${id}: public_ipv4 must be an IPv4 address, not "${text}"`);
  return ip.text;
}

function isPrivateIpv4(prefix: IpPrefix): boolean {
  const ranges = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"].map((r) => parsePrefix(r)!);
  const network = parseIp(formatIpv4(prefix.network))!;
  return ranges.some((range) => prefix.length >= range.length && prefixContains(range, network));
}

function isLoopbackIpv4(prefix: IpPrefix): boolean {
  return prefix.length >= 8 && prefixContains(parsePrefix("127.0.0.0/8")!, parseIp(formatIpv4(prefix.network))!);
}

function macFor(seq: number, index: number): string {
  const bytes = [0x02, 0xa7, (seq >> 16) & 0xff, (seq >> 8) & 0xff, seq & 0xff, index & 0xff];
  return bytes.map((b) => b.toString(16).padStart(2, "0")).join(":");
}
