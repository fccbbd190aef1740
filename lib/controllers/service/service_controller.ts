/**
 * The service controller, rebuilt for Ankra load balancers. It only schedules: it watches Services, Nodes and
 * EndpointSlices, queues the Services a change concerns, and runs one pass per Service at a time
 * ({@linkcode ServicePass}: decide, move, find, plan, apply, tell — or clean up). Services sharing a load balancer
 * (`load-balancer.ankra.cloud/share`) take turns: one pass of a namespace's sharing Services at a time, so no two plan
 * against the same load balancer at once.
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
import { loadBalancerKeyOf, recordedShareOf, shareKeyOf } from "../../provider/service/load_balancer_sharing.ts";
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
  /** The turn each namespace's sharing Services wait for (the end of the last pass queued). */
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
      if (before && this.#steps.onNodes.onNodes(before)) {
        // A node-address Service that goes or changes may free a port another one waits for.
        for (const other of services.store.list()) {
          if (objectKey(other) !== change.key && this.#wants(other) && this.#steps.onNodes.onNodes(other)) {
            this.#queue.addAfter(objectKey(other), nodeBatchMs);
          }
        }
      }
      if (change.type === "deleted") {
        this.#steps.onNodes.forget(change.key);
        return;
      }
      if (change.type === "updated" && !serviceChangeMatters(change.old, change.object)) return;
      if (change.type === "updated" && serviceChangeNeedsRead(change.old, change.object)) {
        this.#pass.readNext.add(change.key);
      }
      if (this.#relevant(change.object)) this.#queue.add(change.key);
    });
    nodes.onChange((change) => {
      if (signal.aborted) return;
      if (change.type === "updated" && !nodeChangeMatters(change.old, change.object)) return;
      for (const service of services.store.list()) {
        if (this.#wants(service)) this.#queue.addAfter(objectKey(service), nodeBatchMs);
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

  /** Reconciles one Service (`<namespace>/<name>`): one pass, in its namespace's turn when it shares. */
  reconcile(key: string): Promise<ReconcileResult> {
    const service = this.#settings.services.store.get(key);
    if (!service) return Promise.resolve(undefined);
    const shares = shareKeyOf(service) !== undefined || recordedShareOf(service) !== undefined;
    return shares ? this.#inTurn(service.namespace, () => this.#reconcile(key)) : this.#reconcile(key);
  }

  #reconcile(key: string): Promise<ReconcileResult> {
    const service = this.#settings.services.store.get(key);
    if (!service) return Promise.resolve(undefined);
    if (needsCleanup(service, this.#settings.loadBalancerClass, this.#classRule)) return this.#pass.cleanup(service);
    if (!this.#wants(service)) return Promise.resolve(undefined);
    if (!this.#steps.onNodes.onNodes(service)) this.#steps.onNodes.forget(key);
    return this.#pass.ensure(service);
  }

  /** Runs `pass` once every earlier pass queued for `namespace`'s sharing Services has ended. */
  async #inTurn<T>(namespace: string, pass: () => Promise<T>): Promise<T> {
    const before = this.#turns.get(namespace) ?? Promise.resolve();
    const done = Promise.withResolvers<void>();
    const turn = before.then(() => done.promise);
    this.#turns.set(namespace, turn);
    await before;
    try {
      return await pass();
    } finally {
      done.resolve();
      if (this.#turns.get(namespace) === turn) this.#turns.delete(namespace);
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
