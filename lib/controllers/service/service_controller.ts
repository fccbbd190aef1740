/**
 * The service controller, rebuilt for Ankra load balancers. It only schedules: it watches Services, Nodes and
 * EndpointSlices, queues the Services a change concerns, and runs one pass per Service at a time
 * ({@linkcode ServicePass}: decide, move, find, plan, apply, tell — or clean up). Services sharing a load balancer
 * (`load-balancer.ankra.cloud/share`) take turns: one pass at a time of the Services with one share key, whatever
 * their namespace (a group across namespaces is one key's), so no two plan against the same load balancer at once; a
 * change of one of them looks at the others again (a consent given, a port freed).
 *
 * A load balancer that is still provisioning is handed to the {@linkcode ProvisioningTracker}; what it finds is
 * scheduled here — an address is written at once ({@linkcode ServicePass.served}), whatever the backlog of other
 * Services; a lost one queues its Service. Deleting the Service deletes the load balancer (or takes its listeners off a
 * shared one), waits until it is gone, then removes the finalizer.
 *
 * @module
 */
import type { LoadBalancer } from "../../cloud/client.ts";
import { waitForEndpoints } from "../../kube/endpoint_slices.ts";
import { objectKey } from "../../kube/object_key.ts";
import type { SlimService } from "../../kube/slim.ts";
import * as log from "../../log.ts";
import { loadBalancerKeyOf, shareKeyOf } from "../../provider/service/load_balancer_sharing.ts";
import { recordedGroupOf } from "../../provider/service/share_groups.ts";
import { isLocalTraffic } from "../../provider/service/local_traffic.ts";
import {
  nodeChangeMatters,
  serviceChangeMatters,
  serviceChangeNeedsRead,
} from "../../provider/service/service_changes.ts";
import { keepsIpMode } from "../../provider/service/service_ingress.ts";
import { type ClassRule, FINALIZER, needsCleanup, wantsLoadBalancer } from "../../provider/service/service_plan.ts";
import { whenAborted } from "../../runtime/abort.ts";
import { type ReconcileResult, WorkQueue } from "../../runtime/work_queue.ts";
import type { TrackedOutcome } from "./provisioning_tracker.ts";
import {
  type ServiceControllerOptions,
  type ServiceControllerSettings,
  serviceControllerSettings,
} from "./service_controller_options.ts";
import { ServicePass } from "./service_pass.ts";
import { type PassSteps, passSteps } from "./service_steps.ts";

/** The service load balancer controller. */
export class ServiceController {
  /** The `--controllers` name; `buildControllers` runs it in a wrapper of that name, which is what gets logged. */
  readonly name = "service";
  readonly #settings: ServiceControllerSettings;
  readonly #classRule: ClassRule;
  readonly #queue: WorkQueue;
  readonly #steps: PassSteps;
  readonly #pass: ServicePass;
  /** The turn the sharing Services of each share key wait for (the end of the last pass queued). */
  readonly #turns = new Map<string, Promise<void>>();

  /** Resolves the options once and creates the steps of its passes; {@linkcode ServiceController.run} starts it. */
  constructor(options: ServiceControllerOptions) {
    const settings = serviceControllerSettings(options);
    this.#settings = settings;
    this.#classRule = { requireClass: settings.requireLoadBalancerClass };
    this.#queue = new WorkQueue({
      name: "service",
      concurrency: settings.workers,
      baseDelayMs: settings.retryBaseMs,
      metrics: settings.metrics,
    });
    this.#steps = passSteps(settings);
    this.#pass = new ServicePass(settings, this.#steps);
    settings.metrics?.gauge(
      "ankra_ccm_load_balancers_provisioning",
      "Load balancers created and waiting for their address.",
      () => this.#steps.tracker.size,
    );
    settings.metrics?.gauge(
      "ankra_ccm_load_balancers_served",
      "LoadBalancer Services of this controller that have an address.",
      () =>
        settings.services.store.list().filter((s) => this.#wants(s) && !s.deletionTimestamp && s.ingress.length > 0)
          .length,
    );
  }

  #wants(service: SlimService): boolean {
    return wantsLoadBalancer(service, this.#settings.loadBalancerClass, this.#classRule);
  }

  #relevant(service: SlimService): boolean {
    return this.#wants(service) || service.finalizers.includes(FINALIZER);
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { services, nodes, endpoints, nodeBatchMs, endpointBatchMs } = this.#settings;
    endpoints?.onChange((key) => {
      const service = services.store.get(key);
      if (signal.aborted || !service || !isLocalTraffic(service)) return;
      if (this.#wants(service)) this.#queue.addAfter(key, endpointBatchMs);
    });
    services.onChange((change) => {
      if (signal.aborted) return;
      const before = change.type === "deleted" ||
          (change.type === "updated" && serviceChangeMatters(change.old, change.object))
        ? change.old
        : undefined;
      if (before && this.#onNodes(before)) {
        for (const key of this.#nodeAddressPeers(change.key)) this.#queue.addAfter(key, nodeBatchMs);
      }
      if (change.type === "deleted") {
        this.#pass.forget(change.key);
        for (const key of this.#sharers(change.key, shareKeys(change.old))) this.#queue.addAfter(key, nodeBatchMs);
        return;
      }
      if (change.type === "updated" && !serviceChangeMatters(change.old, change.object)) return;
      if (change.type === "updated" && serviceChangeNeedsRead(change.old, change.object)) {
        this.#pass.readNext.add(change.key);
      }
      if (this.#relevant(change.object)) this.#queue.add(change.key);
      // A Service added, deleted, or changed by its spec or annotations (a consent, a port, the group it joined).
      if (
        change.type === "added" || serviceChangeNeedsRead(change.old, change.object) ||
        Boolean(change.old.deletionTimestamp) !== Boolean(change.object.deletionTimestamp)
      ) {
        const keys = [...shareKeys(change.object), ...(before ? shareKeys(before) : [])];
        for (const key of this.#sharers(change.key, keys)) this.#queue.addAfter(key, nodeBatchMs);
      }
    });
    nodes.onChange((change) => {
      if (signal.aborted) return;
      if (change.type === "updated" && !nodeChangeMatters(change.old, change.object)) return;
      for (const service of services.store.list()) {
        if (this.#wants(service)) this.#queue.addAfter(objectKey(service), nodeBatchMs);
      }
    });
    // After every server list: when a node's server changed its public addresses, the node-address Services publish
    // the new ones (their passes write nothing to Ankra Cloud, and nothing to a Service whose ingress stays).
    // And when a node's server is about to go down (or no longer is), every Service looks again: the node drains
    // from its load balancer or ingress before the server goes down.
    this.#settings.servers.onRefresh(() => {
      if (signal.aborted) return;
      const moved = this.#steps.nodeAddresses.serversMoved();
      if (this.#pass.serversListed()) {
        for (const service of services.store.list()) {
          if (this.#wants(service)) this.#queue.add(objectKey(service));
        }
      } else if (moved) {
        for (const key of this.#nodeAddressPeers()) this.#queue.add(key);
      }
    });
    const version = await this.#settings.serverVersion();
    this.#pass.ipModes = version === undefined || keepsIpMode(version);
    try {
      await this.#steps.directory.prime(signal);
    } catch (cause) {
      if (signal.aborted) return;
      log.warn("could not list the account's load balancers; looking each Service's up by its labels", {
        error: cause,
      });
    }
    // A rotated token: Services that failed on the old one are retried now, not after their backoff.
    const stopTokenWatch = this.#settings.cloud.onTokenChange(() => this.#queue.retryFailedNow());
    signal.addEventListener("abort", stopTokenWatch, { once: true });
    if (endpoints) await waitForEndpoints(endpoints, signal);
    for (const service of services.store.list()) if (this.#relevant(service)) this.#queue.add(objectKey(service));
    this.#queue.start((key) => this.reconcile(key));
    const tracking = this.#follow(this.#steps.tracker.outcomes(signal));
    await whenAborted(signal);
    await this.#queue.shutdown();
    await tracking;
  }

  /** Reconciles one Service (`<namespace>/<name>`): one pass, in the turn of its share keys when it shares. */
  reconcile(key: string): Promise<ReconcileResult> {
    const service = this.#settings.services.store.get(key);
    if (!service) return Promise.resolve(undefined);
    const keys = [...new Set(shareKeys(service))].sort();
    return keys.reduceRight<() => Promise<ReconcileResult>>(
      (pass, shareKey) => () => this.#inTurn(shareKey, pass),
      () => this.#reconcile(key),
    )();
  }

  // Which other Services a change concerns (the watches above requeue them), each a named rule.

  /** True when `service` is served on node addresses. */
  #onNodes(service: SlimService): boolean {
    return this.#pass.modeOf(service) === "node-addresses";
  }

  /**
   * The node-address Services served here but `changed`: one that goes or changes may free a port another waits for,
   * and a server's new public address concerns them all.
   */
  #nodeAddressPeers(changed?: string): string[] {
    return this.#settings.services.store.list()
      .filter((other) => objectKey(other) !== changed && this.#wants(other) && this.#onNodes(other))
      .map(objectKey);
  }

  /** The other sharing Services of `keys` (any namespace) but `changed`: the change may concern them. */
  #sharers(changed: string, keys: readonly string[]): string[] {
    if (keys.length === 0) return [];
    return this.#settings.services.store.list()
      .filter((other) =>
        objectKey(other) !== changed && this.#relevant(other) && shareKeys(other).some((k) => keys.includes(k))
      )
      .map(objectKey);
  }

  #reconcile(key: string): Promise<ReconcileResult> {
    const service = this.#settings.services.store.get(key);
    if (!service) return Promise.resolve(undefined);
    if (needsCleanup(service, this.#settings.loadBalancerClass, this.#classRule)) return this.#pass.cleanup(service);
    if (!this.#wants(service)) return Promise.resolve(undefined);
    return this.#pass.ensure(service);
  }

  /**
   * Runs `pass` once every earlier pass queued for share key `shareKey` has ended. A pass holding several keys takes
   * them in sorted order ({@linkcode ServiceController.reconcile}), so two passes never wait for each other.
   */
  async #inTurn<T>(shareKey: string, pass: () => Promise<T>): Promise<T> {
    const before = this.#turns.get(shareKey) ?? Promise.resolve();
    const done = Promise.withResolvers<void>();
    const turn = before.then(() => done.promise);
    this.#turns.set(shareKey, turn);
    await before;
    try {
      return await pass();
    } finally {
      done.resolve();
      if (this.#turns.get(shareKey) === turn) this.#turns.delete(shareKey);
    }
  }

  /** Schedules what the tracker finds, until it stops (the controller's term ended). */
  async #follow(outcomes: AsyncGenerator<TrackedOutcome>): Promise<void> {
    for await (const outcome of outcomes) {
      if (outcome.kind === "served") this.#served(outcome.serviceKey, outcome.loadBalancer);
      else {
        const service = this.#settings.services.store.get(outcome.serviceKey);
        if (service) this.#steps.directory.invalidate(loadBalancerKeyOf(service));
        this.#queue.add(outcome.serviceKey);
      }
    }
  }

  /** The tracker saw the Service's load balancer get its address: written now, outside the queue; then the drift check. */
  #served(key: string, summary: LoadBalancer): void {
    const service = this.#settings.services.store.get(key);
    if (!service || needsCleanup(service, this.#settings.loadBalancerClass, this.#classRule)) return;
    this.#queue.addAfter(key, this.#settings.driftCheckMs);
    this.#pass.served(service, summary).catch(() => this.#queue.add(key));
  }
}

/** The share keys a Service is concerned with: the one it names and the one it last joined (they differ while it moves). */
function shareKeys(service: SlimService): string[] {
  return [shareKeyOf(service), recordedGroupOf(service)?.key].filter((key): key is string => key !== undefined);
}
