/**
 * One pass over a Service, as a short sequence of named steps ({@linkcode ServicePass.ensure}):
 *
 * 1. **decide** what the Service asks for (`servingIntent`: settings, ports, members, notices) — pure;
 * 2. **tell** the user what cannot be honoured (each notice once per situation), and stop if the user must act;
 *    leave an edge or a share group the Service no longer names; go to an edge it names; check it against the other
 *    Services of its share group and join it;
 * 3. **find** its load balancer (`ServiceLookup`: no API call for a node change; a change of the Service, an earlier
 *    404 and the drift check read the real one, and a missing one is made again);
 * 4. **place** a new one (zone, network, pair or single VM; cached facts);
 * 5. **plan** the calls with their bodies and the framework's events (`planLoadBalancer`) — pure; on a shared load
 *    balancer the other Services' listeners are never touched;
 * 6. **apply** (`ServiceApply`): events, finalizer, calls, status — or, in a dry run, describe them.
 *
 * And the pass over a Service whose load balancer must go ({@linkcode ServicePass.cleanup}): off its share group, then
 * its edge and its own load balancer (`ServiceCleanup`).
 *
 * @module
 */
import { objectKey } from "../../kube/object_key.ts";
import { EDGE_IN_USE_ANNOTATION, type SlimService } from "../../kube/slim.ts";
import { withinAllowedResources } from "../../provider/service/allowed_resources.ts";
import type { LoadBalancerSettings } from "../../provider/service/annotations.ts";
import { handMadePortsNotice } from "../../provider/service/listener_plan.ts";
import { immutableNotice, planLoadBalancer } from "../../provider/service/load_balancer_plan.ts";
import { recordedShareOf } from "../../provider/service/load_balancer_sharing.ts";
import { servingIntent } from "../../provider/service/local_traffic.ts";
import { notReady, type ReadyState, servingState, waitingState } from "../../provider/service/ready_condition.ts";
import { ingressIpMode, type IngressStyle, ingressStyle } from "../../provider/service/service_ingress.ts";
import { MEMBERS_NOTICE_TOPIC, type ServiceIntent } from "../../provider/service/service_plan.ts";
import type { ReconcileResult } from "../../runtime/work_queue.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";
import { DEFAULTS } from "../../defaults.ts";
import { clusterNameCollision } from "./load_balancer_directory.ts";
import type { ServiceControllerOptions } from "./service_controller_options.ts";
import type { PassSteps } from "./service_steps.ts";

/** What a pass found for the Service's Ready condition (set by the step that knows it). */
export interface PassReport {
  /** The state to write, when the pass got as far as knowing it. */
  state?: ReadyState;
}

/** The passes over Services, and what they keep between passes. */
export class ServicePass {
  readonly #o: ServiceControllerOptions;
  readonly #steps: PassSteps;
  readonly #driftMs: number;
  /** Services whose next pass reads the real load balancer (the Service changed since its last read). */
  readonly readNext = new Set<string>();
  /** False when the API server strips an ingress `ipMode` (before 1.30): none is published then. */
  ipModes = true;
  /** The members draining on each Service's load balancer: listener → member → since (epoch ms). */
  readonly #drains = new Map<string, Map<string, Map<string, number>>>();

  /** Creates the passes over `steps`. */
  constructor(options: ServiceControllerOptions, steps: PassSteps, driftMs: number) {
    this.#o = options;
    this.#steps = steps;
    this.#driftMs = driftMs;
  }

  /**
   * How `service`'s ingress is written: its primary family first, and the `ipMode` its `settings` ask for when the
   * API server keeps the field ({@linkcode ServicePass.ipModes}); none without settings (invalid annotations).
   */
  ingressStyle(service: SlimService, settings: LoadBalancerSettings | undefined): IngressStyle {
    return ingressStyle(service, this.ipModes && settings ? ingressIpMode(settings) : undefined);
  }

  /** A pass over a Service whose load balancer must go; the next look. */
  async cleanup(service: SlimService): Promise<ReconcileResult> {
    const key = objectKey(service);
    this.#drains.delete(key);
    this.#steps.placement.forget(key);
    const recordedShare = recordedShareOf(service);
    if (recordedShare) {
      try {
        if (await this.#steps.share.leave(service, recordedShare)) {
          return { requeueAfterMs: this.#o.provisioningPollMs ?? DEFAULTS.provisioningPollMs };
        }
      } catch (cause) {
        throw this.#steps.reporter.failed(service, "delete", cause);
      }
    }
    const { result, gone } = await this.#steps.cleanup.cleanup(service);
    if (gone) this.readNext.delete(key);
    await this.#steps.readiness.clear(service);
    return result;
  }

  /** A pass over a Service that wants a load balancer (see the module documentation); `report` gets its state. */
  async ensure(service: SlimService, report: PassReport): Promise<ReconcileResult> {
    const o = this.#o;
    const steps = this.#steps;
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
    // The members' notice waits for the members: on a network they are the servers' addresses there (step 4).
    steps.reporter.notices(service, intent.notices.filter((n) => n.topic !== MEMBERS_NOTICE_TOPIC));
    if (intent.waitFor) {
      report.state = waitingState(intent);
      if (!intent.waitFor.reported) steps.reporter.failed(service, "ensure", intent.waitFor.message);
      throw new WaitingForUser("SyncLoadBalancerFailed", intent.waitFor.message);
    }
    if (intent.noNodes) {
      steps.reporter.service(
        service,
        "Warning",
        "UnAvailableLoadBalancer",
        "There are no available nodes for LoadBalancer",
      );
    }
    const fresh = this.readNext.delete(intent.key);
    try {
      const recordedEdge = service.annotations[EDGE_IN_USE_ANNOTATION];
      if (recordedEdge && recordedEdge !== intent.settings.edgeId) await steps.edges.leave(service, recordedEdge);
      const recordedShare = recordedShareOf(service);
      if (recordedShare && recordedShare !== intent.settings.share) {
        if (await steps.share.leave(service, recordedShare)) {
          return { requeueAfterMs: o.provisioningPollMs ?? DEFAULTS.provisioningPollMs };
        }
      }
      if (intent.settings.edgeId) {
        steps.reporter.notices(service, intent.notices.filter((n) => n.topic === MEMBERS_NOTICE_TOPIC));
        const edgeId = intent.settings.edgeId;
        const edgePass = await steps.edge.ensure(service, intent, {
          edgeId,
          ingressStyle: this.ingressStyle(service, intent.settings),
        });
        report.state = edgePass.served
          ? servingState(`edge ${edgeId}`)
          : notReady("Creating", `edge ${edgeId} has no address yet`);
        return { requeueAfterMs: edgePass.requeueAfterMs };
      }
      let othersListeners: ReadonlySet<string> | undefined;
      if (intent.settings.share) {
        othersListeners = steps.share.check(service, intent, intent.settings.share).claimedByOthers;
        await steps.share.join(service, intent, intent.settings.share);
      }
      return await this.#dedicated(service, intent, { fresh, othersListeners }, report);
    } catch (cause) {
      if (fresh) this.readNext.add(intent.key);
      throw steps.reporter.failed(service, "ensure", cause);
    }
  }

  /** Steps 3 to 6 over the Service's own load balancer, or the one it shares. */
  async #dedicated(
    service: SlimService,
    intent: ServiceIntent,
    options: { fresh: boolean; othersListeners?: ReadonlySet<string> },
    report: PassReport,
  ): Promise<ReconcileResult> {
    const o = this.#o;
    const steps = this.#steps;
    // 3. Find its load balancer: the real one when the Service changed; the one it names, if it names one.
    const found = await steps.lookup.find(service, intent, options.fresh);
    if (found?.foreign) throw clusterNameCollision(found.lb, this.#driftMs);
    if (found?.lb.state === "deleting") {
      throw new Error(`load balancer ${found.lb.id} is being deleted; a new one is created once it is gone`);
    }
    // 4. Place a new one; the members are the nodes' addresses on the load balancer's network.
    const placement = found ? undefined : await steps.placement.place(service, intent);
    if (!found && !placement) {
      report.state = notReady("WaitingForNodes", `waiting for ${intent.pendingNodes} node(s) to be initialised`);
      return { requeueAfterMs: DEFAULTS.waitingForNodesRecheckMs };
    }
    const placed = placement ??
      (found?.lb.network_id ? await steps.placement.onNetwork(service, intent, found.lb.network_id) : undefined);
    steps.reporter.notices(
      service,
      placed?.notices ?? intent.notices.filter((n) => n.topic === MEMBERS_NOTICE_TOPIC),
    );
    const members = placed?.members ?? intent.members;
    // 5. Plan.
    const plan = planLoadBalancer({
      intent: { ...intent, members, othersListeners: options.othersListeners },
      currentIngress: service.ingress,
      ingressStyle: this.ingressStyle(service, intent.settings),
      target: found ? { existing: found.lb } : { create: placement!.create },
      ensuringOpen: steps.reporter.ensuringOpen(service),
      adopt: found?.unlabelled ? { labels: intent.labels } : undefined,
      drain: { periodMs: o.memberDrainMs ?? 0, now: Date.now(), draining: this.#drains.get(intent.key) ?? new Map() },
    });
    if (found) {
      steps.reporter.notices(service, [
        immutableNotice(found.lb, intent.settings, o.defaults.networkId),
        handMadePortsNotice(found.lb, intent),
      ]);
    }
    if (o.dryRun && found && plan.calls.length === 0 && !plan.ingress) {
      o.dryRun.note("service", intent.key, `adopt load balancer ${found.lb.id} (${found.lb.name}); no change`);
    }
    // 6. Apply.
    const result = await steps.apply.apply(service, intent, { plan, current: found?.lb, placement });
    // Members draining: remembered once sent, and a pass is due when the first drain ends.
    if (plan.drain.draining.size > 0) this.#drains.set(intent.key, plan.drain.draining);
    else this.#drains.delete(intent.key);
    if (plan.drain.nextAtMs !== undefined && result.result) {
      const dueInMs = Math.max(0, plan.drain.nextAtMs - Date.now());
      result.result.requeueAfterMs = Math.min(result.result.requeueAfterMs, dueInMs);
    }
    report.state = intent.noNodes
      ? notReady("NoEligibleNodes", "There are no available nodes for LoadBalancer")
      : result.state;
    return result.result;
  }
}
