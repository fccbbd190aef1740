/**
 * Several load balancers of this cluster for one Service (or one share group) — a create that went out twice, a copy
 * made by hand or by a script: which one stays, and which go. Pure: the load balancers come in as a list, the
 * Services as a lookup, time as a number.
 *
 * Only load balancers with this cluster's name **and UID** labels and a Service (or shared) label count, and none being
 * deleted: another cluster's (even one with the same `--cluster-name`), one without labels, one without the UID
 * label (made by the Go controller or an older version) and a released one are never candidates, never kept, never
 * deleted. The one that stays ({@linkcode keeperOf}) is, in this order: the one a Service of the key names in
 * `load-balancer.ankra.cloud/load-balancer-id` (pinned by the user); the one whose address the Services' status
 * shows (what clients use); the oldest. A load balancer any Service pins is never deleted. While a Service of the key
 * names a load balancer that is not among them (it is about to be adopted), nothing is decided.
 *
 * A duplicate is deleted only when a second observation at least `confirmAfterMs` after the first still finds it a
 * duplicate of the same key ({@linkcode planDuplicates}), as leaked load balancers are: an observation is one complete
 * list, so an API outage or an incomplete list decides nothing. The directory's label lookup picks its load balancer
 * with the same {@linkcode keeperOf}, so the controller uses the one that stays.
 *
 * @module
 */
import { objectKey } from "../../kube/object_key.ts";
import type { SlimService } from "../../kube/slim.ts";
import { pinnedLoadBalancerId } from "./annotations.ts";
import { groupMembers } from "./share_groups.ts";
import { type ClusterIdentity, keyOf, loadBalancerOwnership, sharedGroupOf } from "./load_balancer_ownership.ts";

/** What the decision reads of a listed load balancer. */
export interface DuplicateCandidate {
  /** Ankra Cloud id. */
  id: string;
  /** Display name, for messages only. */
  name: string;
  /** Ownership and the key are read from the labels alone. */
  labels: Record<string, string>;
  /** Life-cycle state: one being deleted is no candidate. */
  state: string;
  /** RFC 3339 creation time: the oldest stays when no Service names one (empty: counted as the newest). */
  created_at: string;
  /** The addresses a Service's status can show. */
  public_ipv4: string | null;
  /** First IPv6 frontend address. */
  public_ipv6: string | null;
  /** Every VM's IPv6 frontend address. */
  public_ipv6_addresses: string[];
}

/** What the Services of one key say about their load balancer. */
export interface KeyServices {
  /** The IPs in their `status.loadBalancer.ingress`. */
  addresses: readonly string[];
  /** The ids they name in `load-balancer.ankra.cloud/load-balancer-id`. */
  pinned: readonly string[];
}

/** What the duplicate rule reads of a Service. */
type ServiceView = Pick<SlimService, "namespace" | "name" | "annotations" | "ingress" | "creationTimestamp">;

/**
 * The Services of directory key `key` among `services`: the Service itself, or every Service of the share group —
 * within a namespace (`shared:<namespace>.<key>`) or across namespaces (`shared:*.<key>`), as the controller groups
 * them ({@linkcode groupMembers}).
 */
export function servicesOfKey<T extends Pick<SlimService, "namespace" | "name" | "annotations" | "creationTimestamp">>(
  services: readonly T[],
  key: string,
): T[] {
  const group = sharedGroupOf(key);
  if (!group) return services.filter((service) => objectKey(service) === key);
  const dot = group.indexOf(".");
  return groupMembers({ namespace: group.slice(0, dot), key: group.slice(dot + 1) }, services);
}

/**
 * What the Services of directory key `key` among `services` say — the Service `<namespace>/<name>`, or those of the
 * share group `shared:<namespace>.<key>` — or undefined when none of them exists.
 */
export function keyServices(services: readonly ServiceView[], key: string): KeyServices | undefined {
  const members = servicesOfKey(services, key);
  if (members.length === 0) return undefined;
  return {
    addresses: members.flatMap((service) => service.ingress.flatMap((ingress) => ingress.ip ? [ingress.ip] : [])),
    pinned: members.flatMap((service) => pinnedLoadBalancerId(service.annotations) ?? []),
  };
}

/** Every load balancer id a Service among `services` pins (`load-balancer-id`): none of them is ever deleted. */
export function pinnedIds(services: readonly Pick<SlimService, "annotations">[]): Set<string> {
  return new Set(services.flatMap((service) => pinnedLoadBalancerId(service.annotations) ?? []));
}

/** Why the load balancer that stays was chosen. */
type KeeperReason = "pinned" | "status" | "oldest";

/** The load balancer that stays, and why. */
interface Keeper<T extends DuplicateCandidate> {
  /** The one that stays. */
  lb: T;
  /** Why it was chosen. */
  reason: KeeperReason;
}

/** `a` before `b` when `a` is older (creation time, then id). */
function byAge(a: DuplicateCandidate, b: DuplicateCandidate): number {
  const at = (lb: DuplicateCandidate) => {
    const parsed = Date.parse(lb.created_at);
    return Number.isNaN(parsed) ? Infinity : parsed;
  };
  return at(a) - at(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Every address a Service's status can show for `lb`. */
function addressesOf(lb: DuplicateCandidate): string[] {
  return [lb.public_ipv4, lb.public_ipv6, ...lb.public_ipv6_addresses].filter((a): a is string => Boolean(a));
}

/**
 * Which of `candidates` (the live load balancers of one key) stays, given what its Services say: a pinned one, else
 * the one the status shows, else the oldest; undefined when there is none, or when a Service pins a load balancer
 * that is not among them (nothing is decided until it is adopted).
 */
export function keeperOf<T extends DuplicateCandidate>(
  candidates: readonly T[],
  services: KeyServices,
): Keeper<T> | undefined {
  const sorted = [...candidates].sort(byAge);
  if (sorted.length === 0) return undefined;
  const pinned = sorted.find((lb) => services.pinned.includes(lb.id));
  if (pinned) return { lb: pinned, reason: "pinned" };
  if (services.pinned.length > 0) return undefined;
  const shown = new Set(services.addresses);
  const inStatus = sorted.find((lb) => addressesOf(lb).some((a) => shown.has(a)));
  if (inStatus) return { lb: inStatus, reason: "status" };
  return { lb: sorted[0], reason: "oldest" };
}

/** The words for why a load balancer stays, for events and logs. */
export function keeperWords(reason: KeeperReason): string {
  switch (reason) {
    case "pinned":
      return "the one the Service names in load-balancer.ankra.cloud/load-balancer-id";
    case "status":
      return "the one whose address is in the Service's status";
    case "oldest":
      return "the oldest, as no Service's status shows an address of any of them";
  }
}

/** A load balancer found to be a duplicate, and since when. */
export interface Duplicate {
  /** Ankra Cloud id of the duplicate. */
  id: string;
  /** Its name. */
  name: string;
  /** The directory key it is labelled for: `<namespace>/<name>`, or `shared:<namespace>.<key>`. */
  key: string;
  /** The load balancer that stays. */
  keeper: { id: string; name: string; reason: KeeperReason };
  /** When it was first observed a duplicate of `key` (same clock as {@linkcode DuplicateObservation.at}). */
  since: number;
}

/** One observation: a complete list of this cluster's load balancers and the Services at one moment. */
export interface DuplicateObservation {
  /** Every load balancer the list returned (the list must have been complete). */
  loadBalancers: readonly DuplicateCandidate[];
  /** What the Services of `key` say; undefined when no Service of it exists (a leak, not a duplicate). */
  servicesOf(key: string): KeyServices | undefined;
  /** Every id any Service names in `load-balancer-id`: never deleted. */
  pinned: ReadonlySet<string>;
  /** When the observation was taken (milliseconds, any monotonic clock). */
  at: number;
}

/** What {@linkcode planDuplicates} decided. */
interface DuplicatePlan {
  /** Duplicates first seen in this observation (each counted once). */
  found: Duplicate[];
  /** Duplicates seen in an observation at least `confirmAfterMs` earlier too: delete them now. */
  remove: Duplicate[];
  /** Duplicates awaiting the confirming observation, by id. */
  pending: Map<string, Duplicate>;
}

/** Options of {@linkcode planDuplicates}. */
interface DuplicateOptions {
  /** This cluster: `--cluster-name` and the `kube-system` namespace's UID. */
  cluster: ClusterIdentity;
  /** Least time between the first and the confirming observation (the drift period). */
  confirmAfterMs: number;
}

/**
 * This cluster's live load balancers by key (own or shared; with its name and UID), for keys with more than one.
 */
function groupsOfSeveral(
  loadBalancers: readonly DuplicateCandidate[],
  cluster: ClusterIdentity,
): Map<string, DuplicateCandidate[]> {
  const groups = new Map<string, DuplicateCandidate[]>();
  for (const lb of loadBalancers) {
    const kind = loadBalancerOwnership(lb.labels, cluster).kind;
    const key = keyOf(lb.labels, cluster);
    if ((kind !== "own" && kind !== "shared") || key === undefined || lb.state === "deleting") continue;
    groups.set(key, [...(groups.get(key) ?? []), lb]);
  }
  for (const [key, group] of groups) if (group.length < 2) groups.delete(key);
  return groups;
}

/**
 * Decides the duplicates of `observation`, given what earlier observations left `pending`: one no longer a duplicate
 * of the same key (gone, kept now, pinned, its Service gone) leaves the pending set; one first seen now enters it; one
 * pending since at least `confirmAfterMs` before this observation is to be deleted.
 */
export function planDuplicates(
  observation: DuplicateObservation,
  pending: ReadonlyMap<string, Duplicate>,
  options: DuplicateOptions,
): DuplicatePlan {
  const plan: DuplicatePlan = { found: [], remove: [], pending: new Map() };
  for (const [key, group] of groupsOfSeveral(observation.loadBalancers, options.cluster)) {
    const services = observation.servicesOf(key);
    const keeper = services ? keeperOf(group, services) : undefined;
    if (!keeper) continue;
    for (const lb of group) {
      if (lb.id === keeper.lb.id || observation.pinned.has(lb.id)) continue;
      const earlier = pending.get(lb.id);
      const duplicate: Duplicate = {
        id: lb.id,
        name: lb.name,
        key,
        keeper: { id: keeper.lb.id, name: keeper.lb.name, reason: keeper.reason },
        since: earlier?.key === key ? earlier.since : observation.at,
      };
      if (earlier?.key !== key) plan.found.push(duplicate);
      if (observation.at - duplicate.since >= options.confirmAfterMs) plan.remove.push(duplicate);
      else plan.pending.set(lb.id, duplicate);
    }
  }
  return plan;
}
