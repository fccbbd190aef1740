/**
 * One shared view of the cloud's servers for every node controller: a complete paginated `list_servers` refreshed
 * on a period (and on demand, at most every few seconds, when a node's server is not found), the interfaces of each
 * server fetched only when the server is new or its `updated_at` changed, and the zone → region map read once (and
 * again only for an unknown zone). For 100 healthy nodes that is one list call per period, whatever the number of
 * NotReady nodes.
 *
 * A server counts as gone only with proof: absent from two consecutive complete lists taken at least
 * `confirmAfterMs` apart. Failed or partial lists prove nothing — the view keeps what it knew.
 *
 * @module
 */
import type { AnkraCloudClient, Interface, Server } from "../cloud/client.ts";
import { isNotFound } from "../cloud/errors.ts";
import * as log from "../log.ts";
import { abortableSleep } from "../runtime/abort.ts";

/** Options of {@linkcode CloudView}. */
export interface CloudViewOptions {
  /** Period of the full list (default 60 s). */
  refreshPeriodMs?: number;
  /** Least time between two on-demand refreshes (default 5 s). */
  minRefreshIntervalMs?: number;
  /** Least time between the two lists that prove a server gone (default 10 s). */
  confirmAfterMs?: number;
}

/** What the view knows of one server. */
interface Known {
  server: Server;
  interfaces?: Interface[];
  interfacesVersion?: string;
}

/** The shared view. */
export class CloudView {
  readonly #cloud: AnkraCloudClient;
  readonly #options: Required<CloudViewOptions>;
  #servers = new Map<string, Known>();
  #byHostname = new Map<string, string[]>();
  /** Ids missing from the last complete list, and when that list was taken. */
  #missing = new Map<string, number>();
  /** Ids proven gone. */
  #gone = new Set<string>();
  #regions = new Map<string, string>();
  #zonesListed = false;
  #unknownZonesTried = new Map<string, number>();
  #lastList = 0;
  /** When a confirming list is due after a server went missing (0: none). */
  #confirmAt = 0;
  /** When each never-listed server id was last asked about. */
  #checkedUnknown = new Map<string, number>();
  #listing?: Promise<boolean>;
  #synced = false;
  readonly #listeners: (() => void)[] = [];

  /** Creates the view; call {@linkcode CloudView.run} to keep it fresh. */
  constructor(cloud: AnkraCloudClient, options: CloudViewOptions = {}) {
    this.#cloud = cloud;
    this.#options = {
      refreshPeriodMs: options.refreshPeriodMs ?? 60_000,
      minRefreshIntervalMs: options.minRefreshIntervalMs ?? 5_000,
      confirmAfterMs: options.confirmAfterMs ?? 10_000,
    };
  }

  /** True after the first complete list. */
  get synced(): boolean {
    return this.#synced;
  }

  /** Calls `listener` after every complete list. */
  onRefresh(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /** The server with `id`, if the last complete list had it. */
  server(id: string): Server | undefined {
    return this.#servers.get(id)?.server;
  }

  /** Servers whose hostname is exactly `hostname`. */
  serversByHostname(hostname: string): Server[] {
    return (this.#byHostname.get(hostname) ?? []).map((id) => this.#servers.get(id)!.server);
  }

  /** True only when the server is proven gone (absent from two complete lists some time apart). */
  isGone(id: string): boolean {
    return this.#gone.has(id);
  }

  /** Lists servers now unless a list ran within the minimum interval; true when a complete list succeeded. */
  refresh(options: { force?: boolean } = {}): Promise<boolean> {
    if (this.#listing) return this.#listing;
    if (!options.force && performance.now() - this.#lastList < this.#options.minRefreshIntervalMs) {
      return Promise.resolve(false);
    }
    this.#listing = this.#list().finally(() => this.#listing = undefined);
    return this.#listing;
  }

  async #list(): Promise<boolean> {
    const started = performance.now();
    let servers: Server[];
    try {
      servers = await this.#cloud.listServers();
    } catch (cause) {
      log.warn("listing servers failed; keeping the last view", { error: cause });
      return false;
    } finally {
      this.#lastList = performance.now();
    }
    const next = new Map<string, Known>();
    const byHostname = new Map<string, string[]>();
    for (const server of servers) {
      const previous = this.#servers.get(server.id);
      const sameVersion = previous && previous.server.updated_at === server.updated_at;
      next.set(server.id, {
        server,
        interfaces: sameVersion ? previous.interfaces : undefined,
        interfacesVersion: sameVersion ? previous.interfacesVersion : undefined,
      });
      const ids = byHostname.get(server.hostname) ?? [];
      ids.push(server.id);
      byHostname.set(server.hostname, ids);
      this.#missing.delete(server.id);
      this.#gone.delete(server.id);
    }
    let confirmSoon = false;
    for (const id of this.#servers.keys()) {
      if (!next.has(id) && !this.#missing.has(id)) {
        this.#missing.set(id, started);
        confirmSoon = true;
      }
    }
    // Missing from an earlier complete list and still missing from this one, some time later: gone.
    for (const [id, since] of this.#missing) {
      if (started - since >= this.#options.confirmAfterMs) this.#gone.add(id);
    }
    this.#servers = next;
    this.#byHostname = byHostname;
    this.#synced = true;
    if (confirmSoon) this.#confirmAt = started + this.#options.confirmAfterMs;
    for (const listener of this.#listeners) listener();
    return true;
  }

  /**
   * For a server id the view has never listed: asks the API once per refresh period. A 404 proves it gone; a found
   * server joins the view. Errors prove nothing.
   */
  async checkUnknown(id: string): Promise<void> {
    if (this.#servers.has(id) || this.#gone.has(id)) return;
    const checked = this.#checkedUnknown.get(id);
    if (checked !== undefined && performance.now() - checked < this.#options.refreshPeriodMs) return;
    this.#checkedUnknown.set(id, performance.now());
    try {
      const server = await this.#cloud.getServer(id);
      this.#servers.set(id, { server });
      const ids = this.#byHostname.get(server.hostname) ?? [];
      this.#byHostname.set(server.hostname, [...ids, id]);
    } catch (cause) {
      if (isNotFound(cause)) this.#gone.add(id);
      else log.warn("could not check a server", { server: id, error: cause });
    }
  }

  /** The server's interfaces, fetched when new or changed. */
  async interfaces(id: string): Promise<Interface[]> {
    const known = this.#servers.get(id);
    if (known?.interfaces) return known.interfaces;
    const interfaces = await this.#cloud.listServerInterfaces(id);
    if (known) {
      known.interfaces = interfaces;
      known.interfacesVersion = known.server.updated_at;
    }
    return interfaces;
  }

  /** The zone's region; `list_zones` runs once, and again (at most every 10 minutes) for an unknown zone. */
  async region(zone: string): Promise<string | undefined> {
    const known = this.#regions.get(zone);
    if (known) return known;
    const tried = this.#unknownZonesTried.get(zone);
    if (this.#zonesListed && tried !== undefined && performance.now() - tried < 600_000) return undefined;
    const zones = await this.#cloud.listZones();
    this.#zonesListed = true;
    for (const z of zones) this.#regions.set(z.name, z.region);
    if (!this.#regions.has(zone)) {
      this.#unknownZonesTried.set(zone, performance.now());
      log.info(2, "zone is not listed; the node gets no region label", { zone });
    }
    return this.#regions.get(zone);
  }

  /** Keeps the view fresh until `signal` aborts: a list every period, and a confirming list after a disappearance. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.refresh({ force: true });
      const now = performance.now();
      const next = this.#confirmAt > now
        ? Math.min(this.#confirmAt - now + 50, this.#options.refreshPeriodMs)
        : this.#options.refreshPeriodMs;
      this.#confirmAt = 0;
      await abortableSleep(next, signal).catch(() => {});
    }
  }
}
