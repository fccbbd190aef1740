/**
 * Watches load balancers that are still provisioning and hands each one over the moment it has an address, outside
 * the Service work queue: a backlog of creates never delays a Service's address. One poll serves every provisioning
 * load balancer: a label-filtered list of this cluster's load balancers (one call per 100), or a read of each when only
 * a few are waiting. Polls are high priority in the request budget (they may use its reserve). They run every second
 * while the window has plenty left; once the budget paces, they are spaced to use at most about a twentieth of the
 * API's limit.
 *
 * What it finds is handed out as {@linkcode TrackedOutcome}s (`served`, `lost`) by {@linkcode ProvisioningTracker.outcomes},
 * which the service controller consumes; the summaries a list brings are taught to the {@linkcode LoadBalancerDirectory}.
 *
 * @module
 */
import { CLUSTER_LABEL } from "../../ankra_names.ts";
import type { AnkraCloudClient, LoadBalancer } from "../../cloud/client.ts";
import { isNotFound } from "../../cloud/errors.ts";
import * as log from "../../log.ts";
import { abortableSleep } from "../../runtime/abort.ts";
import { loadBalancerIngress } from "../../provider/service/service_ingress.ts";
import { DEFAULTS } from "../../defaults.ts";
import type { LoadBalancerDirectory } from "./load_balancer_directory.ts";

/** Options of {@linkcode ProvisioningTracker}. */
interface ProvisioningTrackerOptions {
  /** `--cluster-name` (the list is filtered by its label). */
  clusterName: string;
  /** Least time between polls (default 1 s). */
  minPollMs?: number;
  /** Learns the summaries of this cluster's load balancers a list brings. */
  directory: Pick<LoadBalancerDirectory, "learn">;
}

/**
 * What a poll found about a tracked load balancer: `served` — it has its address (the Service's status can be
 * written); `lost` — it is gone or being deleted (the Service must be looked at again). Each tracked load balancer
 * ends with one of them.
 */
export type TrackedOutcome =
  | { kind: "served"; serviceKey: string; loadBalancer: LoadBalancer }
  | { kind: "lost"; serviceKey: string };

/** The tracker. */
export class ProvisioningTracker {
  readonly #cloud: Pick<AnkraCloudClient, "listLoadBalancers" | "getLoadBalancer" | "budget">;
  readonly #clusterName: string;
  readonly #minPollMs: number;
  readonly #directory: Pick<LoadBalancerDirectory, "learn">;
  /** Load balancer id → the Services waiting for it (several when they share it). */
  readonly #tracked = new Map<string, Set<string>>();
  #wake?: () => void;
  /** Pages the last list took. */
  #pages = 1;

  /** Creates the tracker; {@linkcode ProvisioningTracker.run} polls while something is tracked. */
  constructor(
    cloud: Pick<AnkraCloudClient, "listLoadBalancers" | "getLoadBalancer" | "budget">,
    options: ProvisioningTrackerOptions,
  ) {
    this.#cloud = cloud;
    const { clusterName, minPollMs = DEFAULTS.provisioningPollMs, directory } = options;
    this.#clusterName = clusterName;
    this.#minPollMs = minPollMs;
    this.#directory = directory;
  }

  /** Load balancers waiting for an address. */
  get size(): number {
    return this.#tracked.size;
  }

  /** Waits for `loadBalancerId` (of Service `serviceKey`) to have an address. */
  track(loadBalancerId: string, serviceKey: string): void {
    const waiting = this.#tracked.get(loadBalancerId) ?? new Set<string>();
    waiting.add(serviceKey);
    this.#tracked.set(loadBalancerId, waiting);
    this.#wake?.();
  }

  /** Stops waiting for the load balancers of `serviceKey`. */
  untrack(serviceKey: string): void {
    for (const [id, keys] of this.#tracked) {
      keys.delete(serviceKey);
      if (keys.size === 0) this.#tracked.delete(id);
    }
  }

  #interval(): number {
    const minimum = this.#minPollMs;
    const budget = this.#cloud.budget;
    if (budget.plentyLeft || !budget.apiLimit) return minimum;
    return Math.max(minimum, Math.min(60_000 / (budget.apiLimit * 0.05), 15_000));
  }

  /** Polls while something is tracked and hands out what each poll found, until `signal` aborts. */
  async *outcomes(signal: AbortSignal): AsyncGenerator<TrackedOutcome> {
    while (!signal.aborted) {
      if (this.#tracked.size === 0) {
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
          signal.addEventListener("abort", () => resolve(), { once: true });
        });
        this.#wake = undefined;
        if (signal.aborted) return;
      }
      await abortableSleep(this.#interval(), signal).catch(() => {});
      if (signal.aborted) return;
      const found = await this.poll(signal).catch((cause) => {
        if (!signal.aborted) log.info(2, "polling provisioning load balancers failed; trying again", { error: cause });
        return [];
      });
      yield* found;
    }
  }

  /** One poll over every tracked load balancer: what it found about each one that is no longer tracked. */
  async poll(signal?: AbortSignal): Promise<TrackedOutcome[]> {
    const waiting = [...this.#tracked];
    if (waiting.length === 0) return [];
    const found = new Map<string, LoadBalancer | undefined>();
    if (waiting.length <= Math.max(2, this.#pages)) {
      await Promise.all(waiting.map(async ([id]) => {
        try {
          found.set(id, await this.#cloud.getLoadBalancer(id, signal, { priority: "high" }));
        } catch (cause) {
          if (isNotFound(cause)) found.set(id, undefined);
          else throw cause;
        }
      }));
    } else {
      const listed = await this.#cloud.listLoadBalancers(
        { labels: { [CLUSTER_LABEL]: this.#clusterName } },
        signal,
        {
          priority: "high",
        },
      );
      this.#pages = Math.max(1, Math.ceil((listed.items.length + listed.skipped.length) / 100));
      this.#directory.learn(listed.items);
      const byId = new Map(listed.items.map((lb) => [lb.id, lb]));
      const unreadable = new Set(listed.skipped.map((s) => s.id));
      for (const [id] of waiting) if (!unreadable.has(id)) found.set(id, byId.get(id));
    }
    const outcomes: TrackedOutcome[] = [];
    for (const [id] of waiting) {
      const keys = this.#tracked.get(id);
      if (!found.has(id) || !keys) continue;
      const lb = found.get(id);
      if (!lb || lb.state === "deleting") {
        this.#tracked.delete(id);
        for (const key of keys) outcomes.push({ kind: "lost", serviceKey: key });
      } else if (loadBalancerIngress(lb).length > 0) {
        this.#tracked.delete(id);
        for (const key of keys) outcomes.push({ kind: "served", serviceKey: key, loadBalancer: lb });
      }
    }
    return outcomes;
  }
}
