/**
 * The cluster's nodes as the Services see them: which nodes may serve a load balancer at all (the framework's stable
 * node set: not being deleted, not excluded by label, not leaving with the autoscaler, and Ankra servers), and the
 * {@linkcode NodeFacts} every Service's intent reads, derived once per node list. Pure functions.
 *
 * @module
 */
import type { SlimNode } from "../../kube/slim.ts";
import { type MemberSelection, selectMembers } from "./member_selection.ts";
import { classifyProviderId } from "../provider_id.ts";
import { isUnmanagedNode } from "../node_management.ts";
import { UNINITIALIZED_TAINT } from "../node/node_plan.ts";
import { k3sServersRunningServiceLb, serviceLbNotice } from "../k3s.ts";
import { parseGoBoolean } from "../../go_syntax.ts";

/** The exclusion label of the framework. */
const EXCLUDE_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers";
/** The cluster autoscaler's taint on nodes it is removing. */
export const AUTOSCALER_TAINT = "ToBeDeletedByClusterAutoscaler";

/**
 * Whether the node's {@linkcode EXCLUDE_LABEL} keeps it out of load balancers, read as upstream's service controller
 * reads it since 1.34 (Go's `strconv.ParseBool`): absent or a false value (`0 f F FALSE false False`) keeps the node;
 * a true value (`1 t T TRUE true True`) or anything else (`yes`, `fAlSe`, empty) excludes it.
 */
export function isExcludedFromLoadBalancers(labels: Readonly<Record<string, string>>): boolean {
  const value = labels[EXCLUDE_LABEL];
  return value !== undefined && parseGoBoolean(value) !== false;
}

/**
 * The framework's stable node set: not being deleted, not excluded ({@linkcode isExcludedFromLoadBalancers}), not
 * being removed by the autoscaler — and not labelled `node.ankra.cloud/managed=false` (not an Ankra server). By name.
 */
export function eligibleNodes(nodes: readonly SlimNode[]): SlimNode[] {
  return nodes.filter((node) => {
    if (node.deletionTimestamp || isUnmanagedNode(node)) return false;
    if (isExcludedFromLoadBalancers(node.labels)) return false;
    return !node.taints.some((t) => t.key === AUTOSCALER_TAINT);
  }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * What every Service's intent reads of the cluster's nodes, derived once from a node list ({@linkcode nodeFacts}): the
 * service passes keep it while the nodes do not change, so a pass costs nothing per node (a thousand Services retried
 * over five thousand nodes otherwise filter and sort the nodes a thousand times).
 */
export interface NodeFacts {
  /** Every node, as given. */
  readonly all: readonly SlimNode[];
  /** {@linkcode eligibleNodes} of `all`. */
  readonly eligible: readonly SlimNode[];
  /** The eligible nodes matched to Ankra servers (a providerID of ours), by name. */
  readonly matched: readonly SlimNode[];
  /** Eligible nodes not yet initialised (no providerID, the uninitialized taint). */
  readonly pendingNodes: number;
  /** The `K3sServiceLBActive` notice's message; undefined when no k3s server runs ServiceLB. */
  readonly serviceLbMessage: string | undefined;
  /**
   * The members of every Service of `families` when all of the matched nodes' addresses fit a backend (they are the
   * same for every Service then), kept once asked; undefined when they do not fit (each Service chooses its own).
   */
  membersFor(families: readonly (4 | 6)[]): MemberSelection | undefined;
}

/** The {@linkcode NodeFacts} of `nodes`. */
export function nodeFacts(nodes: readonly SlimNode[]): NodeFacts {
  const eligible = eligibleNodes(nodes);
  const matched = eligible.filter((node) => classifyProviderId(node.providerID) === "ours");
  let pendingNodes = 0;
  for (const node of eligible) {
    if (!node.providerID && node.taints.some((t) => t.key === UNINITIALIZED_TAINT)) pendingNodes++;
  }
  const selections = new Map<string, MemberSelection | undefined>();
  return {
    all: nodes,
    eligible,
    matched,
    pendingNodes,
    serviceLbMessage: serviceLbNotice(k3sServersRunningServiceLb(nodes)),
    membersFor(families) {
      const key = families.join();
      if (!selections.has(key)) {
        // The service key only orders a choice among too many candidates: with none left out it changes nothing.
        const selection = selectMembers(matched, families, { serviceKey: "" });
        selections.set(key, selection.members.length === selection.candidates ? selection : undefined);
      }
      return selections.get(key);
    },
  };
}

/** `nodes` as {@linkcode NodeFacts}: derived from a node list, or as they are when they already are. */
export function nodeFactsOf(nodes: readonly SlimNode[] | NodeFacts): NodeFacts {
  return isNodeFacts(nodes) ? nodes : nodeFacts(nodes);
}

function isNodeFacts(nodes: readonly SlimNode[] | NodeFacts): nodes is NodeFacts {
  return !Array.isArray(nodes);
}
