/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go's leader elector does it (15 s lease, 10 s renew
 * deadline, 2 s retry): a candidate takes the Lease when it is free or when the holder has not renewed it for a
 * lease duration measured on the candidate's own clock from when it last saw the Lease change (so clock skew
 * between machines does not matter). The leader renews every retry period; if it cannot renew within the renew
 * deadline it stops its writers at once — before the lease duration runs out, so another replica can only take over
 * after this one has stopped writing. On a graceful stop the leader stops its writers, then releases the Lease (empty
 * holder), and a standby, which watches the Lease, takes over at once.
 *
 * Every Lease request goes through a rate limiter of the elector's own (10 a second, burst 20: a renewal is two
 * requests every retry period), never the client's shared `--kube-api-qps` bucket, so no backlog of the controllers'
 * requests — or of anything else — can make a renewal miss its deadline.
 *
 * @module
 */
import * as log from "../log.ts";
import type { KubeClient } from "./client.ts";
import { isKubeError } from "./errors.ts";
import type { MetricsRegistry } from "../runtime/metrics.ts";
import { abortableSleep } from "../runtime/abort.ts";
import { TokenBucket } from "../runtime/token_bucket.ts";
import { DEFAULTS } from "../defaults.ts";

/** Options of {@linkcode LeaderElector}. */
interface LeaderElectionOptions {
  /** `--leader-elect-resource-namespace`. */
  namespace: string;
  /** `--leader-elect-resource-name`; also the `name` label of the leader gauge. */
  name: string;
  /** This candidate's identity (host name + random suffix). */
  identity: string;
  /** Lease duration, ms (15 s). */
  leaseDurationMs: number;
  /** Renew deadline, ms (10 s). */
  renewDeadlineMs: number;
  /** Retry period, ms (2 s). */
  retryPeriodMs: number;
  /** Metrics registry (leader status). */
  metrics?: MetricsRegistry;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: LeaseSpec;
}

function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, "000Z");
}

/** Runs an election; `lead` runs while this candidate leads, with a signal that aborts when leadership ends. */
export class LeaderElector {
  readonly #client: KubeClient;
  readonly #options: LeaderElectionOptions;
  #observed?: { holder: string; renewTime: string; at: number };
  #leading = false;
  readonly #gauge?: ReturnType<MetricsRegistry["gauge"]>;
  readonly #lost?: ReturnType<MetricsRegistry["counter"]>;
  #changed?: () => void;
  /** The Lease's own limiter: its requests never wait behind the controllers'. */
  readonly #limiter = new TokenBucket({ requestsPerMinute: 600, burst: 20 });

  /** Sets the leader gauge to 0; nothing is sent before {@linkcode LeaderElector.run}. */
  constructor(client: KubeClient, options: LeaderElectionOptions) {
    this.#client = client;
    this.#options = options;
    this.#gauge = options.metrics?.gauge("leader_election_master_status", "1 while this process leads, else 0.");
    this.#lost = options.metrics?.counter(
      "leader_election_lost_total",
      "Terms of leadership that ended without a shutdown, by cause (renew_deadline: the Lease could not be renewed " +
        "in time, e.g. an API server outage; taken_over: another replica holds it).",
    );
    this.#gauge?.set(0, { name: options.name });
  }

  /** True while this candidate leads. */
  get isLeader(): boolean {
    return this.#leading;
  }

  /** The holder last observed. */
  get observedHolder(): string | undefined {
    return this.#observed?.holder;
  }

  get #path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${this.#options.namespace}/leases`;
  }

  /** Tries to take or renew the Lease once; true when this candidate holds it afterwards. */
  async tryAcquireOrRenew(signal?: AbortSignal): Promise<boolean> {
    const { identity, leaseDurationMs, name, namespace } = this.#options;
    const now = Date.now();
    const spec = (transitions: number, acquireTime?: string): LeaseSpec => ({
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
      acquireTime: acquireTime ?? microTime(now),
      renewTime: microTime(now),
      leaseTransitions: transitions,
    });
    let lease: Lease;
    try {
      lease = await this.#client.get<Lease>(`${this.#path}/${name}`, signal, this.#limiter);
    } catch (cause) {
      if (!isKubeError(cause, "not_found")) throw cause;
      try {
        await this.#client.request("POST", this.#path, {
          body: { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name, namespace }, spec: spec(0) },
          signal,
          limiter: this.#limiter,
        });
      } catch (createError) {
        if (isKubeError(createError, "conflict")) return false;
        throw createError;
      }
      this.#observe(identity, microTime(now));
      return true;
    }
    const holder = lease.spec.holderIdentity ?? "";
    const renewTime = lease.spec.renewTime ?? "";
    this.#observe(holder, renewTime);
    const heldByOther = holder !== "" && holder !== identity;
    if (heldByOther && this.#observed!.at + leaseDurationMs > Date.now()) return false;
    const transitions = (lease.spec.leaseTransitions ?? 0) + (holder === identity ? 0 : 1);
    try {
      await this.#client.request("PUT", `${this.#path}/${name}`, {
        body: {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name, namespace, resourceVersion: lease.metadata.resourceVersion },
          spec: spec(transitions, holder === identity ? lease.spec.acquireTime : undefined),
        },
        signal,
        limiter: this.#limiter,
      });
    } catch (cause) {
      if (isKubeError(cause, "conflict")) return false;
      throw cause;
    }
    this.#observe(identity, microTime(now));
    return true;
  }

  #observe(holder: string, renewTime: string): void {
    if (!this.#observed || this.#observed.holder !== holder || this.#observed.renewTime !== renewTime) {
      this.#observed = { holder, renewTime, at: Date.now() };
    }
  }

  /** Releases the Lease if this candidate holds it (empty holder, so a standby takes over at once). */
  async release(): Promise<void> {
    const { name, identity } = this.#options;
    try {
      const lease = await this.#client.get<Lease>(`${this.#path}/${name}`, undefined, this.#limiter);
      if (lease.spec.holderIdentity !== identity) return;
      await this.#client.request("PUT", `${this.#path}/${name}`, {
        body: {
          ...lease,
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          spec: {
            ...lease.spec,
            holderIdentity: "",
            leaseDurationSeconds: 1,
            renewTime: microTime(Date.now()),
          },
        },
        timeoutMs: 5_000,
        limiter: this.#limiter,
      });
      log.info(1, "released the leader lease", { lease: name });
    } catch (cause) {
      log.warn("could not release the leader lease", { lease: name, error: cause });
    }
  }

  #jitter(ms: number): number {
    return ms * (1 + Math.random() * 0.2);
  }

  /** Watches the Lease and wakes the acquire loop whenever it changes (prompt takeover after a release). */
  async #watchLease(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const list = await this.#client.list<Lease>(this.#path, {
          fieldSelector: `metadata.name=${this.#options.name}`,
          signal,
          limiter: this.#limiter,
        });
        for await (
          const _event of this.#client.watch<Lease>(this.#path, {
            resourceVersion: list.resourceVersion,
            fieldSelector: `metadata.name=${this.#options.name}`,
            timeoutSeconds: DEFAULTS.kubeWatchTimeoutSeconds,
            signal,
            limiter: this.#limiter,
          })
        ) this.#changed?.();
      } catch {
        await abortableSleep(this.#options.retryPeriodMs, signal).catch(() => {});
      }
    }
  }

  /**
   * Campaigns until `signal` aborts. While leading, `lead(leadSignal)` runs; `leadSignal` aborts when leadership is
   * lost or `signal` aborts, and the Lease is released after `lead` has returned.
   */
  async run(signal: AbortSignal, lead: (leadSignal: AbortSignal) => Promise<void>): Promise<void> {
    const { retryPeriodMs, renewDeadlineMs, name, identity } = this.#options;
    const watcher = new AbortController();
    const stopWatcher = () => watcher.abort();
    signal.addEventListener("abort", stopWatcher, { once: true });
    const watching = this.#watchLease(watcher.signal);
    try {
      while (!signal.aborted) {
        let acquired = false;
        try {
          acquired = await this.tryAcquireOrRenew(signal);
        } catch (cause) {
          if (signal.aborted) break;
          log.warn("leader election: could not read or write the lease", { lease: name, error: cause });
        }
        if (!acquired) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(done, this.#jitter(retryPeriodMs));
            function done() {
              clearTimeout(timer);
              signal.removeEventListener("abort", done);
              resolve();
            }
            this.#changed = done;
            signal.addEventListener("abort", done, { once: true });
          });
          this.#changed = undefined;
          continue;
        }
        // Leading.
        this.#leading = true;
        this.#gauge?.set(1, { name });
        log.info(0, "became leader", { lease: name, identity });
        const leadership = new AbortController();
        const onStop = () => leadership.abort(new Error("stopping"));
        signal.addEventListener("abort", onStop, { once: true });
        const leading = lead(leadership.signal).catch((cause) => {
          log.error("controllers stopped with an error", { error: cause });
          leadership.abort(cause);
        });
        let lastRenew = Date.now();
        while (!leadership.signal.aborted) {
          await abortableSleep(retryPeriodMs, leadership.signal).catch(() => {});
          if (leadership.signal.aborted) break;
          // A renewal must succeed before the deadline, even if a request hangs.
          const left = lastRenew + renewDeadlineMs - Date.now();
          const attempt = AbortSignal.any([leadership.signal, AbortSignal.timeout(Math.max(1, left))]);
          let renewed = false;
          try {
            renewed = await this.tryAcquireOrRenew(attempt);
          } catch (cause) {
            if (!leadership.signal.aborted) log.warn("leader election: renewing failed", { lease: name, error: cause });
          }
          if (renewed) {
            lastRenew = Date.now();
            continue;
          }
          const takenOver = this.#observed !== undefined && this.#observed.holder !== identity;
          if (takenOver || Date.now() - lastRenew >= renewDeadlineMs) {
            // Not an error of this process (an API server outage ends every leader's term): the writers stop at
            // once, this replica stands by and campaigns again. Monitoring sees leader_election_lost_total.
            const cause = takenOver ? "taken_over" : "renew_deadline";
            log.warn("lost leadership: the controllers stopped; standing by for the lease", { lease: name, cause });
            this.#lost?.inc({ name, cause });
            leadership.abort(new Error("leadership lost"));
          }
        }
        signal.removeEventListener("abort", onStop);
        await leading;
        this.#leading = false;
        this.#gauge?.set(0, { name });
        if (signal.aborted) await this.release();
      }
    } finally {
      signal.removeEventListener("abort", stopWatcher);
      watcher.abort();
      await watching;
    }
  }
}
