import {
  ANNOTATION_PREFIX,
  CLUSTER_LABEL,
  CLUSTER_UID_LABEL,
  RELEASED_LABEL,
  SERVICE_LABEL,
  SHARED_LABEL,
} from "../../ankra_names.ts";
/**
 * Whose a load balancer is, decided from its labels alone. A cluster is its `--cluster-name` and the UID of its
 * `kube-system` namespace (`ccm.ankra.cloud/cluster-uid`): two clusters started with the same name in one account
 * still tell their load balancers apart. A load balancer with this cluster's name and a Service label but no UID label
 * was made by the Go controller or an older version of this one: it is this cluster's by the older rule and is adopted
 * (it gets the UID label). One whose UID label names another cluster is never adopted, changed or deleted. Pure.
 *
 * @module
 */

/** Who this controller is: `--cluster-name` and the `kube-system` namespace's UID. */
export interface ClusterIdentity {
  /** `--cluster-name`. */
  name: string;
  /** `metadata.uid` of the `kube-system` namespace. */
  uid: string;
}

/**
 * Whose a load balancer is:
 * - `own`: this cluster's name and UID and a Service label;
 * - `legacy`: this cluster's name and a Service label, no UID label (to be adopted: it gets the UID label);
 * - `foreign`: a UID label naming another cluster (never adopted, changed or deleted);
 * - `released`: this cluster's UID and a released label, no Service label (kept by `preserve-on-delete`; taken back only
 *   by a Service naming it in `load-balancer-id`);
 * - `shared`: this cluster's name and UID and a shared label `<namespace>.<key>` (Services sharing it; `*.<key>` for
 *   a group across namespaces);
 * - `unlabelled`: neither a Service nor a UID label (an orphan of a crash between create and label; adopted by name);
 * - `other`: anything else (another cluster name without a UID, this UID without a Service label).
 */
type Ownership =
  | { kind: "own"; service: string }
  | { kind: "legacy"; service: string }
  | { kind: "foreign"; uid: string }
  | { kind: "released"; service: string }
  | { kind: "shared"; group: string }
  | { kind: "unlabelled" }
  | { kind: "other" };

/** Classifies a load balancer by its `labels` (see {@linkcode Ownership}). */
export function loadBalancerOwnership(labels: Record<string, string>, cluster: ClusterIdentity): Ownership {
  const uid = labels[CLUSTER_UID_LABEL];
  if (uid !== undefined && uid !== cluster.uid) return { kind: "foreign", uid };
  const service = labels[SERVICE_LABEL];
  if (!service && uid !== undefined && labels[SHARED_LABEL] && labels[CLUSTER_LABEL] === cluster.name) {
    return { kind: "shared", group: labels[SHARED_LABEL] };
  }
  if (!service && uid !== undefined && labels[RELEASED_LABEL]) {
    return { kind: "released", service: labels[RELEASED_LABEL] };
  }
  if (!service) return uid === undefined ? { kind: "unlabelled" } : { kind: "other" };
  if (labels[CLUSTER_LABEL] !== cluster.name) return { kind: "other" };
  return uid === undefined ? { kind: "legacy", service } : { kind: "own", service };
}

/**
 * The key of a load balancer in the controller's directory: the Service's `<namespace>/<name>` for its own one,
 * `shared:<namespace>.<key>` for one Services share ({@linkcode sharedKey}).
 */
export type LoadBalancerKey = string;

/**
 * The namespace part of a share group across namespaces (`load-balancer.ankra.cloud/share-namespaces`): its label is
 * `*.<key>` and its directory key `shared:*.<key>`. No namespace has this name.
 */
export const ACROSS_NAMESPACES = "*";

/** The directory key of the load balancer the Services of `namespace` sharing `key` use. */
export function sharedKey(namespace: string, key: string): LoadBalancerKey {
  return `shared:${namespace}.${key}`;
}

/** The share group (`<namespace>.<key>`) a directory key names, or undefined for a Service's own load balancer. */
export function sharedGroupOf(key: LoadBalancerKey): string | undefined {
  return key.startsWith("shared:") ? key.slice("shared:".length) : undefined;
}

/** The labels that find the load balancer of directory key `key` (an API label filter; the UID is checked after). */
export function keyLabels(key: LoadBalancerKey, clusterName: string): Record<string, string> {
  const group = sharedGroupOf(key);
  return group ? { [SHARED_LABEL]: group, [CLUSTER_LABEL]: clusterName } : {
    [SERVICE_LABEL]: key,
    [CLUSTER_LABEL]: clusterName,
  };
}

/** The directory key of a load balancer of this cluster, from its labels; undefined when it is none of them. */
export function keyOf(labels: Record<string, string>, cluster: ClusterIdentity): LoadBalancerKey | undefined {
  const owner = loadBalancerOwnership(labels, cluster);
  if (owner.kind === "own" || owner.kind === "legacy") return owner.service;
  if (owner.kind === "shared") return `shared:${owner.group}`;
  return undefined;
}

/**
 * True when this controller may adopt, change or delete the load balancer as the one of directory key `key`: the
 * Service's own (or legacy) one, or the shared one of the group.
 */
export function servesService(labels: Record<string, string>, cluster: ClusterIdentity, key: LoadBalancerKey): boolean {
  return keyOf(labels, cluster) === key;
}

/**
 * The message of the `ClusterNameCollision` Warning: the Service's load balancer name is taken by a load balancer of
 * another cluster with the same `--cluster-name`.
 */
export function collisionMessage(lb: { id: string; name: string; labels: Record<string, string> }): string {
  return `load balancer ${lb.id} (${lb.name}) has this Service's name but belongs to another cluster ` +
    `(${CLUSTER_UID_LABEL}=${lb.labels[CLUSTER_UID_LABEL]}) with the same --cluster-name; nothing is created or ` +
    "changed: give this cluster a --cluster-name unique in the Ankra account, or delete the other cluster's Service";
}

/**
 * Whether Service `key` may use the load balancer it names in `load-balancer.ankra.cloud/load-balancer-id`: its own
 * (or legacy) one, one this cluster released, or one without labels (made by hand) — `ok`, with `adopt` when its labels
 * must change; another cluster's or another Service's is refused with the reason the Warning gives.
 */
export function namedLoadBalancerUse(
  lb: { id: string; labels: Record<string, string> },
  cluster: ClusterIdentity,
  key: string,
): { ok: true; adopt: boolean } | { ok: false; reason: string } {
  const owner = loadBalancerOwnership(lb.labels, cluster);
  switch (owner.kind) {
    case "own":
      if (owner.service === key) return { ok: true, adopt: false };
      break;
    case "legacy":
      if (owner.service === key) return { ok: true, adopt: true };
      break;
    case "released":
    case "unlabelled":
      return { ok: true, adopt: true };
    case "foreign":
      return {
        ok: false,
        reason:
          `load balancer ${lb.id} belongs to another cluster (${CLUSTER_UID_LABEL}=${owner.uid}); nothing of it ` +
          "is changed: name a load balancer of this cluster, or remove the annotation",
      };
  }
  const service = lb.labels[SERVICE_LABEL];
  return {
    ok: false,
    reason: service
      ? `load balancer ${lb.id} is Service ${service}'s; nothing of it is changed: delete that Service with ` +
        `${ANNOTATION_PREFIX}preserve-on-delete: "true" to release it, or remove the annotation`
      : `load balancer ${lb.id} carries labels of this controller (${JSON.stringify(lb.labels)}) but is no Service's ` +
        "and was not released by this cluster; nothing of it is changed",
  };
}
