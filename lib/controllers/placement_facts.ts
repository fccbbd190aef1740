/**
 * The facts a new load balancer's placement needs, read at most every ten minutes however many Services are created:
 * a zone's capabilities (can it hold an HA pair?) and the account's private networks (which one do the nodes share?).
 * A zone whose capabilities the API will not tell (404, 405, 401, 403) is `unknown`, as the Go controller treats it.
 *
 * @module
 */
import type { AnkraCloudClient, Network, ZoneCapabilities } from "../cloud/client.ts";
import { CloudApiError } from "../cloud/errors.ts";

/** Options of {@linkcode PlacementFacts}. */
export interface PlacementFactsOptions {
  /** How long a fact is trusted (default 10 minutes). */
  ttlMs?: number;
}

/** Cached placement facts. */
export class PlacementFacts {
  readonly #cloud: AnkraCloudClient;
  readonly #ttlMs: number;
  readonly #capabilities = new Map<string, { at: number; value: Promise<ZoneCapabilities | "unknown"> }>();
  #networks?: { at: number; value: Promise<Network[]> };

  /** Creates an empty cache. */
  constructor(cloud: AnkraCloudClient, options: PlacementFactsOptions = {}) {
    this.#cloud = cloud;
    this.#ttlMs = options.ttlMs ?? 600_000;
  }

  /** The zone's capabilities, or `unknown`. Concurrent callers share one request. */
  capabilities(zone: string, signal?: AbortSignal): Promise<ZoneCapabilities | "unknown"> {
    const cached = this.#capabilities.get(zone);
    if (cached && performance.now() - cached.at < this.#ttlMs) return cached.value;
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

  /** The account's private networks. Concurrent callers share one list. */
  networks(signal?: AbortSignal): Promise<Network[]> {
    if (this.#networks && performance.now() - this.#networks.at < this.#ttlMs) return this.#networks.value;
    const value = this.#cloud.listNetworks(signal).then((listed) => listed.items);
    value.catch(() => (this.#networks = undefined));
    this.#networks = { at: performance.now(), value };
    return value;
  }
}
