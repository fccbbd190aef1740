/**
 * Which of this cluster's load balancers are leaked and may be deleted now: those whose Service is absent from two
 * observations at least a drift period apart. An observation is one complete list of the cluster's load balancers
 * taken while the Service store is synced. Only a load balancer with this cluster's name **and UID** labels is a
 * candidate: one of another cluster (even with the same `--cluster-name`), one without a UID label (made by the Go
 * controller or an older version: it gets the label when its Service is served, and is never swept before), one
 * without a Service label, and one already being deleted are never candidates. A load balancer Services share
 * (`ccm.ankra.cloud/shared`) is leaked only once no Service of its group is left. Pure: time comes in as a number,
 * the Service store as a predicate.
 *
 * @module
 */
import { type ClusterIdentity, loadBalancerOwnership } from "./load_balancer_ownership.ts";

/** What the sweep reads of a listed load balancer. */
export interface ListedLoadBalancer {
  /** Ankra Cloud id: the key of the pending set and what a sweep deletes. */
  id: string;
  /** Display name, for logs only: ownership is read from the labels. */
  name: string;
  /** Where ownership is read: cluster name, cluster UID, and the Service or shared group ({@linkcode ownedService}). */
  labels: Record<string, string>;
  /** Life-cycle state (`provisioning`, `running`, `deleting`, …). */
  state: string;
}

/** A load balancer whose Service is gone, and since when that was observed. */
export interface LeakedLoadBalancer {
  /** Ankra Cloud id of the load balancer to delete. */
  id: string;
  /** Display name, kept for the deletion's log line and the dry-run report. */
  name: string;
  /** `<namespace>/<name>` of the Service it served, or `shared:<namespace>.<key>` of the group that shared it. */
  service: string;
  /** When the Service was first observed absent (same clock as {@linkcode Observation.at}). */
  absentSince: number;
}

/** One observation: a complete list of load balancers and the Service store at one moment. */
export interface Observation {
  /** Every load balancer the list returned (the list must have been complete). */
  loadBalancers: readonly ListedLoadBalancer[];
  /**
   * True when the Service `<namespace>/<name>` is in the synced store; for `shared:<namespace>.<key>`, when a Service
   * of that group is.
   */
  serviceExists(key: string): boolean;
  /** When the observation was taken (milliseconds, any monotonic clock). */
  at: number;
}

/** Options of {@linkcode planSweep}. */
interface SweepOptions {
  /** `--cluster-name`: only load balancers with this cluster label are looked at. */
  clusterName: string;
  /** The `kube-system` namespace's UID: only load balancers with this `ccm.ankra.cloud/cluster-uid` are looked at. */
  clusterUid: string;
  /** Least time between the first and the confirming observation of an absent Service (the drift period). */
  confirmAfterMs: number;
}

/** What {@linkcode planSweep} decided. */
interface SweepPlan {
  /** Load balancers to delete now. */
  sweep: LeakedLoadBalancer[];
  /** Load balancers whose Service is absent but not for long enough yet: id → first absent observation. */
  pending: Map<string, LeakedLoadBalancer>;
}

const SERVICE_KEY = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SHARE_GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\.[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/;

/**
 * The key of what a load balancer belongs to — a Service's `<namespace>/<name>`, or `shared:<namespace>.<key>` — when
 * it carries this cluster's name and UID labels (else undefined).
 */
function ownedService(lb: ListedLoadBalancer, cluster: ClusterIdentity): string | undefined {
  const owner = loadBalancerOwnership(lb.labels, cluster);
  if (owner.kind === "shared") return SHARE_GROUP.test(owner.group) ? `shared:${owner.group}` : undefined;
  return owner.kind === "own" && SERVICE_KEY.test(owner.service) ? owner.service : undefined;
}

/**
 * Decides the sweep for `observation`, given what earlier observations left `pending`. A load balancer whose Service
 * exists again, or that is no longer listed, leaves the pending set; one first seen without its Service now enters
 * it; one pending since at least `confirmAfterMs` before this observation is swept.
 */
export function planSweep(
  observation: Observation,
  pending: ReadonlyMap<string, LeakedLoadBalancer>,
  options: SweepOptions,
): SweepPlan {
  const sweep: LeakedLoadBalancer[] = [];
  const next = new Map<string, LeakedLoadBalancer>();
  for (const lb of observation.loadBalancers) {
    const service = ownedService(lb, { name: options.clusterName, uid: options.clusterUid });
    if (!service || lb.state === "deleting" || observation.serviceExists(service)) continue;
    const earlier = pending.get(lb.id);
    const leaked = earlier?.service === service
      ? earlier
      : { id: lb.id, name: lb.name, service, absentSince: observation.at };
    if (observation.at - leaked.absentSince >= options.confirmAfterMs) sweep.push(leaked);
    else next.set(lb.id, leaked);
  }
  return { sweep, pending: next };
}
