/**
 * The service controller, rebuilt for Ankra load balancers: it watches Services, Nodes and EndpointSlices, queues the
 * Services a change concerns, and runs one pass per Service at a time ({@linkcode ServicePass}: decide, tell, find,
 * place, plan, apply — or clean up). Services sharing a load balancer (`load-balancer.ankra.cloud/share`) take turns:
 * one pass of a namespace's sharing Services at a time, so no two plan against the same load balancer at once.
 *
 * A load balancer that is still provisioning is handed to the {@linkcode ProvisioningTracker}, which writes the
 * address as soon as it is running, whatever the backlog of other Services. Deleting the Service deletes the load
 * balancer (or takes its listeners off a shared one), waits until it is gone, then removes the finalizer.
 *
 * @module
 */
import type { LoadBalancer } from "../../cloud/client.ts";
import { waitForEndpoints } from "../../kube/endpoint_slices.ts";
import { objectKey } from "../../kube/object_key.ts";
import type { SlimService } from "../../kube/slim.ts";
import * as log from "../../log.ts";
import { parseAnnotations } from "../../provider/service/annotations.ts";
import { planServed } from "../../provider/service/load_balancer_plan.ts";
import { loadBalancerKeyOf, recordedShareOf, shareKeyOf } from "../../provider/service/load_balancer_sharing.ts";
import { isLocalTraffic } from "../../provider/service/local_traffic.ts";
import { servingState } from "../../provider/service/ready_condition.ts";
import {
  nodeChangeMatters,
  serviceChangeMatters,
  serviceChangeNeedsRead,
} from "../../provider/service/service_changes.ts";
import { keepsIpMode } from "../../provider/service/service_ingress.ts";
import { type ClassRule, FINALIZER, needsCleanup, wantsLoadBalancer } from "../../provider/service/service_plan.ts";
import { whenAborted } from "../../runtime/abort.ts";
import { type ReconcileResult, WorkQueue } from "../../runtime/work_queue.ts";
import { DEFAULTS } from "../../defaults.ts";
import type { TrackedOutcome } from "./provisioning_tracker.ts";
import type { ServiceControllerOptions } from "./service_controller_options.ts";
import { type PassReport, ServicePass } from "./service_pass.ts";
import { failedState } from "./service_readiness.ts";
import { type PassSteps, passSteps } from "./service_steps.ts";

export { FINALIZER };
export type { ServiceControllerOptions };
export { nodeChangeMatters };

/** The service load balancer controller. */
export class ServiceController {
  /** The `--controllers` name; `buildControllers` runs it in a wrapper of that name, which is what gets logged. */
  readonly name = "service";
  readonly #o: ServiceControllerOptions;
  readonly #classRule: ClassRule;
  readonly #driftMs: number;
  readonly #queue: WorkQueue;
  readonly #steps: PassSteps;
  readonly #pass: ServicePass;
  /** The turn each namespace's sharing Services wait for (the end of the last pass queued). */
  readonly #turns = new Map<string, Promise<void>>();

  /** Creates the controller and the steps of its passes; {@linkcode ServiceController.run} starts it. */
  constructor(options: ServiceControllerOptions) {
    this.#o = options;
    this.#classRule = { requireClass: options.requireLoadBalancerClass };
    this.#driftMs = options.driftCheckMs ?? DEFAULTS.driftCheckMs;
    this.#queue = new WorkQueue({
      name: "service",
      concurrency: options.workers,
      baseDelayMs: options.retryBaseMs ?? DEFAULTS.retryBaseMs,
      metrics: options.metrics,
    });
    this.#steps = passSteps(options, this.#driftMs);
    this.#pass = new ServicePass(options, this.#steps, this.#driftMs);
    options.metrics?.gauge(
      "ankra_ccm_load_balancers_provisioning",
      "Load balancers created and waiting for their address.",
      () => this.#steps.tracker.size,
    );
    options.metrics?.gauge(
      "ankra_ccm_load_balancers_served",
      "LoadBalancer Services of this controller that have an address.",
      () =>
        this.#o.services.store.list().filter((s) =>
          wantsLoadBalancer(s, this.#o.loadBalancerClass, this.#classRule) && !s.deletionTimestamp &&
          s.ingress.length > 0
        ).length,
    );
  }

  #relevant(service: SlimService): boolean {
    return wantsLoadBalancer(service, this.#o.loadBalancerClass, this.#classRule) ||
      service.finalizers.includes(FINALIZER);
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { services, nodes, endpoints } = this.#o;
    endpoints?.onChange((key) => {
      const service = services.store.get(key);
      if (signal.aborted || !service || !isLocalTraffic(service)) return;
      if (wantsLoadBalancer(service, this.#o.loadBalancerClass, this.#classRule)) {
        this.#queue.addAfter(key, this.#o.endpointBatchMs ?? DEFAULTS.endpointBatchMs);
      }
    });
    services.onChange((change) => {
      if (signal.aborted || change.type === "deleted") return;
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
        if (wantsLoadBalancer(service, this.#o.loadBalancerClass, this.#classRule)) {
          this.#queue.addAfter(objectKey(service), this.#o.nodeBatchMs ?? DEFAULTS.nodeBatchMs);
        }
      }
    });
    const version = await this.#o.writes.serverVersion();
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
    const stopTokenWatch = this.#o.cloud.onTokenChange(() => this.#queue.retryFailedNow());
    signal.addEventListener("abort", stopTokenWatch, { once: true });
    if (endpoints) await waitForEndpoints(endpoints, signal);
    for (const service of services.store.list()) if (this.#relevant(service)) this.#queue.add(objectKey(service));
    this.#queue.start((key) => this.reconcile(key));
    const tracking = this.#follow(this.#steps.tracker.outcomes(signal));
    await whenAborted(signal);
    await this.#queue.shutdown();
    await tracking;
  }

  /** Reconciles one Service (`<namespace>/<name>`). */
  reconcile(key: string): Promise<ReconcileResult> {
    const service = this.#o.services.store.get(key);
    if (!service) return Promise.resolve(undefined);
    const shares = shareKeyOf(service) !== undefined || recordedShareOf(service) !== undefined;
    return shares ? this.#inTurn(service.namespace, () => this.#reconcile(key)) : this.#reconcile(key);
  }

  async #reconcile(key: string): Promise<ReconcileResult> {
    const service = this.#o.services.store.get(key);
    if (!service) return;
    if (needsCleanup(service, this.#o.loadBalancerClass, this.#classRule)) return await this.#pass.cleanup(service);
    if (!wantsLoadBalancer(service, this.#o.loadBalancerClass, this.#classRule)) return;
    // Each pass ends with the Service's Ready condition: what the pass found, or why it failed.
    const report: PassReport = {};
    try {
      const result = await this.#pass.ensure(service, report);
      if (report.state) await this.#steps.readiness.report(service, report.state);
      return result;
    } catch (cause) {
      await this.#steps.readiness.report(service, report.state ?? failedState(cause));
      throw cause;
    }
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

  /** Takes in what the tracker finds, until it stops (the controller's term ended). */
  async #follow(outcomes: AsyncGenerator<TrackedOutcome>): Promise<void> {
    for await (const outcome of outcomes) {
      if (outcome.kind === "served") this.#served(outcome.serviceKey, outcome.loadBalancer);
      else {
        const service = this.#o.services.store.get(outcome.serviceKey);
        if (service) this.#steps.directory.invalidate(loadBalancerKeyOf(service));
        this.#queue.add(outcome.serviceKey);
      }
    }
  }

  /** The tracker saw the Service's load balancer get its address: write it now, outside the queue. */
  #served(key: string, summary: LoadBalancer): void {
    const service = this.#o.services.store.get(key);
    if (!service || needsCleanup(service, this.#o.loadBalancerClass, this.#classRule)) return;
    this.#steps.directory.update(loadBalancerKeyOf(service), summary);
    this.#queue.addAfter(key, this.#driftMs);
    const parsed = parseAnnotations(service.annotations, { sessionAffinity: service.sessionAffinity });
    const plan = planServed(service.ingress, summary, {
      ensuringOpen: this.#steps.reporter.ensuringOpen(service),
      ingressStyle: this.#pass.ingressStyle(service, parsed.ok ? parsed.settings : undefined),
    });
    const write = plan.ingress ? this.#o.writes.writeIngress(service, plan.ingress) : Promise.resolve();
    write.then(() => {
      this.#steps.reporter.planned(service, plan.events, "before");
      this.#steps.reporter.planned(service, plan.events, "after");
      const addresses = (plan.ingress ?? service.ingress).flatMap((i) => (i.ip ? [i.ip] : []));
      void this.#steps.readiness.report(service, servingState(`load balancer ${summary.id}`, addresses));
      log.info(1, "load balancer is serving", { service: key, loadBalancer: summary.id });
    }).catch((cause) => {
      log.warn("could not write the Service's address; the next pass retries", { service: key, error: cause });
      this.#queue.add(key);
    });
  }
}
