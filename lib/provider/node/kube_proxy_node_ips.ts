/**
 * kube-proxy's view of a Node's addresses, and the rule that keeps it put. kube-proxy 1.37 and later exits when its
 * Node's IPs change (`pkg/proxy/node.go`, `NodeManager.OnNodeChange`); on k3s, which runs kube-proxy inside its own
 * process, that is the whole k3s process (API server, datastore, kubelet) exiting and systemd restarting it. So every
 * address write of the cloud-node controller goes through {@linkcode keepKubeProxyNodeIps}: a refresh, a controller
 * restart or upgrade, a new leg or an IPv4 add-on never changes the IPs kube-proxy reads while they are still the
 * server's. The one change left is deliberate: a node whose kubelet registered one family (`--node-ip=<v4>`) on a server
 * that has both gets the other family's address at initialisation — kube-proxy's IPs go from `[v4]` to `[v4, v6]` once
 * (see docs/k3s.md for the `--node-ip=<v4>,<v6>` setup that changes nothing).
 *
 * @module
 */
import { parseIpSloppy } from "../../ip_address.ts";
import type { NodeAddress } from "../../kube/slim.ts";

/**
 * The node IPs kube-proxy reads from a Node's addresses, as upstream's `GetNodeHostIPs` (`pkg/util/node/node.go`):
 * the first InternalIP (else the first ExternalIP), then the first address of the other family among the InternalIPs
 * and then the ExternalIPs. Canonical text; other address types and unparsable values are not read.
 */
export function kubeProxyNodeIps(addresses: readonly NodeAddress[]): string[] {
  const ips = [
    ...addresses.filter((a) => a.type === "InternalIP"),
    ...addresses.filter((a) => a.type === "ExternalIP"),
  ].map((a) => parseIpSloppy(a.address)).filter((ip) => ip !== undefined);
  if (ips.length === 0) return [];
  const other = ips.find((ip) => ip.family !== ips[0].family);
  return other ? [ips[0].text, other.text] : [ips[0].text];
}

/** True when kube-proxy reads the same node IPs from both lists. */
export function sameKubeProxyNodeIps(a: readonly NodeAddress[], b: readonly NodeAddress[]): boolean {
  const [x, y] = [kubeProxyNodeIps(a), kubeProxyNodeIps(b)];
  return x.length === y.length && x.every((ip, i) => ip === y[i]);
}

/**
 * The `desired` addresses, ordered so that kube-proxy keeps the node IPs it reads from `current` whenever that is
 * possible: when `desired` still holds every one of them, they are moved to the front (in kube-proxy's order) and the
 * rest follow as `desired` orders them. `desired` itself when kube-proxy's IPs do not change anyway, when the node has
 * none yet, or when the change cannot be avoided: an IP of theirs is gone, or the server gained an address of a family
 * kube-proxy did not have (the node's first initialisation of a single-stack kubelet on a dual-stack server).
 */
export function keepKubeProxyNodeIps(current: readonly NodeAddress[], desired: NodeAddress[]): NodeAddress[] {
  const kept = kubeProxyNodeIps(current);
  if (kept.length === 0 || sameKubeProxyNodeIps(current, desired)) return desired;
  const first: NodeAddress[] = [];
  for (const ip of kept) {
    const entry = desired.find((a) => a.type !== "Hostname" && parseIpSloppy(a.address)?.text === ip);
    if (!entry) return desired;
    first.push(entry);
  }
  const reordered = [...first, ...desired.filter((a) => !first.includes(a))];
  return sameKubeProxyNodeIps(current, reordered) ? reordered : desired;
}
