/**
 * One shared view of the cloud's servers for every node controller: a complete paginated `list_servers` refreshed
 * on a period (and on demand, at most every few seconds, when a node's server is not found), the interfaces of each
 * server fetched only when the server is new or its `updated_at` changed, and the zone → region map read once (and
 * again only for an unknown zone). For 100 healthy nodes that is one list call per period, whatever the number of
 * NotReady nodes.
 *
 * Each server's active operation comes with the list: {@linkcode CloudView.plannedChange} tells whether a node's
 * server is about to stop, be deleted or be live-migrated (`provider/node/planned_change.ts`), and since when this
 * view has known it — at no cost beyond the list.
 *
 * A server counts as gone only with proof: absent from two consecutive complete lists taken at least
 * `confirmAfterMs` apart. Failed or partial lists prove nothing — the view keeps what it knew. A server whose list
 * item had the wrong shape is not absent: the view keeps what it knew of it, and an item without a readable id makes
 * that list prove nothing.
 *
 * @module
 */
import type { AnkraCloudClient, Interface, Server } from "../../cloud/client.ts";
import { isNotFound } from "../../cloud/errors.ts";
import * as log from "../../log.ts";
import {
  plannedChange as serverPlannedChange,
  plannedChangeOfNode,
  type SeenPlannedChange,
  serverLeaving,
} from "../../provider/node/planned_change.ts";
import { parseProviderId } from "../../provider/provider_id.ts";
import { matchServer, type ServerMatch } from "../../provider/server_match.ts";
import { abortableSleep } from "../../runtime/abort.ts";
import { forEachParallel } from "../../runtime/parallel.ts";
import { DEFAULTS } from "../../defaults.ts";

/** Options of {@linkcode CloudView}. */
interface CloudViewOptions {
  /** Period of the full list (default 60 s). */
  refreshPeriodMs?: number;
  /** Least time between two on-demand refreshes (default 5 s). */
  minRefreshIntervalMs?: number;
  /** Least time between the two lists that prove a server gone (default 10 s). */
  confirmAfterMs?: number;
}

/** Above this many servers without interfaces, they are read from the networks in bulk. */
const BULK_INTERFACES_FROM = 10;

/** What the view knows of one server. */
interface Known {
  server: Server;
  interfaces?: Interface[];
  interfacesVersion?: string;
}

/** The shared view. */
export class CloudView {
  readonly #cloud: AnkraCloudClient;
  readonly #timing: Required<CloudViewOptions>;
  #servers = new Map<string, Known>();
  #byHostname = new Map<string, string[]>();
  /** Ids missing from the last complete list, and when that list was taken. */
  #missing = new Map<string, number>();
  /** Ids proven gone. */
  #gone = new Set<string>();
  #regions = new Map<string, string>();
  #zonesListed = false;
  #unknownZonesTried = new Map<string, number>();
  #listingZones?: Promise<void>;
  #lastList = 0;
  /** When a confirming list is due after a server went missing (0: none). */
  #confirmAt = 0;
  /** When each never-listed server id was last asked about. */
  #checkedUnknown = new Map<string, number>();
  #listing?: Promise<boolean>;
  readonly #fetchingInterfaces = new Map<string, Promise<Interface[]>>();
  #synced = false;
  readonly #listeners: (() => void)[] = [];
  /** When the view first saw each announcing operation it still holds (epoch ms), by operation id. */
  #operationsSeen = new Map<string, number>();

  /** Creates the view; call {@linkcode CloudView.run} to keep it fresh. */
  constructor(cloud: AnkraCloudClient, options: CloudViewOptions = {}) {
    this.#cloud = cloud;
    const {
      refreshPeriodMs = DEFAULTS.serverListPeriodMs,
      minRefreshIntervalMs = DEFAULTS.serverListMinIntervalMs,
      confirmAfterMs = DEFAULTS.serverGoneConfirmMs,
    } = options;
    this.#timing = { refreshPeriodMs, minRefreshIntervalMs, confirmAfterMs };
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

  /**
   * The node's server as far as the view knows it, by the one matching rule ({@linkcode matchServer}: providerID,
   * else a unique hostname) the doctor uses too.
   */
  match(node: { name: string; providerID?: string }): ServerMatch<Server> {
    return matchServer(node, { byId: (id) => this.server(id), byHostname: (name) => this.serversByHostname(name) });
  }

  /**
   * The change the active operation of `node`'s server (by its providerID) announces — a stop or delete (`leaving`),
   * a live migration (`migrating`) — as the last list or read had it, with when this view first saw the operation;
   * undefined when there is none, or the view does not hold the server. Costs no call.
   */
  plannedChange(node: { providerID?: string }): SeenPlannedChange | undefined {
    const change = plannedChangeOfNode(node, this);
    if (!change) return undefined;
    return { ...change, seenAtMs: this.#operationsSeen.get(change.operationId) ?? Date.now() };
  }

  /**
   * True when `node`'s server (by its providerID) leaves whatever it serves, by the one rule ({@linkcode serverLeaving}:
   * its stop or delete announced, or the server `stopping`, `stopped` or `deleting`) as the last list or read had it —
   * even while its Node still says Ready. False when the view does not hold the server. Costs no call.
   */
  leaving(node: { providerID?: string }): boolean {
    const id = parseProviderId(node.providerID ?? "")?.serverId;
    const server = id === undefined ? undefined : this.server(id);
    return server !== undefined && serverLeaving(server);
  }

  /** Remembers when each announcing operation was first seen; forgets those no server holds any more. */
  #noteOperations(): void {
    const now = Date.now();
    const seen = new Map<string, number>();
    for (const { server } of this.#servers.values()) {
      const change = serverPlannedChange(server);
      if (change) seen.set(change.operationId, this.#operationsSeen.get(change.operationId) ?? now);
    }
    this.#operationsSeen = seen;
  }

  /** True only when the server is proven gone (absent from two complete lists some time apart). */
  isGone(id: string): boolean {
    return this.#gone.has(id);
  }

  /** Lists servers now unless a list ran within the minimum interval; true when a complete list succeeded. */
  refresh(options: { force?: boolean } = {}): Promise<boolean> {
    if (this.#listing) return this.#listing;
    if (!options.force && performance.now() - this.#lastList < this.#timing.minRefreshIntervalMs) {
      return Promise.resolve(false);
    }
    this.#listing = this.#list().finally(() => this.#listing = undefined);
    return this.#listing;
  }

  async #list(): Promise<boolean> {
    const started = performance.now();
    let servers: Server[];
    let unreadable: Set<string>;
    let provesAbsence: boolean;
    try {
      const listed = await this.#cloud.listServers();
      servers = listed.items;
      unreadable = new Set(listed.skipped.flatMap((item) => (item.id ? [item.id] : [])));
      provesAbsence = listed.skipped.every((item) => item.id !== undefined);
    } catch (cause) {
      log.warn("listing servers failed; keeping the last view", { error: cause });
      return false;
    } finally {
      this.#lastList = performance.now();
    }
    const next = new Map<string, Known>();
    for (const server of servers) {
      const previous = this.#servers.get(server.id);
      const sameVersion = previous && previous.server.updated_at === server.updated_at;
      next.set(server.id, {
        server,
        interfaces: sameVersion ? previous.interfaces : undefined,
        interfacesVersion: sameVersion ? previous.interfacesVersion : undefined,
      });
      this.#missing.delete(server.id);
      this.#gone.delete(server.id);
    }
    // Listed, but not readable this time: what was known of it stays.
    for (const id of unreadable) {
      const previous = this.#servers.get(id);
      if (previous && !next.has(id)) next.set(id, previous);
    }
    const byHostname = new Map<string, string[]>();
    for (const [id, { server }] of next) {
      byHostname.set(server.hostname, [...(byHostname.get(server.hostname) ?? []), id]);
    }
    let confirmSoon = false;
    for (const id of provesAbsence ? this.#servers.keys() : []) {
      if (!next.has(id) && !this.#missing.has(id)) {
        this.#missing.set(id, started);
        confirmSoon = true;
      }
    }
    // Missing from an earlier complete list and still missing from this one, some time later: gone.
    for (const [id, since] of provesAbsence ? this.#missing : []) {
      if (!next.has(id) && started - since >= this.#timing.confirmAfterMs) this.#gone.add(id);
    }
    this.#servers = next;
    this.#byHostname = byHostname;
    this.#noteOperations();
    this.#synced = true;
    if (confirmSoon) this.#confirmAt = started + this.#timing.confirmAfterMs;
    for (const listener of this.#listeners) listener();
    return true;
  }

  /**
   * For a server id the view has never listed: asks the API once per refresh period. A 404 proves it gone; a found
   * server joins the view. Errors prove nothing. Resolves to whether the API was asked.
   */
  async checkUnknown(id: string): Promise<boolean> {
    if (this.#servers.has(id) || this.#gone.has(id)) return false;
    const checked = this.#checkedUnknown.get(id);
    if (checked !== undefined && performance.now() - checked < this.#timing.refreshPeriodMs) return false;
    this.#checkedUnknown.set(id, performance.now());
    try {
      const server = await this.#cloud.getServer(id);
      this.#servers.set(id, { server });
      const ids = this.#byHostname.get(server.hostname) ?? [];
      this.#byHostname.set(server.hostname, [...ids, id]);
      this.#noteOperations();
    } catch (cause) {
      if (isNotFound(cause)) this.#gone.add(id);
      else log.warn("could not check a server", { server: id, error: cause });
    }
    return true;
  }

  /** The server's interfaces, fetched when new or changed (callers asking at the same time share one request). */
  interfaces(id: string): Promise<Interface[]> {
    const known = this.#servers.get(id);
    if (known?.interfaces) return Promise.resolve(known.interfaces);
    const pending = this.#fetchingInterfaces.get(id);
    if (pending) return pending;
    const fetching = this.#cloud.listServerInterfaces(id).then((interfaces) => {
      const current = this.#servers.get(id);
      if (current) {
        current.interfaces = interfaces;
        current.interfacesVersion = current.server.updated_at;
      }
      return interfaces;
    }).finally(() => this.#fetchingInterfaces.delete(id));
    this.#fetchingInterfaces.set(id, fetching);
    return fetching;
  }

  /**
   * Reads the interfaces of `ids` (the servers of every node still joining) ahead of the nodes' own passes — for a
   * burst of joining nodes. A few are read one by one (side by side); many at once come from the networks instead:
   * one `list_networks` and one `get_network` per network hold every server's legs, so a thousand joining nodes cost
   * a handful of calls, not a thousand.
   * Failures are left to the node's own pass.
   */
  async prefetchInterfaces(ids: string[], concurrency = 8): Promise<void> {
    const queue = ids.filter((id) => this.#servers.has(id) && !this.#servers.get(id)!.interfaces);
    // The burst is every joining node's server, also those whose legs an earlier window already read: nodes that
    // trickle in over a few windows still make one burst, not a read per node.
    if (ids.length > BULK_INTERFACES_FROM && queue.length > 0) {
      if (await this.#interfacesFromNetworks().catch(() => false)) return;
    }
    await forEachParallel(queue, concurrency, (id) => this.interfaces(id).then(() => {}, () => {}));
  }

  /** Fills every known server's interfaces from the networks' member lists; true when every network was read. */
  async #interfacesFromNetworks(): Promise<boolean> {
    const listed = await this.#cloud.listNetworks();
    if (listed.skipped.length > 0) return false;
    const legs = new Map<string, Interface[]>();
    const networks = await Promise.all(listed.items.map((n) => this.#cloud.getNetwork(n.id)));
    for (const network of networks) {
      for (const leg of network.members ?? []) legs.set(leg.server_id, [...(legs.get(leg.server_id) ?? []), leg]);
    }
    for (const [id, known] of this.#servers) {
      if (known.interfaces) continue;
      // In device order, as list_server_interfaces gives them; a server on no network has none.
      known.interfaces = (legs.get(id) ?? []).sort((a, b) => (a.device_index ?? 0) - (b.device_index ?? 0));
      known.interfacesVersion = known.server.updated_at;
    }
    return true;
  }

  /**
   * Reads the servers `ids` again now (a node just went NotReady: is its server shut down?): one `get_server` each
   * when they are few, else one complete list. A 404 proves a server gone; other errors prove nothing.
   */
  async refreshServers(ids: string[]): Promise<void> {
    if (ids.length > 5) {
      await this.refresh();
      return;
    }
    await Promise.all(ids.map(async (id) => {
      try {
        const server = await this.#cloud.getServer(id);
        const known = this.#servers.get(id);
        const sameVersion = known && known.server.updated_at === server.updated_at;
        this.#servers.set(id, {
          server,
          interfaces: sameVersion ? known.interfaces : undefined,
          interfacesVersion: sameVersion ? known.interfacesVersion : undefined,
        });
      } catch (cause) {
        if (isNotFound(cause)) this.#gone.add(id);
        else log.warn("could not read a server again", { server: id, error: cause });
      }
    }));
    this.#noteOperations();
  }

  /**
   * The zone's region; `list_zones` runs once (callers asking at the same time share it), and again (at most every 10
   * minutes) for an unknown zone.
   */
  async region(zone: string): Promise<string | undefined> {
    const known = this.#regions.get(zone);
    if (known) return known;
    const tried = this.#unknownZonesTried.get(zone);
    if (this.#zonesListed && tried !== undefined && performance.now() - tried < 600_000) return undefined;
    // Nodes that join together ask at the same time: they share one list.
    this.#listingZones ??= this.#cloud.listZones().then((zones) => {
      this.#zonesListed = true;
      for (const z of zones) this.#regions.set(z.name, z.region);
    }).finally(() => this.#listingZones = undefined);
    await this.#listingZones;
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
        ? Math.min(this.#confirmAt - now + 50, this.#timing.refreshPeriodMs)
        : this.#timing.refreshPeriodMs;
      this.#confirmAt = 0;
      await abortableSleep(next, signal).catch(() => {});
    }
  }
}
