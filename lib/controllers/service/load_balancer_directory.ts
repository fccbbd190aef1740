/**
 * Where each Service's load balancer is, without asking the API on every pass: one list of every load balancer of
 * the account when a term of leadership begins (the only unfiltered list: it also finds an unlabelled load balancer
 * with a Service's name, left by a crash of an old controller between create and label), then kept current by this
 * controller's own creates and deletes and by the label-filtered lists the provisioning poll makes.
 *
 * It caches **where** a load balancer is, never **whether** it exists when that matters. It keeps the full document
 * of each load balancer as this controller last read or wrote it, so a pass triggered by a node change costs only the
 * member replacements; but a lookup asked to be `fresh` (a change of the Service, a 404 on an earlier call) and any
 * lookup once the document's last read is a drift-check period old read the real load balancer. One that is gone is
 * forgotten and the Service's load balancer looked for by its labels (another may serve it); with none, the Service
 * gets a new one.
 *
 * Until the first list succeeds, for a Service whose create had an unknown outcome, for one whose known load balancer
 * is gone (another may serve it: the duplicate sweep keeps one of several) and for one with several load balancers in
 * the account's list, lookups fall back to the API's label filter. Where that finds several, the one that stays is
 * chosen as the duplicate sweep chooses ({@linkcode keeperOf}): the one the Service's status shows, else the oldest.
 *
 * Ownership ({@linkcode loadBalancerOwnership}): a Service's load balancer is one with its Service label, this
 * cluster's name and this cluster's UID (`ccm.ankra.cloud/cluster-uid`), or — made by the Go controller or an older
 * version — the same without a UID label (`legacy`: found to be adopted, it gets the label). One with another
 * cluster's UID is never returned as the Service's: when its name is the Service's load balancer name and the Service
 * has none of its own, the lookup answers `foreign` (the name is taken; nothing is created). Such collisions are
 * known from the account's list when a term begins and from the label-filtered lists of the provisioning poll.
 *
 * @module
 */
import { CLUSTER_LABEL } from "../../ankra_names.ts";
import type { AnkraCloudClient, LoadBalancer } from "../../cloud/client.ts";
import { isNotFound } from "../../cloud/errors.ts";
import * as log from "../../log.ts";
import {
  type ClusterIdentity,
  collisionMessage,
  keyLabels,
  keyOf,
  loadBalancerOwnership,
  namedLoadBalancerUse,
  servesService,
} from "../../provider/service/load_balancer_ownership.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";
import { keeperOf } from "../../provider/service/duplicate_load_balancers.ts";

/** What a lookup found. */
export interface FoundLoadBalancer {
  /** The full document. */
  lb: LoadBalancer;
  /**
   * True when it lacks this cluster's labels and must get them (adoption): one without a Service label found by
   * name, or a `legacy` one without the UID label.
   */
  unlabelled: boolean;
  /** True for one with the Service's and cluster's labels but no `ccm.ankra.cloud/cluster-uid` (an older maker's). */
  legacy?: boolean;
  /**
   * True when the Service has no load balancer and its name is taken by another cluster's (same `--cluster-name`,
   * another UID): it must not be adopted, changed, deleted, nor a new one created.
   */
  foreign?: boolean;
}

/** Options of {@linkcode LoadBalancerDirectory}. */
interface LoadBalancerDirectoryOptions {
  /** `--cluster-name`. */
  clusterName: string;
  /** UID of the `kube-system` namespace. */
  clusterUid: string;
  /** How long after its last read a full document is trusted (the drift-check period). */
  documentTtlMs: number;
}

/** What a lookup looks for. */
interface WantedLoadBalancer {
  /** The Service's two labels. */
  labels: Record<string, string>;
  /** The Service's load balancer name. */
  name: string;
  /** False for a Service without the finalizer (never given a load balancer by a controller). */
  mayExist: boolean;
  /** Read the real load balancer even when a cached document is young enough. */
  fresh?: boolean;
  /**
   * The IPs in the Service's status: where the label lookup finds several load balancers, the one these show stays
   * ({@linkcode keeperOf}, the sweeper's rule for duplicates).
   */
  addresses?: readonly string[];
}

/** The event reason of a Service whose load balancer name is taken by another cluster's load balancer. */
const CLUSTER_NAME_COLLISION = "ClusterNameCollision";

/**
 * What a Service's pass throws when its load balancer name is taken by another cluster's (a `foreign` lookup): the
 * Service waits, looked at again after `recheckAfterMs` (the other cluster may delete it, freeing the name).
 */
export function clusterNameCollision(lb: LoadBalancer, recheckAfterMs: number): WaitingForUser {
  return new WaitingForUser(CLUSTER_NAME_COLLISION, collisionMessage(lb), { recheckAfterMs });
}

/** Where a remembered document came from: a read of the API, or this controller's own writes. */
type DocumentSource = "read" | "written" | "none";

/**
 * A drift pass is scheduled exactly one period after the read it follows; its timer may fire a few milliseconds
 * early, which must not make the document look fresh.
 */
const TIMER_SLACK_MS = 50;

/** The directory. */
export class LoadBalancerDirectory {
  readonly #cloud: Pick<AnkraCloudClient, "listLoadBalancers" | "getLoadBalancer">;
  readonly #options: LoadBalancerDirectoryOptions;
  /** Service key → load balancer id. */
  #ids = new Map<string, string>();
  /** Name → id of unlabelled load balancers (adoption candidates). */
  #unlabelled = new Map<string, string>();
  /** Name → id of other clusters' load balancers (same `--cluster-name`, another UID): names that are taken. */
  #foreign = new Map<string, string>();
  /** Full documents by Service key, with the time the load balancer was last read. */
  readonly #documents = new Map<string, { lb: LoadBalancer; readAt: number }>();
  /** Services whose load balancer must be looked up with the API's label filter. */
  readonly #uncertain = new Set<string>();
  #primed = false;

  /** Creates an empty directory; {@linkcode LoadBalancerDirectory.prime} fills it. */
  constructor(
    cloud: Pick<AnkraCloudClient, "listLoadBalancers" | "getLoadBalancer">,
    options: LoadBalancerDirectoryOptions,
  ) {
    this.#cloud = cloud;
    this.#options = options;
  }

  get #cluster(): ClusterIdentity {
    return { name: this.#options.clusterName, uid: this.#options.clusterUid };
  }

  /** True once the account's list was read. */
  get primed(): boolean {
    return this.#primed;
  }

  /** Reads every load balancer of the account once. */
  async prime(signal?: AbortSignal): Promise<void> {
    const listed = await this.#cloud.listLoadBalancers({}, signal);
    const ids = new Map<string, string>();
    const unlabelled = new Map<string, string>();
    const foreign = new Map<string, string>();
    const ranks = new Map<string, number>();
    const several = new Set<string>();
    for (const lb of listed.items) {
      const owner = loadBalancerOwnership(lb.labels, this.#cluster);
      const key = keyOf(lb.labels, this.#cluster);
      if (key !== undefined) {
        // A live one before one being deleted; this cluster's UID-labelled one before a legacy one.
        const rank = (lb.state !== "deleting" ? 2 : 0) + (owner.kind !== "legacy" ? 1 : 0);
        const best = ranks.get(key) ?? -1;
        if (rank > best) {
          ids.set(key, lb.id);
          ranks.set(key, rank);
          several.delete(key);
        } else if (rank === best) several.add(key);
      } else if (owner.kind === "unlabelled") unlabelled.set(lb.name, lb.id);
      else if (owner.kind === "foreign" && lb.labels[CLUSTER_LABEL] === this.#options.clusterName) {
        foreign.set(lb.name, lb.id);
      }
    }
    // Several equally good ones for a key (duplicates): the label lookup picks, with the Service's status in hand.
    for (const key of several) {
      ids.delete(key);
      this.#uncertain.add(key);
    }
    this.#ids = ids;
    this.#unlabelled = unlabelled;
    this.#foreign = foreign;
    // A load balancer item that could not be read might be anyone's: look those Services up by label.
    this.#primed = listed.skipped.length === 0;
  }

  /**
   * Takes in a label-filtered list of load balancers with this cluster's name (summaries): this cluster's are
   * remembered, and another cluster's (same name, another UID) mark their names as taken.
   */
  learn(summaries: LoadBalancer[]): void {
    for (const lb of summaries) {
      const owner = loadBalancerOwnership(lb.labels, this.#cluster);
      const key = keyOf(lb.labels, this.#cluster);
      if (key !== undefined && !this.#ids.has(key) && !this.#uncertain.has(key)) {
        this.#ids.set(key, lb.id);
      } else if (owner.kind === "foreign" && lb.labels[CLUSTER_LABEL] === this.#options.clusterName) {
        this.#foreign.set(lb.name, lb.id);
      }
    }
  }

  /**
   * Records the load balancer of `key`: `document: "read"` after a full read, `"written"` for the document this
   * controller's calls left behind (its last read time is kept: writes do not prove it still exists), `"none"` to
   * keep only where it is.
   */
  remember(key: string, lb: LoadBalancer, options: { document: DocumentSource }): void {
    this.#ids.set(key, lb.id);
    this.#unlabelled.delete(lb.name);
    this.#uncertain.delete(key);
    if (options.document === "none") {
      this.#documents.delete(key);
      return;
    }
    const earlier = this.#documents.get(key);
    const readAt = options.document === "written" && earlier?.lb.id === lb.id ? earlier.readAt : performance.now();
    this.#documents.set(key, { lb, readAt });
  }

  /** Takes in a newer summary of the load balancer of `key` (state and addresses; its listeners are kept). */
  update(key: string, summary: LoadBalancer): void {
    const cached = this.#documents.get(key);
    if (!cached || cached.lb.id !== summary.id) return;
    cached.lb = { ...summary, frontends: cached.lb.frontends, backends: cached.lb.backends };
  }

  /** Forgets the load balancer of `key` (deleted, or found to belong to someone else). */
  forget(key: string): void {
    this.#ids.delete(key);
    this.#documents.delete(key);
  }

  /** Drops the cached document of `key`: the next lookup reads the load balancer again. */
  invalidate(key: string): void {
    this.#documents.delete(key);
  }

  /** Marks `key` as unknown (a create whose outcome is unknown): the next lookup asks the API's label filter. */
  markUncertain(key: string): void {
    this.#uncertain.add(key);
    this.forget(key);
  }

  /** The id of the load balancer of `key`, when known. */
  idOf(key: string): string | undefined {
    return this.#ids.get(key);
  }

  /**
   * The load balancer of a Service (`key` = `<namespace>/<name>`): the cached document (unless `fresh` or read a
   * drift-check period ago), else a read by id, else (unprimed or uncertain) the label filter, else an unlabelled
   * one with its name. `mayExist: false` skips the API when the account's list could not be read: only an orphan
   * could exist for it. A load balancer the API no longer has is forgotten: the answer is then undefined.
   */
  async find(key: string, wanted: WantedLoadBalancer, signal?: AbortSignal): Promise<FoundLoadBalancer | undefined> {
    const cached = this.#documents.get(key);
    if (
      cached && !wanted.fresh &&
      performance.now() - cached.readAt + TIMER_SLACK_MS < this.#options.documentTtlMs
    ) {
      return { lb: cached.lb, unlabelled: false };
    }
    const id = this.#ids.get(key);
    if (id) {
      const lb = await this.#read(id, signal);
      if (lb && servesService(lb.labels, this.#cluster, key)) return this.#found(key, lb);
      // Gone, or no longer this Service's (deleted as a duplicate, by hand): another may serve it, so the label
      // lookup looks before a new one is made.
      this.markUncertain(key);
    }
    if (!this.#uncertain.has(key)) {
      if (this.#primed) {
        const taken = await this.#foreignNamed(wanted.name, signal);
        if (taken) return { lb: taken, unlabelled: false, foreign: true };
        const orphan = this.#unlabelled.get(wanted.name);
        const lb = orphan ? await this.#read(orphan, signal) : undefined;
        return lb && loadBalancerOwnership(lb.labels, this.#cluster).kind === "unlabelled"
          ? { lb, unlabelled: true }
          : undefined;
      }
      if (!wanted.mayExist) return undefined;
    }
    // The Service's and cluster's labels only: a legacy load balancer has no UID label, another cluster's another.
    const filter = keyLabels(key, this.#options.clusterName);
    const labelled = await this.#cloud.listLoadBalancers({ labels: filter }, signal);
    this.learn(labelled.items);
    const served = labelled.items.filter((lb) => servesService(lb.labels, this.#cluster, key));
    const live = this.#keeper(served, wanted.addresses ?? []) ?? served[0];
    if (live) {
      const lb = await this.#read(live.id, signal);
      if (lb && servesService(lb.labels, this.#cluster, key)) return this.#found(key, lb);
    }
    if (labelled.skipped.length > 0) {
      // An item with the Service's labels that cannot be read may be its load balancer: no new one on that list.
      throw new Error(
        `the list of load balancers labelled for ${key} has ${labelled.skipped.length} item(s) that cannot be read; ` +
          "no load balancer is created until it can be read",
      );
    }
    const all = await this.#cloud.listLoadBalancers({}, signal);
    this.#uncertain.delete(key);
    const named = all.items.filter((lb) => lb.name === wanted.name);
    const foreign = named.find((lb) => loadBalancerOwnership(lb.labels, this.#cluster).kind === "foreign");
    if (foreign) return { lb: foreign, unlabelled: false, foreign: true };
    const orphan = named.find((lb) => loadBalancerOwnership(lb.labels, this.#cluster).kind === "unlabelled");
    const lb = orphan ? await this.#read(orphan.id, signal) : undefined;
    return lb ? { lb, unlabelled: true } : undefined;
  }

  /**
   * The load balancer Service `key` names in `load-balancer.ankra.cloud/load-balancer-id`, and whether it may use it
   * ({@linkcode namedLoadBalancerUse}); undefined when the account has none with `id`. The cached document serves when
   * it is this Service's, young enough and not asked `fresh`; one the Service may use as it is is remembered as its.
   */
  async findNamed(
    key: string,
    id: string,
    options: { fresh?: boolean; signal?: AbortSignal } = {},
  ): Promise<{ lb: LoadBalancer; use: ReturnType<typeof namedLoadBalancerUse> } | undefined> {
    const cached = this.#documents.get(key);
    if (
      cached && cached.lb.id === id && !options.fresh &&
      performance.now() - cached.readAt + TIMER_SLACK_MS < this.#options.documentTtlMs
    ) {
      return { lb: cached.lb, use: { ok: true, adopt: false } };
    }
    const lb = await this.#read(id, options.signal);
    if (!lb) return undefined;
    const use = namedLoadBalancerUse(lb, this.#cluster, key);
    if (use.ok && !use.adopt) this.remember(key, lb, { document: "read" });
    return { lb, use };
  }

  /** The answer for a load balancer that serves `key`: remembered when own, to be adopted when legacy. */
  #found(key: string, lb: LoadBalancer): FoundLoadBalancer {
    if (loadBalancerOwnership(lb.labels, this.#cluster).kind !== "legacy") {
      this.remember(key, lb, { document: "read" });
      return { lb, unlabelled: false };
    }
    // Legacy: where it is is kept, its document is not (the next pass must see it unlabelled until adopted).
    this.#ids.set(key, lb.id);
    this.#documents.delete(key);
    log.info(
      0,
      "found a load balancer without the cluster-uid label (made by the Go controller or an older " +
        "version): it is adopted and labelled",
      { service: key, loadBalancer: lb.id },
    );
    return { lb, unlabelled: true, legacy: true };
  }

  /**
   * The one of several load balancers serving a key that stays, by the duplicate rule ({@linkcode keeperOf}: the one
   * the Service's status shows, else the oldest) among the live ones with this cluster's UID label, else among the
   * live legacy ones; undefined when all are being deleted.
   */
  #keeper(served: LoadBalancer[], addresses: readonly string[]): LoadBalancer | undefined {
    const live = served.filter((lb) => lb.state !== "deleting");
    const own = live.filter((lb) => loadBalancerOwnership(lb.labels, this.#cluster).kind !== "legacy");
    return keeperOf(own.length > 0 ? own : live, { addresses, pinned: [] })?.lb;
  }

  /** Another cluster's load balancer named `name`, read again (a deleted one frees the name). */
  async #foreignNamed(name: string, signal?: AbortSignal): Promise<LoadBalancer | undefined> {
    const id = this.#foreign.get(name);
    if (!id) return undefined;
    const lb = await this.#read(id, signal);
    if (lb && lb.name === name && loadBalancerOwnership(lb.labels, this.#cluster).kind === "foreign") return lb;
    this.#foreign.delete(name);
    return undefined;
  }

  async #read(id: string, signal?: AbortSignal): Promise<LoadBalancer | undefined> {
    try {
      return await this.#cloud.getLoadBalancer(id, signal);
    } catch (cause) {
      if (isNotFound(cause)) return undefined;
      throw cause;
    }
  }
}
