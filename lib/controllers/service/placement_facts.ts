/**
 * The facts a load balancer's placement needs, read at most every ten minutes however many Services are created:
 * a zone's capabilities (can it hold an HA pair?) and the account's private networks with the servers' legs on them
 * (which one do the nodes share, and what is each node's address there?), and the servers' public IPv6 addresses
 * (the IPv6 member address of a server without a leg there). (Node-address mode reads the servers' public addresses in
 * the shared cloud view instead, which lists them every `--server-list-period`.) A caller that found a node without an address asks
 * again with a short `maxAgeMs`, so a server attached (or created) since is seen on the next look. A zone whose capabilities
 * the API will not tell (404, 405, 401, 403) is `unknown`, as the Go controller treats it.
 *
 * @module
 */
import type { AnkraCloudClient, Network, ZoneCapabilities } from "../../cloud/client.ts";
import { CloudApiError, isNotFound } from "../../cloud/errors.ts";
import { DEFAULTS } from "../../defaults.ts";

/** Options of {@linkcode PlacementFacts}. */
interface PlacementFactsOptions {
  /** How long a fact is trusted (default 10 minutes). */
  ttlMs?: number;
}

/** How old a cached fact may be for this read. */
interface Freshness {
  /** Oldest acceptable age, milliseconds (default: the cache's TTL). */
  maxAgeMs?: number;
}

interface Cached<T> {
  at: number;
  value: Promise<T>;
}

/** Cached placement facts. */
export class PlacementFacts {
  readonly #cloud: Pick<AnkraCloudClient, "getZoneCapabilities" | "listNetworks" | "getNetwork" | "listServers">;
  readonly #ttlMs: number;
  readonly #capabilities = new Map<string, Cached<ZoneCapabilities | "unknown">>();
  #networks?: Cached<Network[]>;
  readonly #network = new Map<string, Cached<Network | undefined>>();
  #listed?: Cached<Map<string, string>>;

  /** Creates an empty cache. */
  constructor(
    cloud: Pick<AnkraCloudClient, "getZoneCapabilities" | "listNetworks" | "getNetwork" | "listServers">,
    options: PlacementFactsOptions = {},
  ) {
    this.#cloud = cloud;
    const { ttlMs = DEFAULTS.placementFactsTtlMs } = options;
    this.#ttlMs = ttlMs;
  }

  #fresh<T>(cached: Cached<T> | undefined, freshness: Freshness): cached is Cached<T> {
    return cached !== undefined &&
      performance.now() - cached.at < Math.min(this.#ttlMs, freshness.maxAgeMs ?? Infinity);
  }

  /** The zone's capabilities, or `unknown`. Concurrent callers share one request. */
  capabilities(zone: string, signal?: AbortSignal): Promise<ZoneCapabilities | "unknown"> {
    const cached = this.#capabilities.get(zone);
    if (this.#fresh(cached, {})) return cached.value;
    const value = this.#cloud.getZoneCapabilities(zone, signal).catch((cause): "unknown" => {
      const unknown = cause instanceof CloudApiError && [401, 403, 404, 405].includes(cause.status ?? 0);
      if (!unknown) {
        this.#capabilities.delete(zone);
        throw new Error(`get the capabilities of zone ${zone}: ${(cause as Error).message}`, { cause });
      }
      return "unknown";
    });
    this.#capabilities.set(zone, { at: performance.now(), value });
    return value;
  }

  /**
   * The account's private networks, each with the servers' legs on it (`list_networks`, then `get_network` of each).
   * Concurrent callers share one read.
   */
  networks(freshness: Freshness = {}): Promise<Network[]> {
    if (this.#fresh(this.#networks, freshness)) return this.#networks.value;
    const value = this.#cloud.listNetworks().then((listed) =>
      Promise.all(listed.items.map((network) => this.#cloud.getNetwork(network.id)))
    );
    value.catch(() => (this.#networks = undefined));
    this.#networks = { at: performance.now(), value };
    return value;
  }

  /** One network with the servers' legs on it (`get_network`); undefined when the account has no such network. */
  network(id: string, freshness: Freshness = {}): Promise<Network | undefined> {
    const cached = this.#network.get(id);
    if (this.#fresh(cached, freshness)) return cached.value;
    const value = this.#cloud.getNetwork(id).catch((cause) => {
      if (isNotFound(cause)) return undefined;
      this.#network.delete(id);
      throw new Error(`get network ${id}: ${(cause as Error).message}`, { cause });
    });
    this.#network.set(id, { at: performance.now(), value });
    return value;
  }

  /**
   * Each server's `public_ipv6` by server id (`list_servers`, every page; servers without one are absent).
   * Concurrent callers share one read.
   */
  publicIpv6(freshness: Freshness = {}): Promise<Map<string, string>> {
    if (this.#fresh(this.#listed, freshness)) return this.#listed.value;
    const value = this.#cloud.listServers().then((listed) =>
      new Map(
        listed.items.flatMap((server): [string, string][] =>
          server.public_ipv6 ? [[server.id, server.public_ipv6]] : []
        ),
      )
    );
    value.catch(() => (this.#listed = undefined));
    this.#listed = { at: performance.now(), value };
    return value;
  }
}
