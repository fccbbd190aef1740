/**
 * `externalTrafficPolicy: Local`: such a Service is served only by the nodes that hold a ready endpoint of it, so
 * traffic reaches a pod on the node it arrives at and the client address is kept. The Ankra API has no health-check
 * port, but members are explicit: the member candidates are narrowed to those nodes before the usual member rules
 * (eligibility, providerID, network, the member cap) apply.
 *
 * Never an empty backend because of this rule: when no candidate node holds a ready endpoint (none is ready at all,
 * or the ready ones run on nodes that cannot be members: excluded, being removed, not Ankra servers), or before the EndpointSlices are known, every node stays a
 * candidate, as for `Cluster`. Pure.
 *
 * @module
 */
import { ANNOTATION_PREFIX } from "../../ankra_names.ts";
import type { SlimNode, SlimService } from "../../kube/slim.ts";
import { classifyProviderId } from "../provider_id.ts";
import { matchesSelector } from "./label_selector.ts";
import {
  eligibleNodes,
  MEMBERS_NOTICE_TOPIC,
  type Notice,
  type ServiceIntent,
  serviceIntent,
  type ServicePlanOptions,
} from "./service_plan.ts";

/** True when the Service asks for `externalTrafficPolicy: Local`. */
export function isLocalTraffic(service: Pick<SlimService, "externalTrafficPolicy">): boolean {
  return service.externalTrafficPolicy === "Local";
}

/**
 * The nodes that may serve `service`: all of `nodes` for `Cluster`; for `Local`, those in `readyNodes` (node names
 * holding a ready endpoint; undefined while unknown) — or all of `nodes` when that would leave no eligible node.
 */
export function trafficNodes(
  service: Pick<SlimService, "externalTrafficPolicy">,
  nodes: SlimNode[],
  readyNodes: ReadonlySet<string> | undefined,
): SlimNode[] {
  if (!isLocalTraffic(service) || !readyNodes) return nodes;
  const local = nodes.filter((node) => readyNodes.has(node.name));
  const servable = eligibleNodes(local).some((node) => classifyProviderId(node.providerID) === "ours");
  return servable ? local : nodes;
}

/** Options of {@linkcode servingIntent}: the plan's, and the nodes holding ready endpoints of the Service. */
interface ServingIntentOptions extends ServicePlanOptions {
  /** Node names holding a ready endpoint of the Service; undefined while the EndpointSlices are not known. */
  readyNodes?: ReadonlySet<string>;
}

/**
 * {@linkcode serviceIntent} with the member candidates narrowed: to the nodes the `node-selector` annotation matches,
 * then, for a Local Service, by {@linkcode trafficNodes}; everything else (notices about the cluster's nodes,
 * `noNodes`, pending nodes) is decided over all nodes, as for `Cluster`. A selector that matches no eligible Ankra node
 * makes the Service wait with a `NoMatchingNodes` Warning: its load balancer is kept as it is.
 */
export function servingIntent(service: SlimService, nodes: SlimNode[], options: ServingIntentOptions): ServiceIntent {
  const { readyNodes, ...planOptions } = options;
  const intent = serviceIntent(service, nodes, planOptions);
  const selector = intent.settings.nodeSelector;
  const selected = selector ? nodes.filter((node) => matchesSelector(node.labels, selector.requirements)) : nodes;
  const servable = eligibleNodes(selected).some((node) => classifyProviderId(node.providerID) === "ours");
  const notice: Notice = {
    topic: "node-selector",
    reason: "NoMatchingNodes",
    message: selector && !servable
      ? `${ANNOTATION_PREFIX}node-selector "${selector.text}" matches no eligible node of an Ankra server; ` +
        "the load balancer is kept as it is until one matches: label a node or change the selector"
      : undefined,
  };
  if (notice.message) {
    return {
      ...intent,
      notices: [...intent.notices, notice],
      waitFor: intent.waitFor ?? { message: notice.message, reported: true },
    };
  }
  const serving = trafficNodes(service, selected, readyNodes);
  if (serving === nodes) return { ...intent, notices: [...intent.notices, notice] };
  const narrowed = serviceIntent(service, serving, planOptions);
  const membersNotice = narrowed.notices.find((n) => n.topic === MEMBERS_NOTICE_TOPIC);
  return {
    ...intent,
    nodes: narrowed.nodes,
    members: narrowed.members,
    notices: [
      ...intent.notices.map((n) => n.topic === MEMBERS_NOTICE_TOPIC && membersNotice ? membersNotice : n),
      notice,
    ],
  };
}
