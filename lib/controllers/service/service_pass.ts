/**
 * One pass over a Service, as a table of contents of named steps ({@linkcode ServicePass.ensure}):
 *
 * 1. **decide** what the Service asks for (`servingIntent`: settings, ports, members, notices) — pure — and stop
 *    where the user must act;
 * 2. **move**: leave an edge or a share group the Service no longer names, check it against the other Services of
 *    its share group and join it;
 * 3. **find** where it stands: its edge (read afresh), or its load balancer (`ServiceLookup`: no API call for a node
 *    change; a change of the Service, an earlier 404 and the drift check read the real one, and a missing one is made
 *    again) and where a new one goes (`LoadBalancerPlacement`: zone, network, pair or single VM; cached facts);
 * 4. **plan** the calls with their bodies, the status and the framework's events (`planEdge`, `planLoadBalancer`) —
 *    pure; on a shared load balancer the other Services' listeners are never touched;
 * 5. **apply** (`ServiceEdge.apply`, `ServiceApply.apply`): finalizer, calls, status — or, in a dry run, describe them;
 * 6. **tell**, once, at the end: the notices, the events the plan and the steps decided, the failure the pass ended
 *    with (`ServiceReporter`), then the Ready condition (`ServiceReadiness`).
 *
 * A Service in node-address mode (`load-balancer.ankra.cloud/mode: node-addresses`, or the class
 * `ankra.cloud/node-addresses`) has no load balancer: after step 1, steps 3–5 are `ServiceOnNodes` (its nodes' public
 * addresses as its ingress, no Ankra write), and 6 as for any Service.
 *
 * And the pass over a Service whose load balancer must go ({@linkcode ServicePass.cleanup}: off its share group, then
 * its edge and its own load balancer, `ServiceCleanup`), and the one that writes an address the tracker saw
 * ({@linkcode ServicePass.served}). Every pass records what it will tell in a {@linkcode PassReport}.
 *
 * @module
 */
import { EDGE_IN_USE_ANNOTATION } from "../../ankra_names.ts";
import type { LoadBalancer } from "../../cloud/client.ts";
import { objectKey } from "../../kube/object_key.ts";
import { type SlimService } from "../../kube/slim.ts";
import * as log from "../../log.ts";
import { withinAllowedResources } from "../../provider/service/allowed_resources.ts";
import { parseAnnotations } from "../../provider/service/annotations.ts";
import type { LoadBalancerSettings } from "../../provider/service/annotations.ts";
import { planEdge } from "../../provider/service/edge_plan.ts";
import { handMadePortsNotice } from "../../provider/service/listener_plan.ts";
import { immutableNotice, planLoadBalancer } from "../../provider/service/load_balancer_plan.ts";
import { recordedShareOf } from "../../provider/service/load_balancer_sharing.ts";
import { servingIntent } from "../../provider/service/local_traffic.ts";
import { notReady, servingState, waitingState } from "../../provider/service/ready_condition.ts";
import { ingressIpMode, type IngressStyle, ingressStyle } from "../../provider/service/service_ingress.ts";
import { MEMBERS_NOTICE_TOPIC, type ServiceIntent } from "../../provider/service/service_plan.ts";
import type { ReconcileResult } from "../../runtime/work_queue.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";
import { DEFAULTS } from "../../defaults.ts";
import { clusterNameCollision, type FoundLoadBalancer } from "./load_balancer_directory.ts";
import type { Placement } from "./load_balancer_placement.ts";
import { PassReport } from "./pass_report.ts";
import type { PlannedPass } from "./service_apply.ts";
import type { ServiceControllerSettings } from "./service_controller_options.ts";
import type { PlannedEdge } from "./service_edge.ts";
import { failedState } from "./service_readiness.ts";
import type { PassSteps } from "./service_steps.ts";

/** Where a Service stands, as step 3 found it. */
type Found =
  | { on: "edge"; edgeId: string; edge: Awaited<ReturnType<PassSteps["edge"]["find"]>> }
  | {
    on: "load balancer";
    /** Its load balancer, when it has one. */
    found?: FoundLoadBalancer;
    /** Where a new one goes, when it has none. */
    placement?: Placement;
    /** The members: each chosen node's addresses on the load balancer's network. */
    members: ServiceIntent["members"];
    /** On a shared load balancer: the listeners of the group's other Services (never touched). */
    othersListeners?: ReadonlySet<string>;
  };

/** What step 4 planned. */
type Planned = { on: "edge"; edge: PlannedEdge } | { on: "load balancer"; pass: PlannedPass };

/** The passes over Services, and what they keep between passes. */
export class ServicePass {
  readonly #settings: ServiceControllerSettings;
  readonly #steps: PassSteps;
  /** Services whose next pass reads the real load balancer (the Service changed since its last read). */
  readonly readNext = new Set<string>();
  /** False when the API server strips an ingress `ipMode` (before 1.30): none is published then. */
  ipModes = true;
  /** The members draining on each Service's load balancer: listener → member → since (epoch ms). */
  readonly #drains = new Map<string, Map<string, Map<string, number>>>();

  /** Creates the passes over `steps`. */
  constructor(settings: ServiceControllerSettings, steps: PassSteps) {
    this.#settings = settings;
    this.#steps = steps;
  }

  /**
   * How `service`'s ingress is written: its primary family first, and the `ipMode` its `settings` ask for when the
   * API server keeps the field ({@linkcode ServicePass.ipModes}); none without settings (invalid annotations).
   */
  ingressStyle(service: SlimService, settings: LoadBalancerSettings | undefined): IngressStyle {
    if (settings && this.#steps.onNodes.onNodes(service)) {
      return ingressStyle(service, this.ipModes ? "VIP" : undefined);
    }
    return ingressStyle(service, this.ipModes && settings ? ingressIpMode(settings) : undefined);
  }

  /** A pass over a Service that wants a load balancer (see the module documentation); the next look. */
  async ensure(service: SlimService): Promise<ReconcileResult> {
    const report = new PassReport(service);
    let failure: { cause: unknown } | undefined;
    try {
      return await this.#ensure(report);
    } catch (cause) {
      failure = { cause };
      throw cause;
    } finally {
      await this.#tell(report, failure);
    }
  }

  async #ensure(report: PassReport): Promise<ReconcileResult> {
    const steps = this.#steps;
    // 1. Decide what the Service asks for; stop where the user must act.
    const intent = this.#intent(report.service);
    // The members' notice waits for the members: on a network they are the servers' addresses there (step 3).
    report.notices(intent.notices.filter((n) => n.topic !== MEMBERS_NOTICE_TOPIC));
    if (intent.waitFor) {
      report.state = waitingState(intent);
      if (!intent.waitFor.reported) report.failed("ensure", intent.waitFor.message);
      throw new WaitingForUser("SyncLoadBalancerFailed", intent.waitFor.message);
    }
    if (intent.noNodes) {
      report.event("service", "Warning", "UnAvailableLoadBalancer", "There are no available nodes for LoadBalancer");
    }
    if (intent.mode === "node-addresses") {
      // Node-address mode: off an edge or share group it left, then the nodes' own addresses (no load balancer).
      try {
        if (await this.#leave(report, intent)) return { requeueAfterMs: this.#settings.provisioningPollMs };
        return await this.#steps.onNodes.ensure(report, intent, this.ingressStyle(report.service, intent.settings));
      } catch (cause) {
        throw report.failed("ensure", cause);
      }
    }
    const fresh = this.readNext.delete(intent.key);
    try {
      // 2. Move: off what it no longer names, into the share group it names.
      if (await this.#leave(report, intent)) return { requeueAfterMs: this.#settings.provisioningPollMs };
      // 3. Find where it stands.
      const found = await this.#find(report, intent, fresh);
      if (!found) {
        report.state = notReady("WaitingForNodes", `waiting for ${intent.pendingNodes} node(s) to be initialised`);
        return { requeueAfterMs: DEFAULTS.waitingForNodesRecheckMs };
      }
      // 4. Plan.
      const planned = this.#plan(report, intent, found);
      // 5. Apply.
      if (planned.on === "edge") {
        await steps.edge.apply(report, intent, planned.edge);
        const { edgeId, plan } = planned.edge;
        report.state = plan.served
          ? servingState(`edge ${edgeId}`)
          : notReady("Creating", `edge ${edgeId} has no address yet`);
        return { requeueAfterMs: plan.served ? this.#settings.driftCheckMs : this.#settings.provisioningPollMs };
      }
      return await this.#apply(report, intent, planned.pass);
    } catch (cause) {
      if (fresh) this.readNext.add(intent.key);
      throw report.failed("ensure", cause);
    }
  }

  /** What the Service asks for, within what it may name. */
  #intent(service: SlimService): ServiceIntent {
    const settings = this.#settings;
    const asked = servingIntent(service, settings.nodes.store.list(), {
      clusterName: settings.clusterName,
      clusterUid: settings.clusterUid,
      loadBalancerClass: settings.loadBalancerClass,
      defaults: settings.defaults,
      readyNodes: settings.endpoints?.readyNodes(objectKey(service)),
    });
    return withinAllowedResources(asked, settings.allowedResources);
  }

  /**
   * Leaves an edge and a share group the Service no longer names, then checks it against the share group it names
   * (a conflict waits for the user) and joins it. True while the group's load balancer is being deleted (look again).
   */
  async #leave(report: PassReport, intent: ServiceIntent): Promise<boolean> {
    const { service } = report;
    const steps = this.#steps;
    const recordedEdge = service.annotations[EDGE_IN_USE_ANNOTATION];
    if (recordedEdge && recordedEdge !== intent.settings.edgeId) await steps.edges.leave(service, recordedEdge);
    const recordedShare = recordedShareOf(service);
    if (recordedShare && recordedShare !== intent.settings.share) {
      if (await steps.share.leave(report, recordedShare)) return true;
    }
    return false;
  }

  /** Step 3: the edge, or the load balancer and the placement of a new one; undefined while nodes initialise. */
  async #find(report: PassReport, intent: ServiceIntent, fresh: boolean): Promise<Found | undefined> {
    const { service } = report;
    const steps = this.#steps;
    if (intent.settings.edgeId) {
      report.notices(intent.notices.filter((n) => n.topic === MEMBERS_NOTICE_TOPIC));
      const edgeId = intent.settings.edgeId;
      return { on: "edge", edgeId, edge: await steps.edge.find(edgeId) };
    }
    let othersListeners: ReadonlySet<string> | undefined;
    if (intent.settings.share) {
      othersListeners = steps.share.check(service, intent, intent.settings.share).claimedByOthers;
      await steps.share.join(report, intent, intent.settings.share);
    }
    // Its load balancer: the real one when the Service changed; the one it names, if it names one.
    const found = await steps.lookup.find(report, intent, fresh);
    if (found?.foreign) throw clusterNameCollision(found.lb, this.#settings.driftCheckMs);
    if (found?.lb.state === "deleting") {
      throw new Error(`load balancer ${found.lb.id} is being deleted; a new one is created once it is gone`);
    }
    // A new one's place; the members are the nodes' addresses on the load balancer's network.
    const placement = found ? undefined : await steps.placement.place(service, intent);
    if (!found && !placement) return undefined;
    const placed = placement ??
      (found?.lb.network_id ? await steps.placement.onNetwork(service, intent, found.lb.network_id) : undefined);
    report.notices(placed?.notices ?? intent.notices.filter((n) => n.topic === MEMBERS_NOTICE_TOPIC));
    return { on: "load balancer", found, placement, members: placed?.members ?? intent.members, othersListeners };
  }

  /** Step 4, pure but for the notices it adds: the edge's member update, or the load balancer's calls. */
  #plan(report: PassReport, intent: ServiceIntent, found: Found): Planned {
    const { service } = report;
    const settings = this.#settings;
    const ensuringOpen = this.#steps.reporter.ensuringOpen(service);
    const style = this.ingressStyle(service, intent.settings);
    if (found.on === "edge") {
      const recordChanges = service.annotations[EDGE_IN_USE_ANNOTATION] !== found.edgeId;
      const plan = planEdge(found.edge, intent, {
        currentIngress: service.ingress,
        ensuringOpen,
        recordChanges,
        ingressStyle: style,
      });
      if (!plan.ok) throw new WaitingForUser("SyncLoadBalancerFailed", plan.problem);
      return { on: "edge", edge: { edgeId: found.edgeId, plan, recordChanges } };
    }
    const current = found.found;
    const plan = planLoadBalancer({
      intent: { ...intent, members: found.members, othersListeners: found.othersListeners },
      currentIngress: service.ingress,
      ingressStyle: style,
      target: current ? { existing: current.lb } : { create: found.placement!.create },
      ensuringOpen,
      adopt: current?.unlabelled ? { labels: intent.labels } : undefined,
      drain: {
        periodMs: settings.memberDrainMs,
        now: Date.now(),
        draining: this.#drains.get(intent.key) ?? new Map(),
      },
    });
    if (current) {
      report.notices([
        immutableNotice(current.lb, intent.settings, settings.defaults.networkId),
        handMadePortsNotice(current.lb, intent),
      ]);
    }
    if (settings.dryRun && current && plan.calls.length === 0 && !plan.ingress) {
      settings.dryRun.note(
        "service",
        intent.key,
        `adopt load balancer ${current.lb.id} (${current.lb.name}); no change`,
      );
    }
    return { on: "load balancer", pass: { plan, current: current?.lb, placement: found.placement } };
  }

  /** Step 5 over the Service's own load balancer, or the one it shares; keeps the members draining. */
  async #apply(report: PassReport, intent: ServiceIntent, pass: PlannedPass): Promise<ReconcileResult> {
    const result = await this.#steps.apply.apply(report, intent, pass);
    const { drain } = pass.plan;
    // Members draining: remembered once sent, and a pass is due when the first drain ends.
    if (drain.draining.size > 0) this.#drains.set(intent.key, drain.draining);
    else this.#drains.delete(intent.key);
    if (drain.nextAtMs !== undefined && result) {
      const dueInMs = Math.max(0, drain.nextAtMs - Date.now());
      result.requeueAfterMs = Math.min(result.requeueAfterMs, dueInMs);
    }
    if (intent.noNodes) report.state = notReady("NoEligibleNodes", "There are no available nodes for LoadBalancer");
    return result;
  }

  /** A pass over a Service whose load balancer must go; the next look. */
  async cleanup(service: SlimService): Promise<ReconcileResult> {
    const report = new PassReport(service);
    const key = objectKey(service);
    this.#drains.delete(key);
    this.#steps.placement.forget(key);
    let outcome;
    try {
      const recordedShare = recordedShareOf(service);
      if (recordedShare) {
        try {
          if (await this.#steps.share.leave(report, recordedShare)) {
            return { requeueAfterMs: this.#settings.provisioningPollMs };
          }
        } catch (cause) {
          throw report.failed("delete", cause);
        }
      }
      outcome = await this.#steps.cleanup.cleanup(report);
    } finally {
      this.#steps.reporter.tell(report);
    }
    if (outcome.gone) this.readNext.delete(key);
    await this.#steps.readiness.clear(service);
    return outcome.result;
  }

  /**
   * The tracker saw `service`'s load balancer get its address (`summary`): the address is written now, outside the
   * queue, and told. A failed write is logged and thrown (the caller looks at the Service again).
   */
  async served(service: SlimService, summary: LoadBalancer): Promise<void> {
    const report = new PassReport(service);
    const parsed = parseAnnotations(service.annotations, { sessionAffinity: service.sessionAffinity });
    try {
      await this.#steps.apply.served(report, summary, {
        ensuringOpen: this.#steps.reporter.ensuringOpen(service),
        ingressStyle: this.ingressStyle(service, parsed.ok ? parsed.settings : undefined),
      });
    } catch (cause) {
      log.warn("could not write the Service's address; the next pass retries", {
        service: objectKey(service),
        error: cause,
      });
      throw cause;
    }
    this.#steps.reporter.tell(report);
    void this.#steps.readiness.report(service, report.state!);
    log.info(1, "load balancer is serving", { service: objectKey(service), loadBalancer: summary.id });
  }

  /** Step 6: tells what the pass gathered, starts tracking what it created, and writes the Ready condition. */
  async #tell(report: PassReport, failure?: { cause: unknown }): Promise<void> {
    this.#steps.reporter.tell(report);
    if (report.track) this.#steps.tracker.track(report.track, objectKey(report.service));
    const state = failure ? report.state ?? failedState(failure.cause) : report.state;
    if (state) await this.#steps.readiness.report(report.service, state);
  }
}
