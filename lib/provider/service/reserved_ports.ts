/**
 * The ports a node-address Service may not claim: on a node's own address a port is the node's, and the host's and
 * the cluster's own components listen on some (SSH, etcd, the API server, the kubelet, k3s's supervisor, flannel's
 * and WireGuard's tunnels). kube-proxy would take such a port over from the host for every client that reaches the
 * address, so a Service asking for one is refused instead. The list is `--node-address-reserved-ports`; pure.
 *
 * @module
 */

/** A protocol of a Service port. */
type PortProtocol = "tcp" | "udp" | "sctp";

/** One reserved range: `from`–`to` (inclusive) of `protocol`. */
export interface ReservedRange {
  from: number;
  to: number;
  protocol: PortProtocol;
}

/**
 * The default list: SSH 22; etcd 2379–2380; the API server 6443 and k3s's load balancer 6444; RKE2's supervisor 9345;
 * the kubelet, kube-proxy, the scheduler, the controller manager and this controller 10248–10259; flannel VXLAN
 * 8472/udp, VXLAN 4789/udp; flannel's WireGuard 51820–51821/udp; Cilium's health and Hubble 4240, 4244.
 */
export const DEFAULT_RESERVED_PORTS =
  "22,2379-2380,4240,4244,6443-6444,9345,10248-10259,4789/udp,8472/udp,51820-51821/udp";

/**
 * Parses a reserved-port list: comma-separated `port` or `from-to`, each optionally `/tcp`, `/udp` or `/sctp` (TCP
 * when none is given); empty: nothing reserved.
 */
export function parseReservedPorts(text: string): { ok: true; ranges: ReservedRange[] } | { ok: false; rule: string } {
  const ranges: ReservedRange[] = [];
  for (const item of text.split(",").map((part) => part.trim()).filter(Boolean)) {
    const match = /^(\d{1,5})(?:-(\d{1,5}))?(?:\/(tcp|udp|sctp))?$/i.exec(item);
    const from = Number(match?.[1]);
    const to = match?.[2] === undefined ? from : Number(match[2]);
    if (!match || from < 1 || to > 65535 || to < from) {
      return {
        ok: false,
        rule: `"${item}" is not a port or range: write 22, 10248-10259 or 8472/udp (ports 1-65535, from <= to)`,
      };
    }
    ranges.push({ from, to, protocol: (match[3]?.toLowerCase() ?? "tcp") as PortProtocol });
  }
  return { ok: true, ranges };
}

/** The reserved range holding `port` of `protocol` (a Service port's protocol, any case), if one does. */
export function reservedRangeOf(
  port: number,
  protocol: string,
  ranges: readonly ReservedRange[],
): ReservedRange | undefined {
  const wanted = (protocol || "TCP").toLowerCase();
  return ranges.find((r) => r.protocol === wanted && port >= r.from && port <= r.to);
}

/** `22/tcp` or `10248-10259/tcp`. */
export function rangeText(range: ReservedRange): string {
  return `${range.from === range.to ? range.from : `${range.from}-${range.to}`}/${range.protocol}`;
}
