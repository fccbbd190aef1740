/**
 * Deletes leaked load balancers: those labelled for this cluster (its name and its UID) whose Service no longer exists
 * (its finalizer was stripped by hand, its namespace force-deleted while the controller was down, it was deleted during
 * a restore). Once per period it lists this cluster's load balancers (one label-filtered list) and lets
 * {@linkcode planSweep} decide: a load balancer is deleted only when its Service was absent from the synced store in two
 * observations at least the drift period apart. A failed or incomplete list is no observation (nothing is swept during
 * an API outage); a dry run reports `dry run: would delete leaked load balancer …` instead. Each deletion is logged at
 * INFO (the Service is gone, so no object carries an event) and counted in
 * `ankra_ccm_leaked_load_balancers_swept_total`. `sweepLeaked: false` (`--sweep-leaked-load-balancers=false`) leaves
 * leaks alone.
 *
 * The same observation finds duplicates — several load balancers of this cluster for one Service or share group — and
 * hands them to the {@linkcode DuplicateResolver}, whatever `sweepLeaked` says: one is kept, the others deleted.
 *
 * @module
 */
import { CLUSTER_LABEL } from "../../ankra_names.ts";
import type { LoadBalancerCalls } from "../../cloud/load_balancers.ts";
import type { LoadBalancer } from "../../cloud/schemas.ts";
import { isNotFound } from "../../cloud/errors.ts";
import type { SyncedStore } from "../../kube/store.ts";
import type { SlimService } from "../../kube/slim.ts";
import * as log from "../../log.ts";
import { type LeakedLoadBalancer, planSweep } from "../../provider/service/leaked_load_balancers.ts";
import { sharedGroupOf } from "../../provider/service/load_balancer_ownership.ts";
import { liveGroupKeys } from "../../provider/service/share_groups.ts";
import { abortableSleep, whenAborted } from "../../runtime/abort.ts";
import type { DryRunReport } from "../../runtime/dry_run.ts";
import type { Counter, MetricsRegistry } from "../../runtime/metrics.ts";
import type { EventSink } from "../../kube/events.ts";
import { type DuplicatePass, DuplicateResolver } from "./duplicate_resolver.ts";

/** What one sweep pass did (for tests and logs). */
export interface SweepPass {
  /** False when nothing could be observed (store not synced, list failed or incomplete). */
  observed: boolean;
  /** Why nothing was observed. */
  reason?: string;
  /** Load balancers whose Service is absent, awaiting the confirming observation. */
  pending: number;
  /** Load balancers deleted (or, in a dry run, reported) in this pass. */
  swept: string[];
  /** What the pass did about duplicates. */
  duplicates: DuplicatePass;
}

/** Options of {@linkcode LoadBalancerSweeper}. */
interface LoadBalancerSweeperOptions {
  /** Ankra Cloud load balancer calls. */
  cloud: Pick<LoadBalancerCalls, "listLoadBalancers" | "deleteLoadBalancer">;
  /** The Services, read-only: a load balancer is leaked only when its Service is absent from the synced store. */
  services: Pick<SyncedStore<SlimService>, "hasSynced" | "synced" | "store">;
  /** `--cluster-name`. */
  clusterName: string;
  /** UID of the `kube-system` namespace: only load balancers carrying it are swept. */
  clusterUid: string;
  /** `--load-balancer-drift-period`: the period of the sweep and the least time between its two observations. */
  periodMs: number;
  /** `--sweep-leaked-load-balancers` (default true): false leaves leaked load balancers alone (duplicates still go). */
  sweepLeaked?: boolean;
  /** Where the events about duplicates go (on their Services). */
  events?: EventSink;
  /** Set in a dry run: deletions are reported there and never sent. */
  dryRun?: DryRunReport;
  /** Where `ankra_ccm_leaked_load_balancers_swept_total` is registered; without it nothing is counted. */
  metrics?: MetricsRegistry;
  /** Clock in milliseconds (default `performance.now`). */
  now?: () => number;
  /** Called after every pass. */
  onPass?: (pass: SweepPass) => void;
}

/** The options with every default filled in: what the sweeper reads. */
type LoadBalancerSweeperSettings =
  & LoadBalancerSweeperOptions
  & Required<Pick<LoadBalancerSweeperOptions, "now">>;

/** `options` with every default filled in (the monotonic clock), once. */
function loadBalancerSweeperSettings(options: LoadBalancerSweeperOptions): LoadBalancerSweeperSettings {
  const { now = () => performance.now() } = options;
  return { ...options, now };
}

/** The sweeper of leaked load balancers. */
export class LoadBalancerSweeper {
  /** Matches the name `buildControllers` runs the sweeper under, in the `starting controllers` log line. */
  readonly name = "load-balancer-sweeper";
  readonly #settings: LoadBalancerSweeperSettings;
  readonly #swept?: Counter;
  readonly #duplicates: DuplicateResolver;
  #pending = new Map<string, LeakedLoadBalancer>();
  #failing = false;

  /** Registers the counters when `metrics` is given; nothing is listed before `run`. */
  constructor(options: LoadBalancerSweeperOptions) {
    this.#settings = loadBalancerSweeperSettings(options);
    if (options.sweepLeaked !== false) {
      this.#swept = options.metrics?.counter(
        "ankra_ccm_leaked_load_balancers_swept_total",
        "Load balancers of this cluster deleted because their Service no longer exists.",
      );
    }
    this.#duplicates = new DuplicateResolver({
      cloud: options.cloud,
      clusterName: options.clusterName,
      clusterUid: options.clusterUid,
      confirmAfterMs: options.periodMs,
      events: options.events,
      dryRun: options.dryRun,
      metrics: options.metrics,
    });
  }

  /** Sweeps once per period until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    try {
      await Promise.race([this.#settings.services.synced, whenAborted(signal)]);
      while (!signal.aborted) {
        await this.sweep(signal);
        await abortableSleep(this.#settings.periodMs, signal);
      }
    } catch (cause) {
      if (!signal.aborted) throw cause;
    }
  }

  /** One observation, and the deletions it allows. */
  async sweep(signal?: AbortSignal): Promise<SweepPass> {
    const pass = await this.#sweep(signal);
    this.#settings.onPass?.(pass);
    return pass;
  }

  async #sweep(signal?: AbortSignal): Promise<SweepPass> {
    const settings = this.#settings;
    const skip = (reason: string): SweepPass => ({
      observed: false,
      reason,
      pending: this.#pending.size,
      swept: [],
      duplicates: { found: [], deleted: [], pending: this.#duplicates.pending },
    });
    if (!settings.services.hasSynced) return skip("the Service store is not synced");
    let listed;
    try {
      listed = await settings.cloud.listLoadBalancers({ labels: { [CLUSTER_LABEL]: settings.clusterName } }, signal);
    } catch (cause) {
      if (signal?.aborted) throw cause;
      if (!this.#failing) {
        log.warn("could not list load balancers; not looking for leaked or duplicate ones", { error: cause });
      }
      this.#failing = true;
      return skip("the list of load balancers failed");
    }
    this.#failing = false;
    if (listed.skipped.length > 0) return skip("the list of load balancers was incomplete");
    const at = this.#settings.now();
    const swept = settings.sweepLeaked === false ? [] : await this.#sweepLeaked(listed.items, at, signal);
    const duplicates = await this.#duplicates.observe(listed.items, () => settings.services.store.list(), at, signal);
    return { observed: true, pending: this.#pending.size, swept, duplicates };
  }

  /** Sweeps the leaks of one complete observation; the ids deleted. */
  async #sweepLeaked(loadBalancers: LoadBalancer[], at: number, signal?: AbortSignal): Promise<string[]> {
    const settings = this.#settings;
    // Share groups (`<namespace>.<key>`, `*.<key>` across namespaces) some Service is in, may be in, or last joined.
    const groups = liveGroupKeys(settings.services.store.list());
    const exists = (key: string) =>
      sharedGroupOf(key) ? groups.has(key) : settings.services.store.get(key) !== undefined;
    const plan = planSweep(
      { loadBalancers, serviceExists: exists, at },
      this.#pending,
      { clusterName: settings.clusterName, clusterUid: settings.clusterUid, confirmAfterMs: settings.periodMs },
    );
    this.#pending = plan.pending;
    const swept: string[] = [];
    for (const leaked of plan.sweep) {
      // The Service may have come back while the list was read.
      if (exists(leaked.service)) continue;
      if (await this.#delete(leaked, signal)) swept.push(leaked.id);
      else this.#pending.set(leaked.id, leaked);
    }
    return swept;
  }

  /** Deletes (or, in a dry run, reports) one leaked load balancer; false when it must be tried again. */
  async #delete(leaked: LeakedLoadBalancer, signal?: AbortSignal): Promise<boolean> {
    const settings = this.#settings;
    const detail = `delete leaked load balancer ${leaked.id} (${leaked.name}): its Service ${leaked.service} no ` +
      "longer exists";
    if (settings.dryRun) {
      settings.dryRun.would({ controller: "service", object: leaked.service, action: "delete_load_balancer", detail });
      return false;
    }
    try {
      await settings.cloud.deleteLoadBalancer(leaked.id, signal);
    } catch (cause) {
      if (signal?.aborted) throw cause;
      if (!isNotFound(cause)) {
        log.warn("could not delete a leaked load balancer; the next sweep tries again", {
          loadBalancer: leaked.id,
          service: leaked.service,
          error: cause,
        });
        return false;
      }
    }
    this.#swept?.inc();
    log.info(0, "deleted leaked load balancer: its Service no longer exists", {
      loadBalancer: leaked.id,
      name: leaked.name,
      service: leaked.service,
      absentForSeconds: Math.round((this.#settings.now() - leaked.absentSince) / 1000),
    });
    return true;
  }
}
