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
 * forgotten, so the Service gets a new one.
 *
 * Until the first list succeeds, and for a Service whose create had an unknown outcome, lookups fall back to the
 * API's label filter.
 *
 * @module
 */
import type { AnkraCloudClient, LoadBalancer } from "../cloud/client.ts";
import { isNotFound } from "../cloud/errors.ts";
import { CLUSTER_LABEL, SERVICE_LABEL } from "../provider/load_balancer_names.ts";

/** What a lookup found. */
export interface FoundLoadBalancer {
  /** The full document. */
  lb: LoadBalancer;
  /** True when it carries no Service label and was found by name: it must be labelled (adopted). */
  unlabelled: boolean;
}

/** Options of {@linkcode LoadBalancerDirectory}. */
export interface LoadBalancerDirectoryOptions {
  /** `--cluster-name`. */
  clusterName: string;
  /** How long after its last read a full document is trusted (the drift-check period). */
  documentTtlMs: number;
}

/** What a lookup looks for. */
export interface WantedLoadBalancer {
  /** The Service's two labels. */
  labels: Record<string, string>;
  /** The Service's load balancer name. */
  name: string;
  /** False for a Service without the finalizer (never given a load balancer by a controller). */
  mayExist: boolean;
  /** Read the real load balancer even when a cached document is young enough. */
  fresh?: boolean;
}

/** Where a remembered document came from: a read of the API, or this controller's own writes. */
export type DocumentSource = "read" | "written" | "none";

/**
 * A drift pass is scheduled exactly one period after the read it follows; its timer may fire a few milliseconds
 * early, which must not make the document look fresh.
 */
const TIMER_SLACK_MS = 50;

/** The directory. */
export class LoadBalancerDirectory {
  readonly #cloud: AnkraCloudClient;
  readonly #options: LoadBalancerDirectoryOptions;
  /** Service key → load balancer id. */
  #ids = new Map<string, string>();
  /** Name → id of unlabelled load balancers (adoption candidates). */
  #unlabelled = new Map<string, string>();
  /** Full documents by Service key, with the time the load balancer was last read. */
  readonly #documents = new Map<string, { lb: LoadBalancer; readAt: number }>();
  /** Services whose load balancer must be looked up with the API's label filter. */
  readonly #uncertain = new Set<string>();
  #primed = false;

  /** Creates an empty directory; {@linkcode LoadBalancerDirectory.prime} fills it. */
  constructor(cloud: AnkraCloudClient, options: LoadBalancerDirectoryOptions) {
    this.#cloud = cloud;
    this.#options = options;
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
    for (const lb of listed.items) {
      const service = lb.labels[SERVICE_LABEL];
      if (service && lb.labels[CLUSTER_LABEL] === this.#options.clusterName) {
        if (!ids.has(service) || lb.state !== "deleting") ids.set(service, lb.id);
      } else if (!service) unlabelled.set(lb.name, lb.id);
    }
    this.#ids = ids;
    this.#unlabelled = unlabelled;
    // A load balancer item that could not be read might be anyone's: look those Services up by label.
    this.#primed = listed.skipped.length === 0;
  }

  /** Takes in a label-filtered list of this cluster's load balancers (summaries). */
  learn(summaries: LoadBalancer[]): void {
    for (const lb of summaries) {
      const service = lb.labels[SERVICE_LABEL];
      if (service && lb.labels[CLUSTER_LABEL] === this.#options.clusterName && !this.#ids.has(service)) {
        this.#ids.set(service, lb.id);
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
      try {
        const lb = await this.#cloud.getLoadBalancer(id, signal);
        if (lb.labels[SERVICE_LABEL] === key && lb.labels[CLUSTER_LABEL] === this.#options.clusterName) {
          this.remember(key, lb, { document: "read" });
          return { lb, unlabelled: false };
        }
      } catch (cause) {
        if (!isNotFound(cause)) throw cause;
      }
      this.forget(key);
    }
    if (!this.#uncertain.has(key)) {
      if (this.#primed) {
        const orphan = this.#unlabelled.get(wanted.name);
        const lb = orphan ? await this.#read(orphan, signal) : undefined;
        return lb && !lb.labels[SERVICE_LABEL] ? { lb, unlabelled: true } : undefined;
      }
      if (!wanted.mayExist) return undefined;
    }
    const labelled = await this.#cloud.listLoadBalancers({ labels: wanted.labels }, signal);
    const live = labelled.items.find((lb) => lb.state !== "deleting") ?? labelled.items[0];
    if (live) {
      const lb = await this.#read(live.id, signal);
      if (lb) {
        this.remember(key, lb, { document: "read" });
        return { lb, unlabelled: false };
      }
    }
    const all = await this.#cloud.listLoadBalancers({}, signal);
    const orphan = all.items.find((lb) => lb.name === wanted.name && !lb.labels[SERVICE_LABEL]);
    const lb = orphan ? await this.#read(orphan.id, signal) : undefined;
    this.#uncertain.delete(key);
    return lb ? { lb, unlabelled: true } : undefined;
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
