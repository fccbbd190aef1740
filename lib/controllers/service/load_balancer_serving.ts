/**
 * A Service served by an Ankra load balancer (its own, its share group's, or members on an edge): steps 2–5 of a pass
 * ({@linkcode LoadBalancerServing.ensure}), one implementation of {@linkcode ServingStrategy}:
 *
 * 2. **move**: the share group the Service is in (from the Service store: its namespace's, or the one across
 *    namespaces) names its load balancer; checked against that group, off what it no longer names, into that group
 *    (`ServiceMove`);
 * 3. **find** where it stands: its edge (read afresh), or its load balancer (`ServiceLookup`: no API call for a node
 *    change; a change of the Service, an earlier 404 and the drift check read the real one, and a missing one is made
 *    again) and where a new one goes (`LoadBalancerPlacement`: zone, network, pair or single VM; cached facts);
 * 4. **plan** the calls with their bodies, the status and the framework's events (`planEdge`, `planLoadBalancer`) —
 *    pure; on a shared load balancer the other Services' listeners are never touched;
 * 5. **apply** (`ServiceEdge.apply`, `ServiceApply.apply`): finalizer, calls, status — or, in a dry run, describe them.
 *
 * It keeps, per Service, the members draining on its load balancer (the drain window of `drain_window.ts`) and whether
 * its next pass reads the real load balancer.
 *
 * @module
 */
import { EDGE_IN_USE_ANNOTATION } from "../../ankra_names.ts";
import { planEdge } from "../../provider/service/edge_plan.ts";
import { handMadePortsNotice } from "../../provider/service/listener_plan.ts";
import { immutableNotice, planLoadBalancer } from "../../provider/service/load_balancer_plan.ts";
import { notReady, servingState } from "../../provider/service/ready_condition.ts";
import type { IngressStyle } from "../../provider/service/service_ingress.ts";
import { type LoadBalancerIntent, MEMBERS_NOTICE_TOPIC } from "../../provider/service/service_plan.ts";
import type { ReconcileResult } from "../../runtime/work_queue.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";
import { DEFAULTS } from "../../defaults.ts";
import { clusterNameCollision, type FoundLoadBalancer } from "./load_balancer_directory.ts";
import type { LoadBalancerPlacement, Placement } from "./load_balancer_placement.ts";
import type { PassReport } from "./pass_report.ts";
import type { PlannedPass, ServiceApply } from "./service_apply.ts";
import type { ServiceControllerSettings } from "./service_controller_options.ts";
import type { PlannedEdge, ServiceEdge } from "./service_edge.ts";
import type { ServiceLookup } from "./service_lookup.ts";
import type { ServiceMove, SharedPass } from "./service_move.ts";
import type { ServiceReporter } from "./service_reporter.ts";
import type { ServiceShare } from "./service_share.ts";
import type { ServingStrategy } from "./serving_strategy.ts";

/** Where a Service stands, as step 3 found it. */
type Found =
  | { on: "edge"; edgeId: string; edge: Awaited<ReturnType<ServiceEdge["find"]>> }
  | {
    on: "load balancer";
    /** Its load balancer, when it has one. */
    found?: FoundLoadBalancer;
    /** Where a new one goes, when it has none. */
    placement?: Placement;
    /** The members: each chosen node's addresses on the load balancer's network. */
    members: LoadBalancerIntent["members"];
    /** On a shared load balancer: the listeners of the group's other Services (never touched). */
    othersListeners?: ReadonlySet<string>;
  };

/** What step 4 planned. */
type Planned = { on: "edge"; edge: PlannedEdge } | { on: "load balancer"; pass: PlannedPass };

/** The steps serving on a load balancer goes through. */
interface LoadBalancerServingSteps {
  /** Step 2. */
  move: ServiceMove;
  /** The share group a Service is in, and its load balancer's key, name and labels. */
  share: Pick<ServiceShare, "groupOf" | "loadBalancerOf">;
  /** Step 3: a Service's load balancer. */
  lookup: ServiceLookup;
  /** Step 3: where a new one goes, and the members on its network. */
  placement: LoadBalancerPlacement;
  /** Steps 3 and 5 on an edge. */
  edge: ServiceEdge;
  /** Step 5 on a load balancer. */
  apply: ServiceApply;
  /** Whether a pass's "ensuring" events are open (the framework's pairs). */
  reporter: Pick<ServiceReporter, "ensuringOpen">;
}

/** Serving on Ankra load balancers (see the module documentation). */
export class LoadBalancerServing implements ServingStrategy<LoadBalancerIntent> {
  readonly #settings: ServiceControllerSettings;
  readonly #steps: LoadBalancerServingSteps;
  /** Services whose next pass reads the real load balancer (the Service changed since its last read). */
  readonly readNext = new Set<string>();
  /** The members draining on each Service's load balancer: listener → member → since (epoch ms). */
  readonly #drains = new Map<string, Map<string, Map<string, number>>>();

  /** Serves through `steps`. */
  constructor(settings: ServiceControllerSettings, steps: LoadBalancerServingSteps) {
    this.#settings = settings;
    this.#steps = steps;
  }

  /** Forgets the Service's drains and cached placement (gone, or served on node addresses now). */
  forget(key: string): void {
    this.#drains.delete(key);
    this.#steps.placement.forget(key);
  }

  /** Steps 2–5 on the Service's load balancer, edge or share group (see the module documentation); the next look. */
  async ensure(report: PassReport, asked: LoadBalancerIntent, style: IngressStyle): Promise<ReconcileResult> {
    const steps = this.#steps;
    // The share group it is in names its load balancer.
    const group = asked.settings.share ? steps.share.groupOf(report.service) : undefined;
    const named = group ? steps.share.loadBalancerOf(group) : undefined;
    const intent: LoadBalancerIntent = named
      ? { ...asked, loadBalancerKey: named.key, loadBalancerName: named.name, labels: named.labels }
      : asked;
    const fresh = this.readNext.delete(intent.key);
    try {
      // 2. Move: checked against the share group it is in (a refusal changes nothing), off what it no longer names,
      // into that group.
      const moved = await steps.move.move(report, intent, group);
      if (moved.lookAgain) return { requeueAfterMs: this.#settings.provisioningPollMs };
      // 3. Find where it stands.
      const found = await this.#find(report, intent, fresh, moved.shared);
      if (!found) {
        report.state = notReady("WaitingForNodes", `waiting for ${intent.pendingNodes} node(s) to be initialised`);
        return { requeueAfterMs: DEFAULTS.waitingForNodesRecheckMs };
      }
      // 4. Plan.
      const planned = this.#plan(report, intent, found, style);
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
      throw cause;
    }
  }

  /**
   * Step 3: the edge, or the load balancer (on a shared one, `shared` from step 2) and the placement of a new one;
   * undefined while nodes initialise.
   */
  async #find(
    report: PassReport,
    intent: LoadBalancerIntent,
    fresh: boolean,
    shared?: SharedPass,
  ): Promise<Found | undefined> {
    const { service } = report;
    const steps = this.#steps;
    if (intent.settings.edgeId) {
      report.notices(intent.notices.filter((n) => n.topic === MEMBERS_NOTICE_TOPIC));
      const edgeId = intent.settings.edgeId;
      return { on: "edge", edgeId, edge: await steps.edge.find(edgeId) };
    }
    const othersListeners = shared?.othersListeners;
    // Its load balancer: the real one when the Service changed; the one it names, if it names one.
    const found = await steps.lookup.find(report, intent, fresh);
    if (found?.foreign) throw clusterNameCollision(found.lb, this.#settings.driftCheckMs);
    if (found?.lb.state === "deleting") {
      throw new Error(`load balancer ${found.lb.id} is being deleted; a new one is created once it is gone`);
    }
    // A new one's place; the members are the nodes' addresses on the load balancer's network.
    // A new one of a group across namespaces is labelled with the namespaces on it from the start.
    const placement = found ? undefined : await steps.placement.place(service, {
      ...intent,
      labels: { ...intent.labels, ...shared?.labels },
    });
    if (!found && !placement) return undefined;
    const placed = placement ??
      (found?.lb.network_id ? await steps.placement.onNetwork(service, intent, found.lb.network_id) : undefined);
    report.notices(placed?.notices ?? intent.notices.filter((n) => n.topic === MEMBERS_NOTICE_TOPIC));
    return { on: "load balancer", found, placement, members: placed?.members ?? intent.members, othersListeners };
  }

  /** Step 4, pure but for the notices it adds: the edge's member update, or the load balancer's calls. */
  #plan(report: PassReport, intent: LoadBalancerIntent, found: Found, style: IngressStyle): Planned {
    const { service } = report;
    const settings = this.#settings;
    const ensuringOpen = this.#steps.reporter.ensuringOpen(service);
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
  async #apply(report: PassReport, intent: LoadBalancerIntent, pass: PlannedPass): Promise<ReconcileResult> {
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
}
