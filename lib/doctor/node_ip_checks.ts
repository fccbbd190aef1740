/**
 * The doctor's check of the kubelets' node IPs against what the controller will publish: a node still waiting for
 * initialisation whose kube-proxy reads one address family (the kubelet's `--node-ip=<v4>`, or the one address it
 * found) on a server with an address of the other family gets that address from the controller, so kube-proxy's node
 * IPs change once. kube-proxy 1.37 and later exits on that change and is restarted; on k3s, where kube-proxy runs inside
 * the k3s process, the whole k3s service restarts once (API server and datastore included on a server node). A warning:
 * it happens once per node and the cluster recovers by itself, but k3s users may want `--node-ip=<v4>,<v6>` instead.
 *
 * @module
 */
import { parseIpSloppy } from "../ip_address.ts";
import type { SlimNode } from "../kube/slim.ts";
import { k3sArgs } from "../provider/k3s.ts";
import { kubeProxyNodeIps } from "../provider/node/kube_proxy_node_ips.ts";
import { isUninitialized } from "../provider/node/node_plan.ts";
import type { NodeMatch } from "./placement_checks.ts";
import { type CheckName, type Finding, nameList, pass, plural, warn } from "./report.ts";

/** The check of the kubelets' node IPs. */
export const KUBE_PROXY_NODE_IPS: CheckName = {
  id: "kube-proxy-node-ips",
  title: "kube-proxy's node IPs stay put at initialisation (kubelet --node-ip)",
};

/** A node whose kube-proxy gains an address family at initialisation. */
interface NodeGainingFamily {
  /** The Node's name. */
  name: string;
  /** kube-proxy's node IPs now (one family). */
  now: string[];
  /** The server's address of the other family the controller will publish. */
  gains: string;
  /** True for a k3s node (annotation `k3s.io/node-args`): kube-proxy runs inside k3s. */
  k3s: boolean;
}

/** The uninitialised nodes whose kube-proxy's node IPs will gain the other family from their server. */
export function nodesGainingFamily(nodes: SlimNode[], matches: NodeMatch[]): NodeGainingFamily[] {
  const byName = new Map(nodes.map((node) => [node.name, node]));
  const out: NodeGainingFamily[] = [];
  for (const match of matches) {
    if (match.kind !== "matched") continue;
    const node = byName.get(match.node);
    if (!node || !isUninitialized(node)) continue;
    const now = kubeProxyNodeIps(node.addresses);
    if (now.length !== 1) continue;
    const family = parseIpSloppy(now[0])?.family;
    const other = family === 4 ? match.server.public_ipv6 : match.server.public_ipv4;
    const gains = other ? parseIpSloppy(other) : undefined;
    if (gains && gains.family !== family) {
      out.push({ name: node.name, now, gains: gains.text, k3s: k3sArgs(node.k3sNodeArgs) !== undefined });
    }
  }
  return out;
}

/** The finding of the kubelets' node IPs. */
export function kubeProxyNodeIpsFinding(nodes: SlimNode[], matches: NodeMatch[]): Finding {
  const waiting = nodes.filter(isUninitialized);
  if (waiting.length === 0) {
    return pass(KUBE_PROXY_NODE_IPS, "no node waits for initialisation: the controller keeps kube-proxy's node IPs");
  }
  const gaining = nodesGainingFamily(nodes, matches);
  if (gaining.length === 0) {
    return pass(
      KUBE_PROXY_NODE_IPS,
      `${plural(waiting.length, "node")} waiting for initialisation keep kube-proxy's node IPs as they are`,
    );
  }
  const k3s = gaining.filter((g) => g.k3s).map((g) => g.name);
  const example = gaining[0];
  return warn(
    KUBE_PROXY_NODE_IPS,
    `${plural(gaining.length, "node")} (${nameList(gaining.map((g) => g.name))}) registered one address family ` +
      `(${example.name}: ${example.now[0]}) on a server that has the other (${example.gains}): at initialisation ` +
      "the controller publishes it, kube-proxy's node IPs change once, and kube-proxy 1.37+ exits and is restarted" +
      (k3s.length > 0 ? `; on k3s (${nameList(k3s)}) that restarts the whole k3s service once` : ""),
    [
      "to change nothing, give the kubelet both families' node IPs before the node joins:",
      `  k3s: --node-ip=<v4>,<v6> (or --kubelet-arg=node-ip=<v4>,<v6>), e.g. ${example.now[0]},${example.gains}`,
      "  others: the kubelet's --node-ip=<v4>,<v6>",
      "or accept one kube-proxy restart per node at its initialisation (docs/k3s.md)",
    ].join("\n"),
  );
}
