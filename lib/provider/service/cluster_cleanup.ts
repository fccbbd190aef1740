/**
 * What `ankra-cloud-ccm cleanup` removes from the account for one cluster, decided from labels and member names
 * alone ({@linkcode planCleanup}): every load balancer with the cluster's name and either its UID or no UID label
 * (made by the Go controller or an older version) is deleted; one released with `preserve-on-delete` is kept unless
 * asked; another cluster's (another UID) is never touched; on each combined edge, the members named with the
 * cluster's prefix (or, with the cluster at hand, the Go controller's prefix of one of its Services) are removed and
 * every other member is kept. Which cluster: its UID from the cluster itself, or given, or — by name alone — the one
 * UID the load balancers with that name carry ({@linkcode clusterUidByName}). Pure.
 *
 * @module
 */
import { CLUSTER_LABEL, CLUSTER_UID_LABEL, RELEASED_LABEL, SERVICE_LABEL } from "../../ankra_names.ts";
import type { EdgeMemberInput } from "../../cloud/edges.ts";
import type { Edge, LoadBalancer } from "../../cloud/schemas.ts";
import type { CloudCall } from "./cloud_calls.ts";
import { asEdgeInput } from "./edge_plan.ts";
import { edgeClusterPrefix } from "./load_balancer_names.ts";

/** The cluster to clean up. */
interface CleanupTarget {
  /** `--cluster-name`. */
  name: string;
  /** Its UID, when known (from the cluster, `--cluster-uid`, or the load balancers by name). */
  uid?: string;
  /** The Go controller's edge member prefixes of the cluster's Services (known only with the cluster at hand). */
  legacyEdgePrefixes: readonly string[];
  /** Delete load balancers released with `preserve-on-delete` too. */
  includeReleased: boolean;
}

/** One line of the plan: what happens to a load balancer or an edge, and why. */
interface CleanupItem {
  /** `delete`, `keep` or `update-edge`. */
  action: "delete" | "keep" | "update-edge";
  /** The load balancer's or edge's id. */
  id: string;
  /** What the user reads. */
  text: string;
  /** The Service (`<namespace>/<name>`) whose load balancer it is, for a deleted one of a Service. */
  service?: string;
}

/** The plan: the calls in order, and a line per load balancer or edge it is about. */
export interface CleanupPlan {
  /** The calls (deletes, then edge member lists). */
  calls: CloudCall[];
  /** What happens to each load balancer and edge of the cluster. */
  items: CleanupItem[];
  /** Load balancers with the same `--cluster-name` but another cluster's UID: left alone. */
  otherClusters: number;
}

/**
 * The UID to clean up by name alone: the one UID label among the load balancers with this cluster name; undefined
 * when none carries one (only the Go controller's); a problem naming each UID when several clusters share the name.
 */
export function clusterUidByName(
  loadBalancers: Pick<LoadBalancer, "labels">[],
  name: string,
): { ok: true; uid?: string } | { ok: false; problem: string } {
  const counts = new Map<string, number>();
  for (const lb of loadBalancers) {
    const uid = lb.labels[CLUSTER_UID_LABEL];
    if (lb.labels[CLUSTER_LABEL] === name && uid) counts.set(uid, (counts.get(uid) ?? 0) + 1);
  }
  if (counts.size <= 1) return { ok: true, uid: [...counts.keys()][0] };
  return {
    ok: false,
    problem: `load balancers of ${counts.size} clusters carry --cluster-name ${name} (${
      [...counts].map(([uid, n]) => `${CLUSTER_UID_LABEL}=${uid}: ${n}`).join(", ")
    }); name the one to clean up with --cluster-uid, or run with the cluster's kubeconfig`,
  };
}

function describe(lb: Pick<LoadBalancer, "id" | "name" | "labels">): string {
  const service = lb.labels[SERVICE_LABEL];
  const released = lb.labels[RELEASED_LABEL];
  const whose = service ? `of Service ${service}` : released ? `released by Service ${released}` : "of no Service";
  return `load balancer ${lb.id} (${lb.name}) ${whose}`;
}

/** The calls and lines that remove cluster `target` from the account (see the module documentation). */
export function planCleanup(
  loadBalancers: Pick<LoadBalancer, "id" | "name" | "labels" | "state">[],
  edges: Pick<Edge, "id" | "name" | "members">[],
  target: CleanupTarget,
): CleanupPlan {
  const calls: CloudCall[] = [];
  const items: CleanupItem[] = [];
  let otherClusters = 0;
  for (const lb of loadBalancers) {
    if (lb.labels[CLUSTER_LABEL] !== target.name) continue;
    const uid = lb.labels[CLUSTER_UID_LABEL];
    if (uid !== undefined && uid !== target.uid) {
      otherClusters++;
      continue;
    }
    if (lb.labels[RELEASED_LABEL] && !lb.labels[SERVICE_LABEL] && !target.includeReleased) {
      items.push({
        action: "keep",
        id: lb.id,
        text: `keep ${describe(lb)}: released with preserve-on-delete (--include-released deletes it too)`,
      });
      continue;
    }
    if (lb.state === "deleting") {
      items.push({ action: "keep", id: lb.id, text: `${describe(lb)} is already being deleted` });
      continue;
    }
    calls.push({ operation: "delete_load_balancer", loadBalancer: { id: lb.id } });
    items.push({ action: "delete", id: lb.id, text: `delete ${describe(lb)}`, service: lb.labels[SERVICE_LABEL] });
  }
  const prefixes = [...(target.uid ? [edgeClusterPrefix(target.uid)] : []), ...target.legacyEdgePrefixes];
  for (const edge of edges) {
    const mine = edge.members.filter((m) => prefixes.some((prefix) => m.name.startsWith(prefix)));
    if (mine.length === 0) continue;
    const rest: EdgeMemberInput[] = edge.members.filter((m) => !mine.includes(m)).map(asEdgeInput);
    calls.push({ operation: "update_edge", edgeId: edge.id, body: { members: rest } });
    items.push({
      action: "update-edge",
      id: edge.id,
      text: `remove ${mine.length} member(s) of this cluster from edge ${edge.id} (${edge.name}), keep ${rest.length}`,
    });
  }
  return { calls, items, otherClusters };
}
