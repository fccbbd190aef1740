/**
 * Step 1 of every pass over a Service, the one place it is decided: what the Service asks for
 * ({@linkcode decideService}) — how it is served (an Ankra load balancer, or its nodes' own addresses: `mode`, with
 * the default resolved), its settings, its notices, whether it must wait for the user, and which nodes serve it — as
 * one pure value typed by mode. The node selector (`load-balancer.ankra.cloud/node-selector`) and
 * `externalTrafficPolicy: Local` narrow the serving nodes here, nodes whose servers are about to go down (a planned
 * stop or delete, announced by the server's active operation) leave them here — so they drain before the server goes
 * down, unless no other node could serve —, and the operator's allow-lists
 * (`ANKRA_CLOUD_ALLOWED_*`) refuse what a Service may not name here; the doctor asks the same function, so it cannot
 * disagree with the controller about a Service's mode or its serving nodes.
 *
 * Everything about the cluster's nodes (notices, `noNodes`, pending nodes) is decided over all of them, as for
 * `Cluster`; a selector that matches no eligible Ankra node makes the Service wait with a `NoMatchingNodes` Warning
 * (what serves it is kept as it is). No calls, no events, no clock.
 *
 * @module
 */
import { ANNOTATION_PREFIX } from "../../ankra_names.ts";
import type { SlimNode, SlimService } from "../../kube/slim.ts";
import { classifyProviderId } from "../provider_id.ts";
import { type AllowedResources, withinAllowedResources } from "./allowed_resources.ts";
import { matchesSelector } from "./label_selector.ts";
import { trafficNodes } from "./local_traffic.ts";
import { selectMembers } from "./member_selection.ts";
import { eligibleNodes, type NodeFacts, nodeFactsOf } from "./service_nodes.ts";
import {
  MEMBERS_NOTICE_TOPIC,
  type Notice,
  serviceFamilies,
  type ServiceIntent,
  serviceIntent,
  type ServicePlanOptions,
  tooManyMembersNotice,
} from "./service_plan.ts";

/** What {@linkcode decideService} decides from besides the Service and the nodes. */
interface DecisionOptions extends ServicePlanOptions {
  /** Node names holding a ready endpoint of the Service; undefined while the EndpointSlices are not known. */
  readyNodes?: ReadonlySet<string>;
  /** The resources a Service may name (`ANKRA_CLOUD_ALLOWED_*`); none: any. */
  allowed?: AllowedResources;
  /** Names of the nodes whose servers are about to go down (a planned stop or delete). */
  leaving?: ReadonlySet<string>;
}

/**
 * What `service` asks for over the cluster's `nodes` (or their {@linkcode NodeFacts}, kept by the caller while the
 * nodes do not change): see the module documentation.
 */
export function decideService(
  service: SlimService,
  nodes: readonly SlimNode[] | NodeFacts,
  options: DecisionOptions,
): ServiceIntent {
  const { readyNodes, allowed, leaving, ...planOptions } = options;
  const facts = nodeFactsOf(nodes);
  const intent = narrowed(service, serviceIntent(service, facts, planOptions), facts, { readyNodes, leaving });
  return allowed ? withinAllowedResources(intent, allowed) : intent;
}

/** True for a node matched to an Ankra server (a providerID of ours). */
function isOurs(node: SlimNode): boolean {
  return classifyProviderId(node.providerID) === "ours";
}

/** The nodes of `nodes` that stay: all but `leaving`, unless none of those could serve (then every one). */
function staying(nodes: readonly SlimNode[], leaving: ReadonlySet<string> | undefined): readonly SlimNode[] {
  if (!leaving || leaving.size === 0 || !nodes.some((node) => leaving.has(node.name))) return nodes;
  const rest = nodes.filter((node) => !leaving.has(node.name));
  return eligibleNodes(rest).some(isOurs) ? rest : nodes;
}

/**
 * `intent` with its serving nodes (and a load balancer's members) narrowed by the node selector, then by Local, then
 * without the nodes about to go down.
 */
function narrowed(
  service: SlimService,
  intent: ServiceIntent,
  facts: NodeFacts,
  { readyNodes, leaving }: { readyNodes?: ReadonlySet<string>; leaving?: ReadonlySet<string> },
): ServiceIntent {
  const selector = intent.settings.nodeSelector;
  const all = facts.all;
  const selected = selector ? all.filter((node) => matchesSelector(node.labels, selector.requirements)) : all;
  const servable = selector ? eligibleNodes(selected).some(isOurs) : facts.matched.length > 0;
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
  const traffic = trafficNodes(service, selected, readyNodes);
  const serving = staying(traffic, leaving);
  if (serving === all) return { ...intent, notices: [...intent.notices, notice] };
  const nodes = eligibleNodes(serving).filter(isOurs);
  const left = serving === traffic ? [] : eligibleNodes(traffic).filter((n) => isOurs(n) && leaving!.has(n.name));
  const gone = left.length > 0 ? { leaving: left.map((n) => n.name) } : {};
  if (intent.mode === "node-addresses") return { ...intent, ...gone, nodes, notices: [...intent.notices, notice] };
  const selection = selectMembers(nodes, serviceFamilies(service), { serviceKey: intent.key });
  return {
    ...intent,
    ...gone,
    nodes,
    members: selection.members,
    notices: [
      ...intent.notices.map((n) => n.topic === MEMBERS_NOTICE_TOPIC ? tooManyMembersNotice(selection) : n),
      notice,
    ],
  };
}
