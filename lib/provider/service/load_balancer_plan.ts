/**
 * A Service's dedicated (or shared) load balancer: what it should look like and the API calls, with their bodies, that
 * get it there from what exists — a new load balancer (create, then its listeners) or the smallest change to an
 * existing one (its listeners: `listener_plan.ts`; members draining: `member_drain.ts`). Also the framework's events
 * for the pass, the `ImmutableSetting` notice, the placement's pair-or-single choice and the Service status. Pure.
 *
 * @module
 */
import { ANNOTATION_PREFIX, RELEASED_LABEL } from "../../ankra_names.ts";
import type { LoadBalancer, ZoneCapabilities } from "../../cloud/schemas.ts";
import type { CreateLoadBalancerInput } from "../../cloud/load_balancers.ts";
import type { LoadBalancerSettings } from "./annotations.ts";
import type { CloudCall } from "./cloud_calls.ts";
import { listenerCalls, type ListenerIntent } from "./listener_plan.ts";
import { drainPlans } from "./member_drain.ts";
import type { DrainStarts } from "./drain_window.ts";
import { type Ingress, type IngressStyle, loadBalancerIngress, sameIngress } from "./service_ingress.ts";
import type { HighAvailabilityMode, LoadBalancerIntent, Notice } from "./service_plan.ts";

/** An event the controller records, before the calls are sent or after they all succeeded. */
export interface PlannedEvent {
  /** When to record it. */
  when: "before" | "after";
  /** `Warning` for a problem the user should see, `Normal` otherwise. */
  type: "Normal" | "Warning";
  /** CamelCase event reason, e.g. `EnsuringLoadBalancer` ({@linkcode FRAMEWORK_EVENTS}). */
  reason: string;
  /** One human-readable line; the recorder redacts secrets and shortens it. */
  message: string;
}

/** The framework's events (source `service-controller`). */
export const FRAMEWORK_EVENTS = {
  ensuring: { type: "Normal", reason: "EnsuringLoadBalancer", message: "Ensuring load balancer" },
  ensured: { type: "Normal", reason: "EnsuredLoadBalancer", message: "Ensured load balancer" },
  updated: { type: "Normal", reason: "UpdatedLoadBalancer", message: "Updated load balancer with new hosts" },
} as const;

/** What decides whether a new load balancer is a pair. */
interface HighAvailabilityInput {
  /** ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY; `auto` leaves the choice to the zone's capabilities. */
  mode: HighAvailabilityMode;
  /** Zone of the new load balancer; named in the reason it stays a single VM. */
  zone: string;
  /** The zone's capabilities; `unknown` when the API could not say (404, 405, 401, 403): a pair is assumed. */
  capabilities: ZoneCapabilities | "unknown" | undefined;
  /** The Service's `high-availability` annotation, when it has one: it decides over `mode`. */
  annotated?: boolean;
}

/** Pair or single VM, and why a single VM (for the `SingleNodeLoadBalancer` event). */
export function chooseHighAvailability(input: HighAvailabilityInput): { pair: boolean; singleReason?: string } {
  if (input.annotated === false) {
    return { pair: false, singleReason: `the Service's ${ANNOTATION_PREFIX}high-availability is false` };
  }
  if (input.annotated === true || input.mode === "true") return { pair: true };
  if (input.mode === "false") {
    return { pair: false, singleReason: "ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY is false" };
  }
  const capabilities = input.capabilities;
  if (!capabilities || capabilities === "unknown" || capabilities.features.load_balancer_ha) return { pair: true };
  return {
    pair: false,
    singleReason: `zone ${input.zone} is at growth stage ${capabilities.stage} with ` +
      `${capabilities.compute_nodes ?? capabilities.servers} compute node(s) and cannot place a pair on different ` +
      "compute nodes",
  };
}

/** The body of `create_load_balancer`, exactly as the Go controller sends it (key order included). */
export function createLoadBalancerBody(
  intent: Pick<LoadBalancerIntent, "loadBalancerName" | "labels"> & { settings: Pick<LoadBalancerSettings, "ipv4"> },
  placement: { zone: string; networkId: string; pair: boolean },
): CreateLoadBalancerInput {
  return {
    zone: placement.zone,
    name: intent.loadBalancerName,
    network_id: placement.networkId,
    labels: intent.labels,
    ...(placement.pair ? {} : { high_availability: false }),
    public_ipv4: intent.settings.ipv4,
  };
}

/** The `SingleNodeLoadBalancer` message of a load balancer created as a single VM. */
export function singleNodeMessage(loadBalancerId: string, reason: string): string {
  return `load balancer ${loadBalancerId} runs as a single VM without failover (high_availability: false): ${reason}. ` +
    "It stays single when the zone grows; recreate the Service to get a pair.";
}

/** The `ImmutableSetting` notice: creation-time settings the running load balancer does not have. */
export function immutableNotice(
  lb: Pick<LoadBalancer, "id" | "network_id" | "public_ipv4" | "state" | "high_availability">,
  settings: Pick<LoadBalancerSettings, "networkId" | "ipv4" | "highAvailability">,
  defaultNetworkId?: string,
): Notice {
  const wantedNetwork = settings.networkId ?? defaultNetworkId;
  const problems: string[] = [];
  if (wantedNetwork && lb.network_id && wantedNetwork !== lb.network_id) {
    problems.push(
      `load balancer ${lb.id} is on network ${lb.network_id}, not the requested ${wantedNetwork}; the network is ` +
        "chosen at creation: recreate the Service to move it",
    );
  }
  if (settings.ipv4 && !lb.public_ipv4 && lb.state === "running") {
    problems.push(
      `load balancer ${lb.id} has no public IPv4 although ${ANNOTATION_PREFIX}ipv4 asks for one; IPv4 is ` +
        "honoured at creation: recreate the Service to add it",
    );
  }
  if (settings.highAvailability !== undefined && lb.high_availability !== undefined) {
    if (settings.highAvailability !== lb.high_availability) {
      problems.push(
        `load balancer ${lb.id} is ${lb.high_availability ? "an HA pair" : "a single VM"} although ` +
          `${ANNOTATION_PREFIX}high-availability asks for ${settings.highAvailability ? "a pair" : "a single VM"}; ` +
          "it is chosen at creation: recreate the Service to change it",
      );
    }
  }
  return { topic: "immutable", reason: "ImmutableSetting", message: problems.length ? problems.join("; ") : undefined };
}

/** The plan of one pass over a Service's dedicated load balancer. */
export interface LoadBalancerPlan {
  /** The calls, in order. */
  calls: CloudCall[];
  /** Events of the framework's service controller to record. */
  events: PlannedEvent[];
  /** The status to write after the calls, when it differs from the Service's. */
  ingress?: Ingress[];
  /** True when the load balancer has an address after this pass (or already had it): the Service is served. */
  served: boolean;
  /** True while an `EnsuringLoadBalancer` has no `EnsuredLoadBalancer` yet (carried to the next pass). */
  ensuringOpen: boolean;
  /**
   * True when the pass only replaces members (a node change): its failure is reported as the framework's
   * `UpdateLoadBalancerFailed`, its success as `UpdatedLoadBalancer`.
   */
  membersOnly: boolean;
  /** The members still draining after this pass, by listener then member name, and when the next drain ends. */
  drain: { draining: Map<string, Map<string, number>>; nextAtMs?: number };
}

/** The drain of members a load balancer loses ({@linkcode drainMembers}). */
interface DrainInput {
  /** `--member-drain-period`; 0: members leave at once. */
  periodMs: number;
  /** Now, epoch milliseconds. */
  now: number;
  /** The drains of earlier passes, by listener name. */
  draining: ReadonlyMap<string, DrainStarts>;
}

/** What {@linkcode planLoadBalancer} needs. */
interface LoadBalancerPlanInput {
  /** The Service's intent. */
  intent: ListenerIntent;
  /** The Service's current status ingress. */
  currentIngress: readonly { ip?: string; ipMode?: string }[];
  /** How the Service's ingress is written: its primary family first, and the `ipMode` to publish (if any). */
  ingressStyle?: IngressStyle;
  /** The load balancer (full document), or the create body of a new one. */
  target: { existing: LoadBalancer } | { create: CreateLoadBalancerInput };
  /** True when an earlier pass recorded `EnsuringLoadBalancer` and no `EnsuredLoadBalancer` followed yet. */
  ensuringOpen: boolean;
  /**
   * Set for a load balancer this Service takes over (an unlabelled one found by name, a legacy one, or one named by
   * `load-balancer-id`): it gets these labels first, and a released label goes.
   */
  adopt?: { labels: Record<string, string> };
  /** How members it loses drain (default: they leave at once). */
  drain?: DrainInput;
}

/** What a pass does, as far as the framework's events are concerned. */
interface PassShape {
  /** The pass sends calls or writes the status. */
  changes: boolean;
  /** Its only calls replace members (a node change). */
  membersOnly: boolean;
  /** The load balancer has an address after the pass. */
  served: boolean;
  /** An earlier pass recorded `EnsuringLoadBalancer` and no `EnsuredLoadBalancer` followed yet. */
  ensuringOpen: boolean;
}

/**
 * The framework's events of a pass: `UpdatedLoadBalancer` after a pass that only replaced members;
 * `EnsuringLoadBalancer` before any other pass that changes something (unless one is still open), and
 * `EnsuredLoadBalancer` once the load balancer is served — so the two always come as a pair, possibly over several
 * passes while it provisions. Returns the events and whether an `EnsuringLoadBalancer` stays open.
 */
export function passEvents(pass: PassShape): { events: PlannedEvent[]; ensuringOpen: boolean } {
  if (pass.membersOnly && !pass.ensuringOpen) {
    return { events: [{ when: "after", ...FRAMEWORK_EVENTS.updated }], ensuringOpen: false };
  }
  if (!pass.changes && !pass.ensuringOpen) return { events: [], ensuringOpen: false };
  const events: PlannedEvent[] = [];
  if (!pass.ensuringOpen) events.push({ when: "before", ...FRAMEWORK_EVENTS.ensuring });
  if (!pass.served) return { events, ensuringOpen: true };
  events.push({ when: "after", ...FRAMEWORK_EVENTS.ensured });
  return { events, ensuringOpen: false };
}

/**
 * One pass over a dedicated load balancer: the calls (a create and every listener for a new one; the difference for
 * an existing one), the status, and the framework's events ({@linkcode passEvents}).
 */
export function planLoadBalancer(input: LoadBalancerPlanInput): LoadBalancerPlan {
  const { intent, target } = input;
  const calls: CloudCall[] = [];
  let ingress: Ingress[] = [];
  let drain: LoadBalancerPlan["drain"] = { draining: new Map() };
  if ("create" in target) {
    calls.push({ operation: "create_load_balancer", body: target.create });
    calls.push(...listenerCalls({ frontends: [], backends: [] }, intent, { created: true }));
  } else {
    if (input.adopt) {
      // A released load balancer taken back is this Service's again: the released label goes.
      const labels: Record<string, string> = { ...target.existing.labels, ...input.adopt.labels };
      delete labels[RELEASED_LABEL];
      calls.push({ operation: "update_load_balancer", loadBalancer: { id: target.existing.id }, body: { labels } });
    }
    const drained = drainPlans(target.existing, intent, input.drain ?? { periodMs: 0, now: 0, draining: new Map() });
    drain = drained.drain;
    calls.push(...listenerCalls(target.existing, { ...intent, memberLists: drained.memberLists }, {
      id: target.existing.id,
    }));
    ingress = loadBalancerIngress(target.existing, input.ingressStyle);
  }
  const served = ingress.length > 0;
  const statusChanges = served && !sameIngress(input.currentIngress, ingress);
  const membersOnly = calls.length > 0 && !statusChanges &&
    calls.every((c) => c.operation === "replace_load_balancer_members");
  const { events, ensuringOpen } = passEvents({
    changes: calls.length > 0 || statusChanges,
    membersOnly,
    served,
    ensuringOpen: input.ensuringOpen,
  });
  return {
    calls,
    events,
    ingress: statusChanges ? ingress : undefined,
    served,
    ensuringOpen,
    membersOnly: membersOnly && !input.ensuringOpen,
    drain,
  };
}

/**
 * The status and events once a provisioning load balancer has its address (seen by a poll): the address, and the
 * `EnsuredLoadBalancer` that closes the pair.
 */
export function planServed(
  currentIngress: readonly { ip?: string; ipMode?: string }[],
  lb: Pick<LoadBalancer, "public_ipv6_addresses" | "public_ipv6" | "public_ipv4">,
  options: { ensuringOpen: boolean; ingressStyle?: IngressStyle },
): { ingress?: Ingress[]; events: PlannedEvent[] } {
  const { ensuringOpen } = options;
  const ingress = loadBalancerIngress(lb, options.ingressStyle);
  const statusChanges = ingress.length > 0 && !sameIngress(currentIngress, ingress);
  const { events } = passEvents({
    changes: statusChanges,
    membersOnly: false,
    served: ingress.length > 0,
    ensuringOpen,
  });
  return { ingress: statusChanges ? ingress : undefined, events };
}
