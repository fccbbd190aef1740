/**
 * Step 2 of a pass, for either way of serving: **move** the Service — off an edge it no longer names; with a share
 * `group` (a Service on an Ankra load balancer), checked against that group first (consent, ports, settings: a refusal
 * throws before anything is left or joined), the group handed a load balancer it lacks from the group its Services were
 * in before (`ServiceShare.adopt`: renamed and relabelled, the address kept), off the group it was in before, and into
 * this one. A Service served on node addresses names no group: it only leaves.
 *
 * @module
 */
import { EDGE_IN_USE_ANNOTATION } from "../../ankra_names.ts";
import { recordedGroupOf, sameGroup, type ShareGroup } from "../../provider/service/share_groups.ts";
import type { LoadBalancerIntent, ServiceIntent } from "../../provider/service/service_plan.ts";
import type { EdgeMembership } from "./edge_membership.ts";
import type { PassReport } from "./pass_report.ts";
import type { ServiceShare } from "./service_share.ts";

/** What the move hands on for a Service on a shared load balancer. */
export interface SharedPass {
  /** The listeners of the group's other Services (never touched). */
  othersListeners: ReadonlySet<string>;
  /** Labels a new load balancer of the group gets besides the intent's (across namespaces: the namespaces on it). */
  labels?: Record<string, string>;
}

/** Where the Service stands after the move. */
interface Moved {
  /** True while the group it left is deleting its load balancer: look again. */
  lookAgain: boolean;
  /** On a shared load balancer: the other Services' listeners and the labels of a new one. */
  shared?: SharedPass;
}

/** The move of a pass (see the module documentation). */
export class ServiceMove {
  readonly #edges: Pick<EdgeMembership, "leave">;
  readonly #share: Pick<ServiceShare, "check" | "adopt" | "leave" | "join">;

  /** Moves through these steps. */
  constructor(
    steps: { edges: Pick<EdgeMembership, "leave">; share: Pick<ServiceShare, "check" | "adopt" | "leave" | "join"> },
  ) {
    this.#edges = steps.edges;
    this.#share = steps.share;
  }

  /** Moves the Service of `report` as `intent` asks, into `group` when it names one (load-balancer mode). */
  async move(report: PassReport, intent: ServiceIntent, group?: ShareGroup): Promise<Moved> {
    const { service } = report;
    const recordedEdge = service.annotations[EDGE_IN_USE_ANNOTATION];
    if (recordedEdge && recordedEdge !== intent.settings.edgeId) await this.#edges.leave(service, recordedEdge);
    const recorded = recordedGroupOf(service);
    const lb = group && intent.mode === "load-balancer" ? intent as LoadBalancerIntent : undefined;
    let shared: SharedPass | undefined;
    if (group && lb) {
      const checked = await this.#share.check(service, lb, group);
      await this.#share.adopt(report, group, checked.namespaces);
      shared = { othersListeners: checked.claimedByOthers, labels: checked.labels };
    }
    if (recorded && !sameGroup(recorded, lb ? group : undefined) && await this.#share.leave(report, recorded)) {
      return { lookAgain: true };
    }
    if (group && lb) await this.#share.join(report, lb, group);
    return { lookAgain: false, shared };
  }
}
