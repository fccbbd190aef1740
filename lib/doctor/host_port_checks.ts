/**
 * The doctor's check of the ports node-address Services take on their nodes' own addresses, against the pods that
 * listen on those addresses themselves: a `hostNetwork` pod (every container port) or a pod with a `hostPort`. Once a
 * Service is published on a node's public address, kube-proxy captures that address and port before anything on the
 * host sees the packet: the pod no longer gets what arrives there for that port (it still gets it on the node's other
 * addresses). The controller refuses a port another node-address Service holds (`PortConflict`) and the ports of
 * `--node-address-reserved-ports` (`PortReserved`), but it does not read pods; this check does, when the doctor may
 * list them (the controller's ClusterRole may not: run the doctor with an administrator's kubeconfig).
 *
 * Only the nodes that would serve the Service count (the controller's choice, `nodesServing`), and a pod the Service
 * selects itself is left out: a hostNetwork ingress controller behind its own Service gets its traffic either way.
 * Everything found is a warning that names the Service, the port, the pod and the node; pure.
 *
 * @module
 */
import { ANNOTATION_PREFIX } from "../ankra_names.ts";
import type { SlimNode } from "../kube/slim.ts";
import { objectKey } from "../kube/object_key.ts";
import type { HostPortPod, ServiceFacts } from "./facts.ts";
import { nodeAddressServices, nodesServing, serversByNode } from "./node_address_checks.ts";
import type { DoctorSettings } from "./doctor_settings.ts";
import type { NodeMatch } from "./placement_checks.ts";
import { type CheckName, type Finding, nameList, pass, plural, warn } from "./report.ts";
import type { ModeRule } from "./setup_needs.ts";

/** The check of node-address Services' ports against the pods that take ports on the nodes. */
export const NODE_ADDRESS_PORTS: CheckName = {
  id: "node-address-ports",
  title: "Node-address Services' ports are not taken on their nodes by hostNetwork or hostPort pods",
};

/** What the check is made from. */
interface HostPortCheckInput {
  /** The controller's settings (which Services are in node-address mode, and which nodes serve them). */
  settings: ModeRule & Pick<DoctorSettings, "clusterName">;
  /** Every Service. */
  services: readonly ServiceFacts[];
  /** The Nodes (managed ones). */
  nodes: readonly SlimNode[];
  /** Each Node's server. */
  matches: readonly NodeMatch[];
  /** The pods that take ports on their nodes. */
  pods: readonly HostPortPod[];
}

/** True when `service` selects `pod` (same namespace, every label of its selector). */
function selects(service: ServiceFacts, pod: HostPortPod): boolean {
  const selector = Object.entries(service.selector ?? {});
  return pod.namespace === service.namespace && selector.length > 0 &&
    selector.every(([key, value]) => pod.labels[key] === value);
}

function podText(pod: HostPortPod): string {
  return `${pod.namespace}/${pod.name} (${pod.hostNetwork ? "hostNetwork" : "hostPort"}) on ${pod.nodeName}`;
}

/** The finding of node-address Services' ports against the pods that take ports on their nodes. */
export function hostPortsFinding(input: HostPortCheckInput): Finding {
  const onNodes = nodeAddressServices(input.services, input.settings);
  const servers = serversByNode(input.matches);
  if (onNodes.length === 0) {
    const taken = input.pods.flatMap((pod) => pod.ports.map((p) => `${p.port}/${p.protocol} (${podText(pod)})`));
    return pass(
      NODE_ADDRESS_PORTS,
      `no node-address Service yet; ports taken on the nodes by hostNetwork or hostPort pods, which a node-address ` +
        `Service should not use: ${taken.length > 0 ? nameList(taken.sort(), 5) : "none"}`,
    );
  }
  const clashes: string[] = [];
  for (const service of onNodes) {
    const serving = new Set(nodesServing(service, input.nodes, servers, input.settings).map((node) => node.name));
    for (const port of service.ports) {
      const protocol = (port.protocol || "TCP").toUpperCase();
      for (const pod of input.pods) {
        if (!serving.has(pod.nodeName) || selects(service, pod)) continue;
        if (!pod.ports.some((p) => p.port === port.port && p.protocol === protocol)) continue;
        clashes.push(`${objectKey(service)} port ${port.port}/${protocol}: ${podText(pod)}`);
      }
    }
  }
  if (clashes.length === 0) {
    return pass(
      NODE_ADDRESS_PORTS,
      `no hostNetwork or hostPort pod on a serving node takes a port of the ${
        plural(onNodes.length, "node-address Service")
      } (${plural(input.pods.length, "pod")} take ports on their nodes)`,
    );
  }
  return warn(
    NODE_ADDRESS_PORTS,
    `${plural(clashes.length, "port")} of node-address Services ${
      clashes.length === 1 ? "is" : "are"
    } also taken on a node that serves it by a pod listening on the node's own addresses: ${nameList(clashes, 5)}; ` +
      "kube-proxy captures the Service's address and port first, so that pod no longer gets what arrives there on " +
      "that port (only on the node's other addresses)",
    "give the Service another port, or serve it with an Ankra load balancer " +
      `(${ANNOTATION_PREFIX}mode: load-balancer); or move the pod off the serving nodes, or keep those nodes out of ` +
      `the Service (${ANNOTATION_PREFIX}node-selector, or the label ` +
      "node.kubernetes.io/exclude-from-external-load-balancers=true)",
  );
}
