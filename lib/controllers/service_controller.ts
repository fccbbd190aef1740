/**
 * The service controller, rebuilt for Ankra load balancers. A pass over a Service is a short sequence of named steps:
 *
 * 1. **decide** what the Service asks for ({@linkcode servingIntent}: settings, ports, members, notices) — pure;
 * 2. **tell** the user what cannot be honoured (each notice once per situation), and stop if the user must act;
 * 3. **find** its load balancer ({@linkcode LoadBalancerDirectory}: no API call for a node change; a change of the
 *    Service, an earlier 404 and the drift check read the real one, and a missing one is made again);
 * 4. **place** a new one (zone, network, pair or single VM; cached facts);
 * 5. **plan** the calls with their bodies and the framework's events ({@linkcode planLoadBalancer}) — pure;
 * 6. **apply** ({@linkcode ServiceApply}): events, finalizer, calls, status — or, in a dry run, describe them.
 *
 * A load balancer that is still provisioning is handed to the {@linkcode ProvisioningTracker}, which writes the
 * address as soon as it is running, whatever the backlog of other Services. Deleting the Service deletes the load
 * balancer, waits until it is gone, then removes the finalizer. Edge mode is in {@linkcode ServiceEdge}; what the
 * user is told is in {@linkcode ServiceReporter}.
 *
 * @module
 */
import type { LoadBalancer } from "../cloud/client.ts";
import { objectKey } from "../kube/object_key.ts";
import { EDGE_IN_USE_ANNOTATION, type SlimService } from "../kube/slim.ts";
import * as log from "../log.ts";
import { handMadePortsNotice, immutableNotice, planLoadBalancer, planServed } from "../provider/load_balancer_plan.ts";
import { parseAnnotations } from "../provider/annotations.ts";
import { ingressIpMode, keepsIpMode } from "../provider/service_ingress.ts";
import { nodeChangeMatters, serviceChangeMatters, serviceChangeNeedsRead } from "../provider/service_changes.ts";
import { type ClassRule, FINALIZER, needsCleanup, wantsLoadBalancer } from "../provider/service_plan.ts";
import { whenAborted } from "../runtime/abort.ts";
import { waitForEndpoints } from "../kube/endpoint_slices.ts";
import { isLocalTraffic, servingIntent } from "../provider/local_traffic.ts";
import { withinAllowedResources } from "../provider/allowed_resources.ts";
import { WaitingForUser } from "../runtime/waiting_for_user.ts";
import { type ReconcileResult, WorkQueue } from "../runtime/work_queue.ts";
import { type CloudCallSender, cloudCallSender } from "./cloud_call_executor.ts";
import { EdgeMembership } from "./edge_membership.ts";
import { clusterNameCollision, LoadBalancerDirectory } from "./load_balancer_directory.ts";
import { ServiceLookup } from "./service_lookup.ts";
import { PlacementFacts } from "./placement_facts.ts";
import { LoadBalancerPlacement } from "./load_balancer_placement.ts";
import { ProvisioningTracker, type TrackedOutcome } from "./provisioning_tracker.ts";
import { ServiceCleanup } from "./service_cleanup.ts";
import { ServiceEdge } from "./service_edge.ts";
import { ServiceReporter } from "./service_reporter.ts";
import { ServiceApply } from "./service_apply.ts";
import type { ServiceControllerOptions } from "./service_controller_options.ts";
import { failedState, ServiceReadiness } from "./service_readiness.ts";
import { notReady, type ReadyState, servingState, waitingState } from "../provider/ready_condition.ts";
import { DEFAULTS } from "../defaults.ts";

export { FINALIZER };
export type { ServiceControllerOptions };
export { nodeChangeMatters };

/** What a pass found for the Service's Ready condition (set by the step that knows it). */
interface PassReport {
  state?: ReadyState;
}

/**
 * The steps of a pass, each built once from the controller's options: none is handed another through a closure, and
 * each imports only the steps below it (edge → cleanup → edge membership; apply and cleanup → tracker → directory).
 */
interface PassSteps {
  directory: LoadBalancerDirectory;
  placement: LoadBalancerPlacement;
  tracker: ProvisioningTracker;
  reporter: ServiceReporter;
  readiness: ServiceReadiness;
  send: CloudCallSender;
  cleanup: ServiceCleanup;
  edge: ServiceEdge;
  edges: EdgeMembership;
  lookup: ServiceLookup;
  apply: ServiceApply;
}

function passSteps(o: ServiceControllerOptions, driftMs: number): PassSteps {
  const pollMs = o.provisioningPollMs ?? DEFAULTS.provisioningPollMs;
  const directory = new LoadBalancerDirectory(o.cloud, {
    clusterName: o.clusterName,
    clusterUid: o.clusterUid,
    documentTtlMs: driftMs,
  });
  const tracker = new ProvisioningTracker(o.cloud, { clusterName: o.clusterName, minPollMs: pollMs, directory });
  const reporter = new ServiceReporter(o);
  const send = cloudCallSender(o.cloud, { controller: "service", dryRun: o.dryRun });
  const edges = new EdgeMembership({
    cloud: o.cloud,
    send,
    writes: o.writes,
    clusterName: o.clusterName,
    clusterUid: o.clusterUid,
  });
  const cleanup = new ServiceCleanup({
    directory,
    tracker,
    reporter,
    send,
    writes: o.writes,
    clusterName: o.clusterName,
    clusterUid: o.clusterUid,
    edges,
    deletePollMs: pollMs,
  });
  return {
    directory,
    placement: new LoadBalancerPlacement({
      facts: new PlacementFacts(o.cloud),
      defaults: o.defaults,
      dryRun: o.dryRun,
    }),
    tracker,
    reporter,
    readiness: new ServiceReadiness(o.writes),
    send,
    cleanup,
    edge: new ServiceEdge({
      cloud: o.cloud,
      send,
      writes: o.writes,
      reporter,
      cleanup,
      driftCheckMs: driftMs,
      provisioningPollMs: pollMs,
    }),
    edges,
    lookup: new ServiceLookup({ directory, cleanup, recheckAfterMs: driftMs }),
    apply: new ServiceApply({
      writes: o.writes,
      directory,
      tracker,
      reporter,
      send,
      driftCheckMs: driftMs,
      dryRun: o.dryRun !== undefined,
    }),
  };
}

/** The service load balancer controller. */
export class ServiceController {
  /** Name for logs. */
  readonly name = "service";
  readonly #o: ServiceControllerOptions;
  readonly #classRule: ClassRule;
  readonly #driftMs: number;
  readonly #queue: WorkQueue;
  readonly #steps: PassSteps;
  /** Services whose next pass reads the real load balancer (the Service changed since its last read). */
  readonly #readNext = new Set<string>();
  /** False when the API server strips an ingress `ipMode` (before 1.30): none is published then. */
  #ipModes = true;
  /** The members draining on each Service's load balancer: listener → member → since (epoch ms). */
  readonly #drains = new Map<string, Map<string, Map<string, number>>>();

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
        this.#readNext.add(change.key);
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
    this.#ipModes = version === undefined || keepsIpMode(version);
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
  async reconcile(key: string): Promise<ReconcileResult> {
    const service = this.#o.services.store.get(key);
    if (!service) return;
    if (needsCleanup(service, this.#o.loadBalancerClass, this.#classRule)) {
      this.#drains.delete(key);
      this.#steps.placement.forget(key);
      const { result, gone } = await this.#steps.cleanup.cleanup(service);
      if (gone) this.#readNext.delete(key);
      await this.#steps.readiness.clear(service);
      return result;
    }
    if (!wantsLoadBalancer(service, this.#o.loadBalancerClass, this.#classRule)) return;
    // Each pass ends with the Service's Ready condition: what the pass found, or why it failed.
    const pass: PassReport = {};
    try {
      const result = await this.#ensure(service, pass);
      if (pass.state) await this.#steps.readiness.report(service, pass.state);
      return result;
    } catch (cause) {
      await this.#steps.readiness.report(service, pass.state ?? failedState(cause));
      throw cause;
    }
  }

  async #ensure(service: SlimService, pass: PassReport): Promise<ReconcileResult> {
    const o = this.#o;
    // 1. Decide what the Service asks for.
    const asked = servingIntent(service, o.nodes.store.list(), {
      clusterName: o.clusterName,
      clusterUid: o.clusterUid,
      loadBalancerClass: o.loadBalancerClass,
      defaults: o.defaults,
      readyNodes: o.endpoints?.readyNodes(objectKey(service)),
    });
    const intent = withinAllowedResources(asked, o.allowedResources ?? {});
    // 2. Tell the user what cannot be honoured; stop where the user must act.
    this.#steps.reporter.notices(service, intent.notices);
    if (intent.waitFor) {
      pass.state = waitingState(intent);
      if (!intent.waitFor.reported) this.#steps.reporter.failed(service, "ensure", intent.waitFor.message);
      throw new WaitingForUser("SyncLoadBalancerFailed", intent.waitFor.message);
    }
    if (intent.noNodes) {
      this.#steps.reporter.service(
        service,
        "Warning",
        "UnAvailableLoadBalancer",
        "There are no available nodes for LoadBalancer",
      );
    }
    const fresh = this.#readNext.delete(intent.key);
    try {
      const recordedEdge = service.annotations[EDGE_IN_USE_ANNOTATION];
      if (recordedEdge && recordedEdge !== intent.settings.edgeId) await this.#steps.edges.leave(service, recordedEdge);
      if (intent.settings.edgeId) {
        const edgeId = intent.settings.edgeId;
        const edgePass = await this.#steps.edge.ensure(service, intent, {
          edgeId,
          ipMode: this.#ipModes ? ingressIpMode(intent.settings) : undefined,
        });
        pass.state = edgePass.served
          ? servingState(`edge ${edgeId}`)
          : notReady("Creating", `edge ${edgeId} has no address yet`);
        return { requeueAfterMs: edgePass.requeueAfterMs };
      }
      // 3. Find its load balancer: the real one when the Service changed; the one it names, if it names one.
      const found = await this.#steps.lookup.find(service, intent, fresh);
      if (found?.foreign) throw clusterNameCollision(found.lb, this.#driftMs);
      if (found?.lb.state === "deleting") {
        throw new Error(`load balancer ${found.lb.id} is being deleted; a new one is created once it is gone`);
      }
      // 4. Place a new one; the members are the nodes' addresses on the load balancer's network.
      const placement = found ? undefined : await this.#steps.placement.place(service, intent);
      if (!found && !placement) {
        pass.state = notReady("WaitingForNodes", `waiting for ${intent.pendingNodes} node(s) to be initialised`);
        return { requeueAfterMs: DEFAULTS.waitingForNodesRecheckMs };
      }
      const placed = placement ??
        (found?.lb.network_id
          ? await this.#steps.placement.onNetwork(service, intent, found.lb.network_id)
          : undefined);
      if (placed) this.#steps.reporter.notices(service, [placed.notice]);
      const members = placed?.members ?? intent.members;
      // 5. Plan.
      const plan = planLoadBalancer({
        intent: { ...intent, members },
        currentIngress: service.ingress,
        ipMode: this.#ipModes ? ingressIpMode(intent.settings) : undefined,
        target: found ? { existing: found.lb } : { create: placement!.create },
        ensuringOpen: this.#steps.reporter.ensuringOpen(service),
        adopt: found?.unlabelled ? { labels: intent.labels } : undefined,
        drain: { periodMs: o.memberDrainMs ?? 0, now: Date.now(), draining: this.#drains.get(intent.key) ?? new Map() },
      });
      if (found) {
        this.#steps.reporter.notices(service, [
          immutableNotice(found.lb, intent.settings, o.defaults.networkId),
          handMadePortsNotice(found.lb, intent),
        ]);
      }
      if (o.dryRun && found && plan.calls.length === 0 && !plan.ingress) {
        o.dryRun.note("service", intent.key, `adopt load balancer ${found.lb.id} (${found.lb.name}); no change`);
      }
      // 6. Apply.
      const result = await this.#steps.apply.apply(service, intent, { plan, current: found?.lb, placement });
      // Members draining: remembered once sent, and a pass is due when the first drain ends.
      if (plan.drain.draining.size > 0) this.#drains.set(intent.key, plan.drain.draining);
      else this.#drains.delete(intent.key);
      if (plan.drain.nextAtMs !== undefined && result.result) {
        const dueInMs = Math.max(0, plan.drain.nextAtMs - Date.now());
        result.result.requeueAfterMs = Math.min(result.result.requeueAfterMs, dueInMs);
      }
      pass.state = intent.noNodes
        ? notReady("NoEligibleNodes", "There are no available nodes for LoadBalancer")
        : result.state;
      return result.result;
    } catch (cause) {
      if (fresh) this.#readNext.add(intent.key);
      throw this.#steps.reporter.failed(service, "ensure", cause);
    }
  }

  /** Takes in what the tracker finds, until it stops (the controller's term ended). */
  async #follow(outcomes: AsyncGenerator<TrackedOutcome>): Promise<void> {
    for await (const outcome of outcomes) {
      if (outcome.kind === "served") this.#served(outcome.serviceKey, outcome.loadBalancer);
      else {
        this.#steps.directory.invalidate(outcome.serviceKey);
        this.#queue.add(outcome.serviceKey);
      }
    }
  }

  /** The tracker saw the Service's load balancer get its address: write it now, outside the queue. */
  #served(key: string, summary: LoadBalancer): void {
    const service = this.#o.services.store.get(key);
    if (!service || needsCleanup(service, this.#o.loadBalancerClass, this.#classRule)) return;
    this.#steps.directory.update(key, summary);
    this.#queue.addAfter(key, this.#driftMs);
    const parsed = parseAnnotations(service.annotations, { sessionAffinity: service.sessionAffinity });
    const plan = planServed(service.ingress, summary, {
      ensuringOpen: this.#steps.reporter.ensuringOpen(service),
      ipMode: this.#ipModes && parsed.ok ? ingressIpMode(parsed.settings) : undefined,
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
