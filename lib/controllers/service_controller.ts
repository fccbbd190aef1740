/**
 * The service controller, rebuilt for Ankra load balancers. A pass over a Service is a short sequence of named steps:
 *
 * 1. **decide** what the Service asks for ({@linkcode serviceIntent}: settings, ports, members, notices) — pure;
 * 2. **tell** the user what cannot be honoured (each notice once per situation), and stop if the user must act;
 * 3. **find** its load balancer ({@linkcode LoadBalancerDirectory}: no API call in steady state);
 * 4. **place** a new one (zone, network, pair or single VM; cached facts);
 * 5. **plan** the calls with their bodies and the framework's events ({@linkcode planLoadBalancer}) — pure;
 * 6. **apply**: events, finalizer, calls, status — or, in a dry run, describe them.
 *
 * A load balancer that is still provisioning is handed to the {@linkcode ProvisioningTracker}, which writes the
 * address as soon as it is running, whatever the backlog of other Services. Deleting the Service deletes the load
 * balancer, waits until it is gone, then removes the finalizer. Edge mode
 * (`load-balancer.ankra.cloud/edge`) keeps the Service's members on a combined edge beside everyone else's; the edge
 * in use is recorded in the annotation `ccm.ankra.cloud/edge`, so leaving it removes the Service's members.
 *
 * @module
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import type { AnkraCloudClient, CreateLoadBalancerInput, LoadBalancer } from "../cloud/client.ts";
import { CloudApiError, isNotFound } from "../cloud/errors.ts";
import type { EventRecorder, ObjectReference } from "../kube/events.ts";
import type { Informer } from "../kube/informer.ts";
import { recordServiceEdge, setServiceFinalizer, writeServiceIngress } from "../kube/service_writes.ts";
import type { KubeWriteTarget } from "../kube/object_writes.ts";
import { EDGE_IN_USE_ANNOTATION, type SlimNode, type SlimService } from "../kube/slim.ts";
import * as log from "../log.ts";
import { edgeMembersWithout, planEdge } from "../provider/edge_plan.ts";
import {
  chooseHighAvailability,
  createLoadBalancerBody,
  immutableNotice,
  type LoadBalancerPlan,
  planLoadBalancer,
  type PlannedEvent,
  planServed,
  singleNodeMessage,
} from "../provider/load_balancer_plan.ts";
import { edgeMemberPrefix, loadBalancerLabels, loadBalancerName } from "../provider/load_balancer_names.ts";
import {
  chooseNetwork,
  chooseZone,
  EXCLUDE_LABEL,
  FINALIZER,
  type LoadBalancerDefaults,
  needsCleanup,
  needsNetworkLookup,
  type Notice,
  type ServiceIntent,
  serviceIntent,
  wantsLoadBalancer,
} from "../provider/service_plan.ts";
import type { CloudCall } from "../provider/cloud_calls.ts";
import { whenAborted } from "../runtime/abort.ts";
import type { DryRunReport } from "../runtime/dry_run.ts";
import type { MetricsRegistry } from "../runtime/metrics.ts";
import { WaitingForUser } from "../runtime/waiting_for_user.ts";
import { type ReconcileResult, WorkQueue } from "../runtime/work_queue.ts";
import { applyCloudCalls } from "./cloud_call_executor.ts";
import { LoadBalancerDirectory } from "./load_balancer_directory.ts";
import { PlacementFacts } from "./placement_facts.ts";
import { ProvisioningTracker } from "./provisioning_tracker.ts";

export { FINALIZER };

/** Options of {@linkcode ServiceController}. */
export interface ServiceControllerOptions {
  /** Where Kubernetes writes go (in a dry run: the report). */
  writes: KubeWriteTarget;
  /** Ankra Cloud client. */
  cloud: AnkraCloudClient;
  /** Services. */
  services: Informer<V1Service, SlimService>;
  /** Nodes. */
  nodes: Informer<V1Node, SlimNode>;
  /** `--cluster-name`. */
  clusterName: string;
  /** `--load-balancer-class`: also handle Services of this class. */
  loadBalancerClass?: string;
  /** Defaults for new load balancers. */
  defaults: LoadBalancerDefaults;
  /** Events with source `service-controller`. */
  serviceEvents: EventRecorder;
  /** Events with source `ankra-cloud-ccm`. */
  providerEvents: EventRecorder;
  /** Workers (`--concurrent-service-syncs`). */
  workers: number;
  /** Set in a dry run: cloud calls are described there and never sent. */
  dryRun?: DryRunReport;
  /** Least time between polls of provisioning load balancers (default 1 s). */
  provisioningPollMs?: number;
  /** Drift check period in steady state (default 10 min). */
  driftCheckMs?: number;
  /** Window that gathers a burst of node changes into one update (default 1 s). */
  nodeBatchMs?: number;
  /** Error backoff base (default 5 s). */
  retryBaseMs?: number;
  /** Metrics. */
  metrics?: MetricsRegistry;
}

function reference(service: SlimService): ObjectReference {
  return { kind: "Service", apiVersion: "v1", name: service.name, namespace: service.namespace, uid: service.uid };
}

function keyOf(service: { namespace: string; name: string }): string {
  return `${service.namespace}/${service.name}`;
}

/** A failure of a pass and how the framework words it. */
function failureEvent(cause: unknown, kind: "ensure" | "update" | "delete"): [string, string] {
  const message = cause instanceof Error ? cause.message : String(cause);
  if (kind === "update") return ["UpdateLoadBalancerFailed", `Error updating load balancer with new hosts: ${message}`];
  return ["SyncLoadBalancerFailed", `Error syncing load balancer: failed to ${kind} load balancer: ${message}`];
}

/** The service load balancer controller. */
export class ServiceController {
  /** Name for logs. */
  readonly name = "service";
  readonly #o: ServiceControllerOptions;
  readonly #queue: WorkQueue;
  readonly #directory: LoadBalancerDirectory;
  readonly #facts: PlacementFacts;
  readonly #tracker: ProvisioningTracker;
  /** Per Service UID: the message last reported under each notice topic. */
  readonly #reported = new Map<string, Map<string, string>>();
  /** Service UIDs with an `EnsuringLoadBalancer` not yet followed by `EnsuredLoadBalancer`. */
  readonly #ensuring = new Set<string>();
  /** Per Service UID, why the load balancer being created is a single VM. */
  readonly #singleReasons = new Map<string, string | undefined>();

  /** Creates the controller. */
  constructor(options: ServiceControllerOptions) {
    this.#o = options;
    this.#queue = new WorkQueue({
      name: "service",
      concurrency: options.workers,
      baseDelayMs: options.retryBaseMs ?? 5_000,
      metrics: options.metrics,
    });
    this.#directory = new LoadBalancerDirectory(options.cloud, {
      clusterName: options.clusterName,
      documentTtlMs: options.driftCheckMs ?? 600_000,
    });
    this.#facts = new PlacementFacts(options.cloud);
    this.#tracker = new ProvisioningTracker(options.cloud, {
      clusterName: options.clusterName,
      minPollMs: options.provisioningPollMs,
      onServed: (key, lb) => this.#served(key, lb),
      onLost: (key) => this.#queue.add(key),
      onListed: (summaries) => this.#directory.learn(summaries),
    });
  }

  #relevant(service: SlimService): boolean {
    return wantsLoadBalancer(service, this.#o.loadBalancerClass) || service.finalizers.includes(FINALIZER);
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { services, nodes } = this.#o;
    services.onChange((change) => {
      if (signal.aborted || change.type === "deleted") return;
      if (this.#relevant(change.object)) this.#queue.add(change.key);
    });
    nodes.onChange((change) => {
      if (signal.aborted) return;
      if (change.type === "updated" && !nodeChangeMatters(change.old, change.object)) return;
      for (const service of services.store.list()) {
        if (wantsLoadBalancer(service, this.#o.loadBalancerClass)) {
          this.#queue.addAfter(keyOf(service), this.#o.nodeBatchMs ?? 1_000);
        }
      }
    });
    try {
      await this.#directory.prime(signal);
    } catch (cause) {
      if (signal.aborted) return;
      log.warn("could not list the account's load balancers; looking each Service's up by its labels", {
        error: cause,
      });
    }
    for (const service of services.store.list()) if (this.#relevant(service)) this.#queue.add(keyOf(service));
    this.#queue.start((key) => this.reconcile(key));
    const tracking = this.#tracker.run(signal);
    await whenAborted(signal);
    await this.#queue.shutdown();
    await tracking;
  }

  /** Reconciles one Service (`<namespace>/<name>`). */
  async reconcile(key: string): Promise<ReconcileResult> {
    const service = this.#o.services.store.get(key);
    if (!service) return;
    if (needsCleanup(service, this.#o.loadBalancerClass)) return await this.#cleanup(service);
    if (!wantsLoadBalancer(service, this.#o.loadBalancerClass)) return;
    return await this.#ensure(service);
  }

  async #ensure(service: SlimService): Promise<ReconcileResult> {
    const o = this.#o;
    // 1. Decide what the Service asks for.
    const intent = serviceIntent(service, o.nodes.store.list(), {
      clusterName: o.clusterName,
      loadBalancerClass: o.loadBalancerClass,
      defaults: o.defaults,
    });
    // 2. Tell the user what cannot be honoured; stop where the user must act.
    this.#report(service, intent.notices);
    if (intent.waitFor) {
      if (!intent.waitFor.reported) this.#failed(service, "ensure", intent.waitFor.message);
      throw new WaitingForUser("SyncLoadBalancerFailed", intent.waitFor.message);
    }
    if (intent.noNodes) {
      o.serviceEvents.event(
        reference(service),
        "Warning",
        "UnAvailableLoadBalancer",
        "There are no available nodes for LoadBalancer",
      );
    }
    try {
      const recordedEdge = service.annotations[EDGE_IN_USE_ANNOTATION];
      if (recordedEdge && recordedEdge !== intent.settings.edgeId) await this.#leaveEdge(service, recordedEdge);
      if (intent.settings.edgeId) return await this.#ensureEdge(service, intent, intent.settings.edgeId);
      // 3. Find its load balancer.
      const found = await this.#directory.find(intent.key, {
        labels: intent.labels,
        name: intent.loadBalancerName,
        mayExist: service.finalizers.includes(FINALIZER),
      });
      if (found?.lb.state === "deleting") {
        throw new Error(`load balancer ${found.lb.id} is being deleted; a new one is created once it is gone`);
      }
      // 4. Place a new one.
      const target = found ? { existing: found.lb } : await this.#placement(service, intent);
      if (!target) return { requeueAfterMs: 30_000 };
      // 5. Plan.
      const plan = planLoadBalancer({
        intent,
        currentIngress: service.ingress,
        target,
        ensuringOpen: this.#ensuring.has(service.uid),
        adopt: found?.unlabelled ? { labels: intent.labels } : undefined,
      });
      if (found) this.#report(service, [immutableNotice(found.lb, intent.settings, o.defaults.networkId)]);
      if (o.dryRun && found && plan.calls.length === 0 && !plan.ingress) {
        o.dryRun.note("service", intent.key, `adopt load balancer ${found.lb.id} (${found.lb.name}); no change`);
      }
      // 6. Apply.
      return await this.#apply(service, intent, plan, found?.lb);
    } catch (cause) {
      this.#failed(service, "ensure", cause);
      throw cause;
    }
  }

  /** Zone, network and HA of a new load balancer; undefined while nodes are still being initialised. */
  async #placement(
    service: SlimService,
    intent: ServiceIntent,
  ): Promise<{ create: CreateLoadBalancerInput } | undefined> {
    const o = this.#o;
    if (intent.nodes.length === 0 && intent.pendingNodes > 0 && !intent.settings.zone && !o.defaults.zone) {
      log.info(2, "waiting for the nodes to be initialised before placing the load balancer", { service: intent.key });
      // A dry run initialises no node, so it says what the real run would do next.
      o.dryRun?.note(
        "service",
        intent.key,
        `would create load balancer ${intent.loadBalancerName} for Service ${intent.key} once its ` +
          `${intent.pendingNodes} node(s) are initialised (its zone and network come from them)`,
      );
      return undefined;
    }
    const zone = chooseZone(intent, o.defaults.zone);
    if (!zone.ok) throw new WaitingForUser("SyncLoadBalancerFailed", zone.problem);
    const networks = needsNetworkLookup(intent, o.defaults.networkId) ? await this.#facts.networks() : [];
    const network = chooseNetwork(intent, o.defaults.networkId, networks);
    if (!network.ok) throw new WaitingForUser("SyncLoadBalancerFailed", network.problem);
    const capabilities = o.defaults.highAvailability === "auto"
      ? await this.#facts.capabilities(zone.value)
      : undefined;
    const ha = chooseHighAvailability({ mode: o.defaults.highAvailability, zone: zone.value, capabilities });
    this.#singleReasons.set(service.uid, ha.singleReason);
    return { create: createLoadBalancerBody(intent, { zone: zone.value, networkId: network.value, pair: ha.pair }) };
  }

  async #apply(
    service: SlimService,
    intent: ServiceIntent,
    plan: LoadBalancerPlan,
    current: LoadBalancer | undefined,
  ): Promise<ReconcileResult> {
    const o = this.#o;
    const owner = { controller: "service", object: intent.key };
    this.#events(service, plan.events, "before");
    if (plan.calls.length > 0 || plan.ingress) await setServiceFinalizer(o.writes, service, FINALIZER, true);
    const membersOnly = plan.events.some((e) => e.reason === "UpdatedLoadBalancer");
    let result;
    try {
      result = await applyCloudCalls(o.cloud, plan.calls, {
        current,
        dryRun: o.dryRun,
        owner,
        onCreated: (lb) => this.#directory.remember(intent.key, lb, { full: false }),
      });
    } catch (cause) {
      this.#directory.invalidate(intent.key);
      if (cause instanceof CloudApiError && cause.reason?.startsWith("idempotency_key_")) {
        this.#directory.markUncertain(intent.key);
      }
      if (membersOnly) {
        this.#failed(service, "update", cause);
        throw new AlreadyReported(cause);
      }
      throw cause;
    }
    const lb = result.loadBalancer;
    if (lb && !o.dryRun) this.#directory.remember(intent.key, lb, { full: true });
    if (result.created && lb) {
      log.info(0, "created load balancer", {
        service: intent.key,
        loadBalancer: lb.id,
        zone: lb.zone,
        highAvailability: (plan.calls[0] as Extract<CloudCall, { operation: "create_load_balancer" }>).body
          .high_availability !== false,
        publicIPv4: intent.settings.ipv4,
      });
      const reason = this.#singleReasons.get(service.uid);
      if (reason) {
        o.providerEvents.event(
          reference(service),
          "Normal",
          "SingleNodeLoadBalancer",
          singleNodeMessage(lb.id, reason),
        );
      }
    }
    this.#singleReasons.delete(service.uid);
    if (plan.ingress) await writeServiceIngress(o.writes, service, plan.ingress);
    this.#events(service, plan.events, "after");
    if (plan.served || o.dryRun || !lb) return { requeueAfterMs: o.driftCheckMs ?? 600_000 };
    this.#tracker.track(lb.id, intent.key);
    // The tracker writes the address; this is only the fallback if it never reports.
    return { requeueAfterMs: 60_000 };
  }

  /** The tracker saw the Service's load balancer get its address: write it now, outside the queue. */
  #served(key: string, summary: LoadBalancer): void {
    const service = this.#o.services.store.get(key);
    if (!service || needsCleanup(service, this.#o.loadBalancerClass)) return;
    this.#directory.update(key, summary);
    this.#queue.addAfter(key, this.#o.driftCheckMs ?? 600_000);
    const plan = planServed(service.ingress, summary, this.#ensuring.has(service.uid));
    const write = plan.ingress ? writeServiceIngress(this.#o.writes, service, plan.ingress) : Promise.resolve();
    write.then(() => {
      this.#events(service, plan.events, "before");
      this.#events(service, plan.events, "after");
      log.info(1, "load balancer is serving", { service: key, loadBalancer: summary.id });
    }).catch((cause) => {
      log.warn("could not write the Service's address; the next pass retries", { service: key, error: cause });
      this.#queue.add(key);
    });
  }

  async #ensureEdge(service: SlimService, intent: ServiceIntent, edgeId: string): Promise<ReconcileResult> {
    const o = this.#o;
    let edge;
    try {
      edge = await o.cloud.getEdge(edgeId);
    } catch (cause) {
      if (isNotFound(cause)) {
        throw new WaitingForUser(
          "SyncLoadBalancerFailed",
          `edge ${edgeId} (load-balancer.ankra.cloud/edge) does not exist in the account`,
        );
      }
      throw cause;
    }
    const recordChanges = service.annotations[EDGE_IN_USE_ANNOTATION] !== edgeId;
    const plan = planEdge(edge, intent, {
      currentIngress: service.ingress,
      ensuringOpen: this.#ensuring.has(service.uid),
      recordChanges,
    });
    if (!plan.ok) throw new WaitingForUser("SyncLoadBalancerFailed", plan.problem);
    this.#events(service, plan.events, "before");
    if (plan.calls.length > 0 || plan.ingress || recordChanges) {
      await setServiceFinalizer(o.writes, service, FINALIZER, true);
    }
    if (recordChanges) await recordServiceEdge(o.writes, service, edgeId);
    await applyCloudCalls(o.cloud, plan.calls, {
      dryRun: o.dryRun,
      owner: { controller: "service", object: intent.key },
    });
    if (plan.calls.length > 0) log.info(1, "updated edge members", { edge: edgeId, service: intent.key });
    // A dedicated load balancer the Service had before is retired.
    const dedicated = await this.#directory.find(intent.key, {
      labels: intent.labels,
      name: intent.loadBalancerName,
      mayExist: service.finalizers.includes(FINALIZER),
    });
    if (dedicated && !dedicated.unlabelled && dedicated.lb.state !== "deleting") {
      o.serviceEvents.event(reference(service), "Normal", "DeletingLoadBalancer", "Deleting load balancer");
      await applyCloudCalls(o.cloud, [{ operation: "delete_load_balancer", loadBalancer: { id: dedicated.lb.id } }], {
        dryRun: o.dryRun,
        owner: { controller: "service", object: intent.key },
      });
      this.#directory.forget(intent.key);
    }
    if (plan.ingress) await writeServiceIngress(o.writes, service, plan.ingress);
    this.#events(service, plan.events, "after");
    return { requeueAfterMs: plan.served ? (o.driftCheckMs ?? 600_000) : (o.provisioningPollMs ?? 2_000) };
  }

  /** Removes the Service's members from an edge it no longer uses, then forgets that edge. */
  async #leaveEdge(service: SlimService, edgeId: string): Promise<void> {
    const o = this.#o;
    const key = keyOf(service);
    try {
      const edge = await o.cloud.getEdge(edgeId);
      const rest = edgeMembersWithout(edge, edgeMemberPrefix(o.clusterName, service.namespace, service.name));
      if (rest) {
        await applyCloudCalls(o.cloud, [{ operation: "update_edge", edgeId, body: { members: rest } }], {
          dryRun: o.dryRun,
          owner: { controller: "service", object: key },
        }).catch((cause) => {
          if (!isNotFound(cause)) throw cause;
        });
        log.info(1, "removed the Service's members from its former edge", { service: key, edge: edgeId });
      }
    } catch (cause) {
      if (!isNotFound(cause)) throw cause;
    }
    if (!service.deletionTimestamp) await recordServiceEdge(o.writes, service, null);
  }

  async #cleanup(service: SlimService): Promise<ReconcileResult> {
    const o = this.#o;
    const key = keyOf(service);
    try {
      const recordedEdge = service.annotations[EDGE_IN_USE_ANNOTATION];
      if (recordedEdge) await this.#leaveEdge(service, recordedEdge);
      const found = await this.#directory.find(key, {
        labels: loadBalancerLabels(o.clusterName, service.namespace, service.name),
        name: loadBalancerName(o.clusterName, service.namespace, service.name),
        mayExist: true,
      });
      if (found && !found.unlabelled) {
        this.#tracker.untrack(key);
        if (found.lb.state !== "deleting") {
          o.serviceEvents.event(reference(service), "Normal", "DeletingLoadBalancer", "Deleting load balancer");
          await applyCloudCalls(o.cloud, [{ operation: "delete_load_balancer", loadBalancer: { id: found.lb.id } }], {
            dryRun: o.dryRun,
            owner: { controller: "service", object: key },
          });
          log.info(1, "deleting load balancer", { service: key, loadBalancer: found.lb.id });
        }
        this.#directory.invalidate(key);
        if (o.dryRun) return;
        return { requeueAfterMs: o.provisioningPollMs ?? 2_000 };
      }
      await setServiceFinalizer(o.writes, service, FINALIZER, false);
      if (!service.deletionTimestamp && service.ingress.length > 0) {
        await writeServiceIngress(o.writes, service, null);
      }
    } catch (cause) {
      this.#failed(service, "delete", cause);
      throw cause;
    }
    this.#directory.forget(key);
    this.#reported.delete(service.uid);
    this.#ensuring.delete(service.uid);
    o.serviceEvents.event(reference(service), "Normal", "DeletedLoadBalancer", "Deleted load balancer");
  }

  /**
   * Records the planned events of `when`, keeping `EnsuringLoadBalancer` and `EnsuredLoadBalancer` paired whatever
   * interleaves (a pass and the provisioning tracker may both see the address first): an Ensuring only when none is
   * open, an Ensured only to close an open one.
   */
  #events(service: SlimService, events: PlannedEvent[], when: "before" | "after"): void {
    for (const e of events) {
      if (e.when !== when) continue;
      if (e.reason === "EnsuringLoadBalancer") {
        if (this.#ensuring.has(service.uid)) continue;
        this.#ensuring.add(service.uid);
      } else if (e.reason === "EnsuredLoadBalancer") {
        if (!this.#ensuring.delete(service.uid)) continue;
      }
      this.#o.serviceEvents.event(reference(service), e.type, e.reason, e.message);
    }
  }

  #failed(service: SlimService, kind: "ensure" | "update" | "delete", cause: unknown): void {
    if (cause instanceof AlreadyReported) return;
    const [reason, message] = failureEvent(cause, kind);
    this.#o.serviceEvents.event(reference(service), "Warning", reason, message);
  }

  /** Records each notice once per situation: repeated only when its message changes; cleared when it is over. */
  #report(service: SlimService, notices: Notice[]): void {
    const seen = this.#reported.get(service.uid) ?? new Map<string, string>();
    this.#reported.set(service.uid, seen);
    for (const notice of notices) {
      if (notice.message === undefined) {
        seen.delete(notice.topic);
        continue;
      }
      if (seen.get(notice.topic) === notice.message) continue;
      seen.set(notice.topic, notice.message);
      this.#o.providerEvents.event(reference(service), "Warning", notice.reason, notice.message);
    }
  }
}

/** An error whose event was already recorded (the queue still retries it). */
class AlreadyReported extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** True when a node change can change a load balancer's members (or what its Service is told). */
export function nodeChangeMatters(old: SlimNode, node: SlimNode): boolean {
  return old.providerID !== node.providerID || old.k3sNodeArgs !== node.k3sNodeArgs ||
    Boolean(old.deletionTimestamp) !== Boolean(node.deletionTimestamp) ||
    old.labels[EXCLUDE_LABEL] !== node.labels[EXCLUDE_LABEL] ||
    old.labels["topology.kubernetes.io/zone"] !== node.labels["topology.kubernetes.io/zone"] ||
    old.taints.some((t) => t.key === "ToBeDeletedByClusterAutoscaler") !==
      node.taints.some((t) => t.key === "ToBeDeletedByClusterAutoscaler") ||
    JSON.stringify(old.addresses) !== JSON.stringify(node.addresses);
}
