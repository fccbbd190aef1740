/**
 * Deletes duplicate load balancers: more than one of this cluster (its name and UID labels) labelled for the same
 * Service or share group, whatever made them (a create that went out twice, a copy made by hand or by a script). It
 * works on the sweeper's observation — one complete label-filtered list of this cluster's load balancers per period,
 * with the synced Service store — and {@linkcode planDuplicates} decides: the load balancer the Service pins
 * (`load-balancer-id`), else the one its status shows, else the oldest stays; the others are deleted once a second
 * observation a period later still finds them duplicates. A load balancer any Service pins is never deleted; another
 * cluster's, an unlabelled or a legacy one is never a candidate; a failed or incomplete list is no observation.
 *
 * Said three ways: a duplicate found is a Warning `DuplicateLoadBalancer` on each Service of its key, a WARN log line
 * and `ankra_ccm_duplicate_load_balancers_found_total`; its deletion a Normal `DeletedDuplicateLoadBalancer` and an INFO
 * line. A dry run reports `dry run: would delete duplicate load balancer …` instead of deleting.
 *
 * @module
 */
import type { LoadBalancerCalls } from "../../cloud/load_balancers.ts";
import { isNotFound } from "../../cloud/errors.ts";
import type { EventSink, EventType } from "../../kube/events.ts";
import type { SlimService } from "../../kube/slim.ts";
import * as log from "../../log.ts";
import {
  type Duplicate,
  type DuplicateCandidate,
  keeperWords,
  keyServices,
  pinnedIds,
  planDuplicates,
  servicesOfKey,
} from "../../provider/service/duplicate_load_balancers.ts";
import type { DryRunReport } from "../../runtime/dry_run.ts";
import type { Counter, MetricsRegistry } from "../../runtime/metrics.ts";

/** The event reason of a duplicate found. */
const DUPLICATE_FOUND = "DuplicateLoadBalancer";
/** The event reason of a duplicate deleted. */
const DUPLICATE_DELETED = "DeletedDuplicateLoadBalancer";

/** What one observation did about duplicates. */
export interface DuplicatePass {
  /** Duplicates first seen now. */
  found: string[];
  /** Duplicates deleted (or, in a dry run, reported) now. */
  deleted: string[];
  /** Duplicates awaiting the confirming observation. */
  pending: number;
}

/** Options of {@linkcode DuplicateResolver}. */
interface DuplicateResolverOptions {
  /** Deletes the duplicates. */
  cloud: Pick<LoadBalancerCalls, "deleteLoadBalancer">;
  /** `--cluster-name`. */
  clusterName: string;
  /** UID of the `kube-system` namespace. */
  clusterUid: string;
  /** Least time between the observation that finds a duplicate and the one that deletes it (the drift period). */
  confirmAfterMs: number;
  /** Where the Services' events go; without it none are recorded. */
  events?: EventSink;
  /** Set in a dry run: deletions are reported there and never sent. */
  dryRun?: DryRunReport;
  /** Where `ankra_ccm_duplicate_load_balancers_found_total` is registered. */
  metrics?: MetricsRegistry;
}

/** Finds and deletes duplicate load balancers, one observation at a time. */
export class DuplicateResolver {
  readonly #options: DuplicateResolverOptions;
  readonly #found?: Counter;
  #pending = new Map<string, Duplicate>();

  /** Registers the counter when `metrics` is given. */
  constructor(options: DuplicateResolverOptions) {
    this.#options = options;
    this.#found = options.metrics?.counter(
      "ankra_ccm_duplicate_load_balancers_found_total",
      "Load balancers of this cluster found to be a second one for the same Service or share group.",
    );
  }

  /** Duplicates awaiting the confirming observation. */
  get pending(): number {
    return this.#pending.size;
  }

  /**
   * One complete observation: `loadBalancers` is the whole list of this cluster's load balancers, `services()` the
   * synced Service store (read again before each deletion), `at` the monotonic time of the observation.
   */
  async observe(
    loadBalancers: readonly DuplicateCandidate[],
    services: () => readonly SlimService[],
    at: number,
    signal?: AbortSignal,
  ): Promise<DuplicatePass> {
    const { clusterName, clusterUid, confirmAfterMs } = this.#options;
    const seen = services();
    const plan = planDuplicates(
      { loadBalancers, servicesOf: (key) => keyServices(seen, key), pinned: pinnedIds(seen), at },
      this.#pending,
      { cluster: { name: clusterName, uid: clusterUid }, confirmAfterMs },
    );
    this.#pending = plan.pending;
    for (const duplicate of plan.found) this.#tellFound(duplicate, seen);
    const deleted: string[] = [];
    for (const duplicate of plan.remove) {
      // The Services may have changed while the list was read: one may pin it now, or be gone (a leak then).
      const now = services();
      if (pinnedIds(now).has(duplicate.id) || !keyServices(now, duplicate.key)) continue;
      if (await this.#delete(duplicate, now, signal)) deleted.push(duplicate.id);
      else this.#pending.set(duplicate.id, duplicate);
    }
    return { found: plan.found.map((d) => d.id), deleted, pending: this.#pending.size };
  }

  #tellFound(duplicate: Duplicate, services: readonly SlimService[]): void {
    this.#found?.inc();
    const { keeper } = duplicate;
    log.warn("found a second load balancer for one Service; one stays, the other is deleted at the next check", {
      service: duplicate.key,
      duplicate: duplicate.id,
      keep: keeper.id,
      why: keeper.reason,
    });
    this.#event(
      services,
      duplicate.key,
      "Warning",
      DUPLICATE_FOUND,
      `load balancers ${keeper.id} and ${duplicate.id} (${duplicate.name}) are both labelled for this Service: ` +
        `${keeper.id} (${keeper.name}) stays, ${keeperWords(keeper.reason)}; ${duplicate.id} is deleted if it is ` +
        "still a duplicate at the next check (one drift period)",
    );
  }

  /** Deletes (or, in a dry run, reports) one duplicate; false when it must be tried again. */
  async #delete(duplicate: Duplicate, services: readonly SlimService[], signal?: AbortSignal): Promise<boolean> {
    const { keeper } = duplicate;
    const detail = `delete duplicate load balancer ${duplicate.id} (${duplicate.name}): Service ${duplicate.key} ` +
      `keeps ${keeper.id}`;
    if (this.#options.dryRun) {
      this.#options.dryRun.would({
        controller: "service",
        object: duplicate.key,
        action: "delete_load_balancer",
        detail,
      });
      return false;
    }
    try {
      await this.#options.cloud.deleteLoadBalancer(duplicate.id, signal);
    } catch (cause) {
      if (signal?.aborted) throw cause;
      if (!isNotFound(cause)) {
        log.warn("could not delete a duplicate load balancer; the next check tries again", {
          loadBalancer: duplicate.id,
          service: duplicate.key,
          error: cause,
        });
        return false;
      }
    }
    log.info(0, "deleted duplicate load balancer", {
      loadBalancer: duplicate.id,
      name: duplicate.name,
      service: duplicate.key,
      kept: keeper.id,
      why: keeper.reason,
    });
    this.#event(
      services,
      duplicate.key,
      "Normal",
      DUPLICATE_DELETED,
      `deleted load balancer ${duplicate.id} (${duplicate.name}), a second one labelled for this Service; ` +
        `${keeper.id} (${keeper.name}) stays, ${keeperWords(keeper.reason)}`,
    );
    return true;
  }

  #event(services: readonly SlimService[], key: string, type: EventType, reason: string, message: string): void {
    for (const service of servicesOfKey(services, key)) {
      this.#options.events?.event(
        { kind: "Service", apiVersion: "v1", name: service.name, namespace: service.namespace, uid: service.uid },
        type,
        reason,
        message,
      );
    }
  }
}
