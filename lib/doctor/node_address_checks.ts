/**
 * The doctor's check of node-address mode (docs/node-addresses.md), made when the setup uses it (`setup_needs.ts`):
 * some Service is in that mode (the class `ankra.cloud/node-addresses`, the annotation
 * `load-balancer.ankra.cloud/mode: node-addresses`) or `--default-load-balancer-mode=node-addresses` makes every
 * Service so. Such a Service is published on the public addresses of the servers of the nodes that serve it, so:
 *
 * - **each node that would serve has a public address**: the nodes are chosen by the controller's own decision
 *   ({@linkcode nodesServing}), among the nodes matched to a server; a server's public IPv6 counts unless it is a ULA only Ankra Cloud reaches
 *   (`public_ipv6_is_private`), and its IPv4 add-on. The doctor reads no EndpointSlices, so for
 *   `externalTrafficPolicy: Local` it looks at every node that could hold an endpoint;
 * - **no port is refused**: a port of `--node-address-reserved-ports` is refused by the controller (`PortReserved`);
 * - **nothing else serves these Services**: k3s ServiceLB (read from the k3s servers' `k3s.io/node-args`, as
 *   `k3s-servicelb` does), and MetalLB. MetalLB is recognised by the annotation its controller writes on each Service
 *   it gives an address (`metallb.io/ip-allocated-from-pool`), not by its Deployment and DaemonSet in
 *   `metallb-system`: this check reads only what the controller may read, and the controller's ClusterRole has no
 *   access to Deployments or Pods. A MetalLB that has not served any Service yet is therefore not seen. (The pods that
 *   take ports on the nodes are `host_port_checks.ts`'s, with an administrator's identity.)
 *
 * Everything found is a warning that names what to do; pure.
 *
 * @module
 */
import { ANNOTATION_PREFIX, NODE_ADDRESSES_CLASS } from "../ankra_names.ts";
import type { Server } from "../cloud/client.ts";
import type { SlimNode, SlimService } from "../kube/slim.ts";
import { formatProviderId } from "../provider/provider_id.ts";
import { UNINITIALIZED_TAINT } from "../provider/node/node_plan.ts";
import { decideService } from "../provider/service/service_decision.ts";
import { serverLeaving } from "../provider/node/planned_change.ts";
import { objectKey } from "../kube/object_key.ts";
import { k3sServersRunningServiceLb } from "../provider/k3s.ts";
import { publicAddressesOf, servingNodes } from "../provider/service/node_address_plan.ts";
import { rangeText, reservedRangeOf } from "../provider/service/reserved_ports.ts";
import { serviceFamilies } from "../provider/service/service_plan.ts";
import type { DoctorSettings } from "./doctor_settings.ts";
import type { ServiceFacts } from "./facts.ts";
import type { NodeMatch } from "./placement_checks.ts";
import { type CheckName, type Finding, nameList, pass, plural, skip, warn } from "./report.ts";
import { type ModeRule, servedServices } from "./setup_needs.ts";

/** The check of node-address mode. */
export const NODE_ADDRESSES: CheckName = {
  id: "node-addresses",
  title: "Node-address Services: serving nodes have public addresses, nothing else serves them",
};

/** The settings the check reads. */
type ModeSettings = ModeRule & Pick<DoctorSettings, "nodeAddressReservedPorts" | "clusterName">;

/** The Services the controller serves in node-address mode (not being deleted), by namespace/name. */
export function nodeAddressServices(services: readonly ServiceFacts[], settings: ModeRule): ServiceFacts[] {
  return servedServices(services, settings).filter((s) => s.mode === "node-addresses").map((s) => s.service);
}

/** What the check is made from. */
export interface NodeAddressCheckInput {
  /** The controller's settings. */
  settings: ModeSettings;
  /** Every Service; undefined when they could not be listed (`servicesWhy` says why). */
  services?: readonly ServiceFacts[];
  /** Why the Services are not known. */
  servicesWhy?: string;
  /** The Nodes (managed ones: not labelled node.ankra.cloud/managed=false). */
  nodes: SlimNode[];
  /** Each Node's server; undefined when the servers were not listed (`serversWhy` says why). */
  matches?: NodeMatch[];
  /** Why the servers are not known. */
  serversWhy?: string;
}

/** One problem: what was found and what to do. */
interface Problem {
  result: string;
  fix: string;
}

/** The server of each node matched to one, by node name. */
export function serversByNode(matches: readonly NodeMatch[]): Map<string, Server> {
  const servers = new Map<string, Server>();
  for (const match of matches) if (match.kind === "matched") servers.set(match.node, match.server);
  return servers;
}

/**
 * The nodes that would serve `service` (undefined: a Service of the default mode that does not exist yet), as the
 * controller chooses them: its own decision (`decideService`: eligibility, the Service's `node-selector`, nodes matched
 * to Ankra servers) over the nodes as it will see them once it has initialised them — a node matched to a listed
 * server (`servers`, by node name) by its hostname gets that server's providerID and loses the uninitialized taint —,
 * without the nodes whose servers are down or about to go down (`serverLeaving`, unless no other node could serve),
 * then `servingNodes` (Ready ones, else all). The doctor reads no EndpointSlices: for `externalTrafficPolicy: Local` every node that could hold an
 * endpoint counts, as the controller counts them before the EndpointSlices are known.
 */
export function nodesServing(
  service: ServiceFacts | undefined,
  nodes: readonly SlimNode[],
  servers: ReadonlyMap<string, Server>,
  settings: Pick<DoctorSettings, "clusterName" | "defaultLoadBalancerMode">,
): SlimNode[] {
  const initialised = nodes.map((node) => {
    const server = servers.get(node.name);
    if (node.providerID || !server) return node;
    // As the controller leaves it: linked to its server, the uninitialized taint gone.
    return {
      ...node,
      providerID: formatProviderId({ zone: server.zone, serverId: server.id }),
      taints: node.taints.filter((t) => t.key !== UNINITIALIZED_TAINT),
    };
  });
  // Nodes whose servers are down or about to go down leave, as the controller leaves them out (serverLeaving).
  const leaving = new Set(
    nodes.filter((node) => {
      const server = servers.get(node.name);
      return server !== undefined && serverLeaving(server);
    }).map((node) => node.name),
  );
  const intent = decideService(service ?? newService(), initialised, {
    clusterName: settings.clusterName,
    defaults: { highAvailability: "auto", mode: settings.defaultLoadBalancerMode },
    leaving,
  });
  return servingNodes(intent.nodes);
}

/** A LoadBalancer Service of the default mode with nothing set: what a new one would be. */
function newService(): SlimService {
  return {
    namespace: "default",
    name: "new",
    uid: "",
    resourceVersion: "",
    annotations: {},
    finalizers: [],
    type: "LoadBalancer",
    ports: [],
    ipFamilies: [],
    loadBalancerSourceRanges: [],
    ingress: [],
  };
}

/** The nodes' public addresses against the Services' families. */
function addressProblems(input: NodeAddressCheckInput, onNodes: ServiceFacts[], servers: Map<string, Server>) {
  const problems: Problem[] = [];
  const served = new Set<string>();
  const withoutAny = new Set<string>();
  const unserved: string[] = [];
  const partly: string[] = [];
  const targets: (ServiceFacts | undefined)[] = onNodes.length > 0 ? onNodes : [undefined];
  for (const service of targets) {
    const serving = nodesServing(service, input.nodes, servers, input.settings);
    const families = service ? serviceFamilies(service) : [6, 4] as const;
    const name = service ? objectKey(service) : "a Service of the default mode";
    if (serving.length === 0) {
      unserved.push(`${name} (no eligible node matched to a server)`);
      continue;
    }
    const lacking: string[] = [];
    for (const node of serving) {
      served.add(node.name);
      const addresses = publicAddressesOf(servers.get(node.name)!);
      const of = (family: 4 | 6) => (family === 4 ? addresses.ipv4 : addresses.ipv6);
      if (of(4) === undefined && of(6) === undefined) withoutAny.add(node.name);
      if (!families.some((family) => of(family) !== undefined)) lacking.push(node.name);
    }
    const familyText = families.map((f) => `IPv${f}`).join("/");
    if (lacking.length === serving.length) unserved.push(`${name} (${familyText}: ${nameList(lacking, 5)})`);
    else if (lacking.length > 0) partly.push(`${name} (${familyText}): ${nameList(lacking, 5)}`);
  }
  if (withoutAny.size > 0) {
    problems.push({
      result: `${plural(withoutAny.size, "node")} that would serve ${
        withoutAny.size === 1 ? "has" : "have"
      } a server without a public address (no public IPv6, no IPv4 add-on): ${nameList([...withoutAny].sort())}`,
      fix: "give those servers a public address (their public IPv6, or the IPv4 add-on), or keep them out with the " +
        "label node.kubernetes.io/exclude-from-external-load-balancers=true (or the Service's " +
        `${ANNOTATION_PREFIX}node-selector)`,
    });
  }
  if (unserved.length > 0) {
    problems.push({
      result: `${plural(unserved.length, "Service")} would get no address: ${nameList(unserved, 5)}`,
      fix: "give the servers of the nodes that serve them a public address of the Service's IP family (the IPv4 " +
        "add-on for an IPv4 Service), change spec.ipFamilies, or serve them with an Ankra load balancer " +
        `(${ANNOTATION_PREFIX}mode: load-balancer)`,
    });
  }
  if (partly.length > 0) {
    problems.push({
      result: `nodes left out of a Service's addresses (no public address of its IP family): ${nameList(partly, 5)}`,
      fix: "give those servers a public address of that family (the IPv4 add-on for IPv4), or accept that the " +
        "other nodes serve (the Service gets a Warning NodeWithoutPublicAddress)",
    });
  }
  return { problems, served: [...served].sort() };
}

/** Ports the controller refuses on the nodes' addresses. */
function reservedPortProblems(onNodes: ServiceFacts[], settings: ModeSettings): Problem[] {
  const reserved = settings.nodeAddressReservedPorts ?? [];
  const refused: string[] = [];
  for (const service of onNodes) {
    for (const port of service.ports) {
      const range = reservedRangeOf(port.port, port.protocol, reserved);
      if (range) {
        refused.push(
          `${objectKey(service)} port ${port.port}/${(port.protocol || "TCP").toUpperCase()} (${rangeText(range)})`,
        );
      }
    }
  }
  if (refused.length === 0) return [];
  return [{
    result:
      `${plural(refused.length, "port")} of node-address Services ${
        refused.length === 1 ? "is" : "are"
      } reserved on the nodes' own addresses (--node-address-reserved-ports) and will be refused ` +
      `(PortReserved): ${nameList(refused, 5)}`,
    fix: "choose another port, serve the Service with an Ankra load balancer " +
      `(${ANNOTATION_PREFIX}mode: load-balancer), or, if nothing on the nodes uses that port, leave it out of ` +
      "--node-address-reserved-ports (chart: loadBalancer.nodeAddressReservedPorts)",
  }];
}

/** Other load-balancer implementations that would serve the node-address Services too. */
function otherImplementations(input: NodeAddressCheckInput, onNodes: ServiceFacts[]): Problem[] {
  const problems: Problem[] = [];
  const serviceLb = k3sServersRunningServiceLb(input.nodes);
  if (serviceLb.length > 0) {
    problems.push({
      result: `k3s ServiceLB runs on ${plural(serviceLb.length, "k3s server")} (${nameList(serviceLb)}): it ` +
        "answers LoadBalancer Services beside this controller (its svclb pods take their ports on the nodes, and " +
        "both write their status; the controller warns K3sServiceLBActive on each)",
      fix: "restart every k3s server with --disable=servicelb (config.yaml: disable: [servicelb]); see " +
        "docs/node-addresses.md#moving-from-k3s-servicelb",
    });
  }
  if (!input.services) return problems;
  const served = onNodes.filter((service) => service.metalLbAllocation);
  const metalLbFix = "run MetalLB with a load balancer class of its own (its --lb-class; Helm value " +
    "loadBalancerClass) so it leaves class-less Services alone, give node-address Services spec.loadBalancerClass: " +
    `${NODE_ADDRESSES_CLASS} (set at creation: recreate the Service), or remove MetalLB`;
  if (served.length > 0) {
    problems.push({
      result: `MetalLB gave ${plural(served.length, "node-address Service")} an address too (${
        nameList(served.map((s) => `${objectKey(s)}: ${s.metalLbAllocation}`), 5)
      }): two implementations write their status`,
      fix: metalLbFix,
    });
    return problems;
  }
  const elsewhere = input.services.filter((service) => service.metalLbAllocation && service.type === "LoadBalancer");
  const classless = onNodes.filter((service) => !service.loadBalancerClass);
  if (elsewhere.length > 0 && classless.length > 0) {
    problems.push({
      result: `MetalLB runs in this cluster (it gave ${nameList(elsewhere.map(objectKey), 3)} an address) and, ` +
        `unless it has a class of its own, also serves the class-less node-address Services: ` +
        nameList(classless.map(objectKey), 5),
      fix: metalLbFix,
    });
  }
  return problems;
}

/** The finding of node-address mode, for a setup that uses it (`setup_needs.ts`). */
export function nodeAddressesFinding(input: NodeAddressCheckInput): Finding {
  const onNodes = input.services ? nodeAddressServices(input.services, input.settings) : [];
  const byDefault = input.settings.defaultLoadBalancerMode === "node-addresses";
  const problems: Problem[] = [];
  const notChecked: string[] = [];
  let served: string[] = [];
  if (input.matches) {
    const found = addressProblems(input, onNodes, serversByNode(input.matches));
    problems.push(...found.problems);
    served = found.served;
  } else {
    notChecked.push(`the nodes' public addresses were not checked: ${input.serversWhy ?? "no server list"}`);
  }
  problems.push(...reservedPortProblems(onNodes, input.settings));
  problems.push(...otherImplementations(input, onNodes));
  if (!input.services) {
    notChecked.push(`MetalLB was not checked: ${input.servicesWhy ?? "the Services were not listed"}`);
  }
  const what = onNodes.length > 0
    ? `${plural(onNodes.length, "Service")} in node-address mode (${nameList(onNodes.map(objectKey), 5)})`
    : "--default-load-balancer-mode=node-addresses (no such Service yet)";
  const remarks = notChecked.length > 0 ? ` (${notChecked.join("; ")})` : "";
  if (problems.length > 0) {
    return warn(
      NODE_ADDRESSES,
      `${what}: ${problems.map((p) => p.result).join("; ")}${remarks}`,
      problems.map((p) => p.fix).join("\n"),
    );
  }
  if (input.matches === undefined && !input.services) {
    return skip(NODE_ADDRESSES, `skipped: ${notChecked.join("; ")}`);
  }
  const nodesText = input.matches ? `every node that would serve (${nameList(served)}) has a public address` : "";
  const others = input.services
    ? `neither k3s ServiceLB nor MetalLB serves ${byDefault && onNodes.length === 0 ? "Services" : "them"}`
    : "k3s ServiceLB does not run";
  return pass(NODE_ADDRESSES, `${what}: ${[nodesText, others].filter(Boolean).join("; ")}${remarks}`);
}
