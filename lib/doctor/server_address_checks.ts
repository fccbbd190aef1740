/**
 * The doctor's check of the servers' public IPv6 addresses: a server whose /64 comes from a pool Ankra Cloud is
 * draining (`ipv6_renumber_available` in `list_servers`) is due to move to a new /64, and the public IPv6 the cluster
 * publishes for it — the Node's address, and a node-address Service's ingress — then changes. The controller follows
 * such a change by itself; what else names the old address (DNS records, firewall rules, a kubelet's `--node-ip`) does
 * not. A warning that names the nodes and their addresses; pure.
 *
 * @module
 */
import type { NodeMatch } from "./placement_checks.ts";
import { type CheckName, type Finding, nameList, pass, plural, warn } from "./report.ts";

/** The check of the servers' IPv6 renumbering. */
export const IPV6_RENUMBER: CheckName = {
  id: "ipv6-renumber",
  title: "No node's server is due to have its public IPv6 renumbered",
};

/** The finding of the servers' IPv6 renumbering, over the nodes matched to servers. */
export function ipv6RenumberFinding(matches: readonly NodeMatch[]): Finding {
  const matched = matches.filter((m) => m.kind === "matched");
  const due = matched.filter((m) => m.server.ipv6_renumber_available && m.server.public_ipv6);
  if (due.length === 0) {
    return pass(
      IPV6_RENUMBER,
      `no server of the ${plural(matched.length, "matched node")} has its /64 in a pool being drained ` +
        "(ipv6_renumber_available)",
    );
  }
  return warn(
    IPV6_RENUMBER,
    `the server${due.length === 1 ? "" : "s"} of ${plural(due.length, "node")} ${
      due.length === 1 ? "has its" : "have their"
    } /64 in a pool Ankra Cloud is draining (ipv6_renumber_available): ${
      nameList(due.map((m) => `${m.node} (server ${m.server.id}, ${m.server.public_ipv6})`), 5)
    }; when the server moves to a new /64, the public IPv6 the cluster publishes for it changes`,
    [
      "the controller follows the new address by itself: the Node's addresses at its next refresh " +
      "(--node-status-update-frequency), a node-address Service's ingress within --server-list-period (60 s), with " +
      "a Normal NodeAddressesChanged event on the Service;",
      "update what else names the old address: DNS records, firewall rules, and a kubelet whose --node-ip names it " +
      "(k3s: --kubelet-arg=node-ip=…) — kube-proxy 1.37+ exits once when its node IPs change (on k3s the whole k3s " +
      "service restarts)",
    ].join("\n"),
  );
}
