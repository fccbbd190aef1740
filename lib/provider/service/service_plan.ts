/**
 * What a Service asks of its load balancer, decided from the Service and the nodes alone: whether this controller
 * serves it at all, its settings (annotations), the ports that are forwarded, the nodes and addresses that become
 * members, the zone and network of a new load balancer, and the notices the user should see (invalid annotations,
 * ports or settings that cannot be honoured, too many nodes). Pure functions; the load balancer and edge plans turn
 * this intent into API calls.
 *
 * Only nodes matched to Ankra servers (a providerID `ankracloud://…`) count: a node of another provider, one labelled
 * `node.ankra.cloud/managed=false`, or one not initialised yet, is never a member and never decides the network. Which
 * nodes may serve at all, and what is derived from them once per node list, is `service_nodes.ts`.
 *
 * @module
 */
import { ANNOTATION_PREFIX, CLUSTER_UID_LABEL, NODE_ADDRESSES_CLASS, ZONE_LABEL } from "../../ankra_names.ts";
import type { SlimNode, SlimService } from "../../kube/slim.ts";
import {
  defaultSettings,
  describeProblems,
  type LoadBalancerSettings,
  parseAnnotations,
  type ServingMode,
} from "./annotations.ts";
import { servingMode } from "./serving_mode.ts";
import {
  edgeMemberPrefix,
  loadBalancerLabels,
  loadBalancerName,
  sharedLoadBalancerLabels,
  sharedLoadBalancerName,
} from "./load_balancer_names.ts";
import { sharedKey } from "./load_balancer_ownership.ts";
import { type DesiredMember, MAX_MEMBERS, nodeZone, selectMembers } from "./member_selection.ts";
import { type NodeFacts, nodeFactsOf } from "./service_nodes.ts";
import { objectKey } from "../../kube/object_key.ts";

/** The finalizer the framework's service controller uses (and the Go controller with it). */
export const FINALIZER = "service.kubernetes.io/load-balancer-cleanup";
/** Whether new load balancers are HA pairs: decided from the zone (`auto`), always, or never. */
export type HighAvailabilityMode = "auto" | "true" | "false";

/** Defaults for new load balancers (`ANKRA_CLOUD_NETWORK_ID`, `ANKRA_CLOUD_ZONE`, `…_HIGH_AVAILABILITY`). */
export interface LoadBalancerDefaults {
  /** ANKRA_CLOUD_NETWORK_ID: used when the Service has no `network-id` annotation. */
  networkId?: string;
  /** ANKRA_CLOUD_ZONE: used when the Service has no `zone` annotation; absent: the zone most nodes are in. */
  zone?: string;
  /** HA decision. */
  highAvailability: HighAvailabilityMode;
  /**
   * The paid public IPv4 for a Service without `load-balancer.ankra.cloud/ipv4` (`ANKRA_CLOUD_LOAD_BALANCER_IPV4`;
   * default false, as the Go controller).
   */
  ipv4?: boolean;
  /** `--default-load-balancer-mode`: how a Service without the `mode` annotation or the node-address class is served. */
  mode?: ServingMode;
}

/** What every Service plan needs besides the Service and the nodes. */
export interface ServicePlanOptions {
  /** `--cluster-name`. */
  clusterName: string;
  /** UID of the `kube-system` namespace: the `ccm.ankra.cloud/cluster-uid` label of every load balancer made. */
  clusterUid?: string;
  /** `--load-balancer-class`: also serve Services of this class. */
  loadBalancerClass?: string;
  /** Defaults for new load balancers. */
  defaults: LoadBalancerDefaults;
}

/** A forwarded port. */
interface ForwardedPort {
  /** Service port (frontend port). */
  port: number;
  /** Node port (member port). */
  nodePort: number;
}

/** The ports of a Service as the load balancer sees them. */
interface PortPlan {
  /** TCP ports with their node ports, in Service order. */
  tcp: ForwardedPort[];
  /** Ports not forwarded (`53/UDP`). */
  unsupported: string[];
  /** TCP ports without a node port. */
  withoutNodePort: number[];
}

/**
 * Something the user should see on the Service, reported once per situation (under its `topic`): a Warning while the
 * situation lasts; `message: undefined` says the situation is over (nothing is recorded, the topic is forgotten).
 */
export interface Notice {
  /** Situation this notice is about; a new message under the same topic is reported again. */
  topic:
    | "annotations"
    | "ports"
    | "settings"
    | "members"
    | "member-addresses"
    | "node-selector"
    | "immutable"
    | "hand-made-ports"
    | "service-lb"
    | "node-addresses";
  /** Reason of the Warning event recorded under source `ankra-cloud-ccm`, e.g. `PortInUse`. */
  reason: string;
  /** Event message; undefined when the situation is over. */
  message?: string;
}

/** Why nothing is created or changed for a Service until the user acts. */
interface WaitForUser {
  /** The problem and what to do. */
  message: string;
  /** True when a {@linkcode Notice} of this pass already tells the user (no further event). */
  reported: boolean;
}

/** What a Service asks for whichever way it is served. */
interface IntentBase {
  /** `<namespace>/<name>`. */
  key: string;
  /** Settings from the annotations (defaults when they are invalid: `waitFor` is then set). */
  settings: LoadBalancerSettings;
  /** The nodes that may serve it: eligible, matched to Ankra servers, selected, by name. */
  nodes: readonly SlimNode[];
  /** True when no node is eligible at all (the framework's `UnAvailableLoadBalancer`). */
  noNodes: boolean;
  /** Eligible nodes not yet initialised (they will be matched soon). */
  pendingNodes: number;
  /** Notices of this pass, every topic present (those without a message clear their topic). */
  notices: Notice[];
  /** Set when nothing may be created or changed. */
  waitFor?: WaitForUser;
  /**
   * Nodes left out of `nodes` because their servers are about to go down (a planned stop or delete): they drain
   * before the server does. By name.
   */
  leaving?: readonly string[];
}

/** What a Service asks of its Ankra load balancer (or its edge, or its share group's load balancer). */
export interface LoadBalancerIntent extends IntentBase {
  /** Served by an Ankra load balancer. */
  mode: "load-balancer";
  /** The Service's TCP ports that have a node port, in Service order (other ports are not forwarded). */
  ports: ForwardedPort[];
  /** The chosen member addresses (per family, IPv6 first). */
  members: readonly DesiredMember[];
  /**
   * The load balancer's key in the controller's directory: `key` for the Service's own one, `shared:<ns>.<share>` for
   * the one it shares (`load-balancer.ankra.cloud/share`).
   */
  loadBalancerKey: string;
  /** Name of the load balancer (the Service's own, or its share group's). */
  loadBalancerName: string;
  /**
   * Labels of the load balancer (the Service's and cluster's, or the share group's and cluster's; with the cluster's
   * UID when known).
   */
  labels: Record<string, string>;
  /** Prefix of the names of the Service's members on an edge (with this cluster's UID); "" when it names no edge. */
  edgePrefix: string;
  /**
   * The Go controller's prefix for the same Service: members named so are the Service's too (renamed on a pass); ""
   * when it names no edge.
   */
  legacyEdgePrefix: string;
}

/**
 * What a Service asks of its nodes in node-address mode: no load balancer, no members, names or labels — its serving
 * nodes' public addresses are its ingress, and kube-proxy answers there (every protocol, no node port needed).
 */
export interface NodeAddressIntent extends IntentBase {
  /** Served on its nodes' own public addresses. */
  mode: "node-addresses";
}

/**
 * Everything a Service asks for, typed by how it is served (decided once: `service_decision.ts`); each way of serving
 * reads only its own kind.
 */
export type ServiceIntent = LoadBalancerIntent | NodeAddressIntent;

/** Which Services of `type: LoadBalancer` this controller serves besides the class: `--require-load-balancer-class`. */
export interface ClassRule {
  /** Serve only Services of the configured class: class-less ones are left to another implementation. */
  requireClass?: boolean;
}

/**
 * True when this controller serves the Service: `type: LoadBalancer` without a class, or with the configured one; with
 * `rule.requireClass`, only with the configured one; and always with the node-address class
 * ({@linkcode NODE_ADDRESSES_CLASS}).
 */
export function wantsLoadBalancer(service: SlimService, loadBalancerClass?: string, rule: ClassRule = {}): boolean {
  if (service.type !== "LoadBalancer") return false;
  if (service.loadBalancerClass === NODE_ADDRESSES_CLASS) return true;
  if (!service.loadBalancerClass) return !(rule.requireClass && loadBalancerClass);
  return service.loadBalancerClass === loadBalancerClass;
}

/** True when the Service's load balancer must go: it carries the finalizer and is deleted or no longer served. */
export function needsCleanup(service: SlimService, loadBalancerClass?: string, rule: ClassRule = {}): boolean {
  return service.finalizers.includes(FINALIZER) &&
    (Boolean(service.deletionTimestamp) || !wantsLoadBalancer(service, loadBalancerClass, rule));
}

/** Splits a Service's ports: TCP with node ports, other protocols, TCP without node port. */
export function portPlan(service: SlimService): PortPlan {
  const plan: PortPlan = { tcp: [], unsupported: [], withoutNodePort: [] };
  const seen = new Set<number>();
  for (const port of service.ports) {
    const protocol = (port.protocol || "TCP").toUpperCase();
    if (protocol !== "TCP") {
      plan.unsupported.push(`${port.port}/${protocol}`);
      continue;
    }
    if (seen.has(port.port)) continue;
    seen.add(port.port);
    if (!port.nodePort) plan.withoutNodePort.push(port.port);
    else plan.tcp.push({ port: port.port, nodePort: port.nodePort });
  }
  return plan;
}

/** The Service's IP families, IPv6 first; both when none are set. */
export function serviceFamilies(service: Pick<SlimService, "ipFamilies">): (4 | 6)[] {
  const families = service.ipFamilies.map((f) => (f === "IPv6" ? 6 : 4) as 4 | 6);
  if (families.length === 0) return [6, 4];
  return [...new Set(families)].sort((a, b) => b - a);
}

function unsupportedSettings(service: SlimService): string | undefined {
  const unsupported: string[] = [];
  if (service.loadBalancerSourceRanges.length > 0) {
    unsupported.push(
      `spec.loadBalancerSourceRanges (${service.loadBalancerSourceRanges.join(", ")}) is not enforced: Ankra load ` +
        "balancers accept every source; filter on the nodes (NetworkPolicy or firewall) instead",
    );
  }
  return unsupported.length ? unsupported.join("; ") : undefined;
}

/** The topic of {@linkcode tooManyMembersNotice}. */
export const MEMBERS_NOTICE_TOPIC = "members";

/**
 * The `TooManyMembers` notice of a member selection: how many of the candidate node addresses serve when the
 * backend's limit leaves some out (no message when none is left out).
 */
export function tooManyMembersNotice(selection: { members: readonly unknown[]; candidates: number }): Notice {
  const left = selection.candidates - selection.members.length;
  return {
    topic: MEMBERS_NOTICE_TOPIC,
    reason: "TooManyMembers",
    message: left > 0
      ? `a load balancer backend holds at most ${MAX_MEMBERS} members; ${selection.members.length} of ` +
        `${selection.candidates} node addresses serve this Service (a stable choice per Service, spread over zones ` +
        "and both IP families): label nodes with node.kubernetes.io/exclude-from-external-load-balancers=true to " +
        "choose which serve"
      : undefined,
  };
}

/**
 * Decides what a Service asks of its load balancer (see the module documentation), over the cluster's `nodes` or
 * their {@linkcode NodeFacts}.
 */
export function serviceIntent(
  service: SlimService,
  nodes: readonly SlimNode[] | NodeFacts,
  options: ServicePlanOptions,
): ServiceIntent {
  const facts = nodeFactsOf(nodes);
  const { eligible, matched, pendingNodes } = facts;
  const key = objectKey(service);
  const parsed = parseAnnotations(service.annotations, { sessionAffinity: service.sessionAffinity });
  const ports = portPlan(service);
  const settings = parsed.ok ? parsed.settings : defaultSettings({ sessionAffinity: service.sessionAffinity });
  if (!service.annotations[`${ANNOTATION_PREFIX}ipv4`]?.trim()) settings.ipv4 = options.defaults.ipv4 ?? false;
  const mode = servingMode(service, settings.mode, options.defaults.mode);
  // On the nodes' own addresses kube-proxy serves every protocol, source ranges and Services without node ports.
  const onNodes = mode === "node-addresses";
  const families = serviceFamilies(service);
  // Members only for a load balancer: node-address mode publishes its nodes' public addresses instead.
  const selection = onNodes
    ? { members: [], candidates: 0 }
    : facts.membersFor(families) ?? selectMembers(matched, families, { serviceKey: key });
  const notices: Notice[] = [
    {
      topic: "annotations",
      reason: "InvalidAnnotation",
      message: parsed.ok
        ? undefined
        : `${describeProblems(parsed.problems)}; nothing is created or changed until it is fixed`,
    },
    {
      topic: "ports",
      reason: "UnsupportedPort",
      message: ports.unsupported.length && !onNodes
        ? `Ankra load balancers forward TCP only; not forwarding ${ports.unsupported.join(", ")}` +
          (ports.tcp.length + ports.withoutNodePort.length === 0
            ? "; the Service has no TCP port, so no load balancer is made for it: add a TCP port or use another " +
              "Service type"
            : "")
        : undefined,
    },
    { topic: "settings", reason: "UnsupportedSetting", message: onNodes ? undefined : unsupportedSettings(service) },
    { topic: "service-lb", reason: "K3sServiceLBActive", message: facts.serviceLbMessage },
    tooManyMembersNotice(selection),
  ];
  let waitFor: WaitForUser | undefined;
  if (!parsed.ok) {
    waitFor = { message: "invalid annotations", reported: true };
  } else if (onNodes) {
    waitFor = undefined;
  } else if (ports.tcp.length + ports.withoutNodePort.length === 0) {
    waitFor = { message: "the Service has no TCP port", reported: true };
  } else if (ports.withoutNodePort.length) {
    waitFor = {
      message: `port ${ports.withoutNodePort.join(", ")} has no NodePort; the load balancer forwards to NodePorts, ` +
        "so spec.allocateLoadBalancerNodePorts must not be false",
      reported: false,
    };
  }
  const base = {
    key,
    settings,
    nodes: matched,
    noNodes: eligible.length === 0,
    pendingNodes,
    notices,
    waitFor,
  };
  if (onNodes) return { ...base, mode: "node-addresses" };
  return {
    ...base,
    mode: "load-balancer",
    ports: ports.tcp,
    members: selection.members,
    loadBalancerKey: settings.share ? sharedKey(service.namespace, settings.share) : key,
    loadBalancerName: settings.share
      ? sharedLoadBalancerName(options.clusterName, service.namespace, settings.share)
      : loadBalancerName(options.clusterName, service.namespace, service.name),
    labels: {
      ...(settings.share
        ? sharedLoadBalancerLabels(options.clusterName, service.namespace, settings.share)
        : loadBalancerLabels(options.clusterName, service.namespace, service.name)),
      ...(options.clusterUid ? { [CLUSTER_UID_LABEL]: options.clusterUid } : {}),
    },
    // Hashes, derived only for a Service on an edge (nothing else reads them).
    edgePrefix: settings.edgeId
      ? edgeMemberPrefix(options.clusterName, service.namespace, service.name, options.clusterUid)
      : "",
    legacyEdgePrefix: settings.edgeId ? edgeMemberPrefix(options.clusterName, service.namespace, service.name) : "",
  };
}

/** A choice for a new load balancer, or why none can be made. */
type Choice = { ok: true; value: string } | { ok: false; problem: string };

/**
 * The zone of a new load balancer: the annotation, the configured default, else the zone most of the Service's nodes
 * are in (ties: the first by name).
 */
export function chooseZone(intent: Pick<ServiceIntent, "settings" | "nodes">, defaultZone?: string): Choice {
  if (intent.settings.zone) return { ok: true, value: intent.settings.zone };
  if (defaultZone) return { ok: true, value: defaultZone };
  const counts = new Map<string, number>();
  for (const node of intent.nodes) {
    const zone = nodeZone(node);
    if (zone) counts.set(zone, (counts.get(zone) ?? 0) + 1);
  }
  const best = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
  if (best) return { ok: true, value: best[0] };
  return {
    ok: false,
    problem: `no zone for the load balancer: set the ${ANNOTATION_PREFIX}zone annotation or ANKRA_CLOUD_ZONE, ` +
      `or label the nodes with ${ZONE_LABEL}`,
  };
}
