/**
 * A Service's members on a combined edge (`reference-behaviour.md` §3.14): members whose names start with the
 * Service's prefix are its own; every other member (other Services', hand-made ones) is kept untouched and in its
 * order; a Service port already served by a kept member is a conflict; the status comes from the edge's addresses.
 * Pure functions.
 *
 * @module
 */
import type { Edge } from "../cloud/schemas.ts";
import type { EdgeMemberInput } from "../cloud/client.ts";

/** The member list to send, or the conflict that prevents it. */
export type EdgeMembersPlan =
  | { ok: true; members: EdgeMemberInput[]; changed: boolean }
  | { ok: false; conflict: string };

/** An edge member in the API's input shape (`id` and unknown fields dropped, defaults made explicit). */
export function asEdgeInput(member: Edge["members"][number]): EdgeMemberInput {
  return {
    name: member.name,
    frontend_port: member.frontend_port,
    address: member.address,
    port: member.port,
    weight: member.weight ?? 100,
    enabled: member.enabled ?? true,
  };
}

function key(m: EdgeMemberInput): string {
  return [m.name, m.frontend_port, m.address, m.port, m.weight ?? 100, m.enabled ?? true].join("|");
}

/** The edge's new member list with this Service's `wanted` members (named with `prefix`). */
export function edgeMembersPlan(edge: Edge, prefix: string, wanted: EdgeMemberInput[]): EdgeMembersPlan {
  const kept = edge.members.filter((m) => !m.name.startsWith(prefix));
  const ports = new Set(wanted.map((m) => m.frontend_port));
  const clash = kept.find((m) => ports.has(m.frontend_port));
  if (clash) {
    return {
      ok: false,
      conflict: `port ${clash.frontend_port} of edge ${edge.id} is already served by member ${clash.name}; ` +
        "choose another Service port or remove that member",
    };
  }
  const members = [...kept.map(asEdgeInput), ...wanted];
  const current = edge.members.map(asEdgeInput).map(key).sort();
  const next = members.map(key).sort();
  const changed = current.length !== next.length || current.some((k, i) => k !== next[i]);
  return { ok: true, members, changed };
}

/** The edge's list without this Service's members, or undefined when it has none there. */
export function edgeMembersWithout(edge: Edge, prefix: string): EdgeMemberInput[] | undefined {
  if (!edge.members.some((m) => m.name.startsWith(prefix))) return undefined;
  return edge.members.filter((m) => !m.name.startsWith(prefix)).map(asEdgeInput);
}

/** True for a combined edge with the `load_balancer` role. */
export function isCombinedLoadBalancerEdge(edge: Edge): boolean {
  return edge.placement === "combined" && edge.roles.includes("load_balancer");
}

/** The Service's ingress from an edge: the load-balancer machine's IPv6, then the edge's (or machine's) IPv4. */
export function edgeIngress(edge: Edge): { ip: string }[] {
  const machine = edge.machines.find((m) => m.roles.includes("load_balancer"));
  const ips: string[] = [];
  if (machine?.public_ipv6) ips.push(machine.public_ipv6);
  const ipv4 = edge.public_ipv4 ?? machine?.public_ipv4;
  if (ipv4) ips.push(ipv4);
  return ips.map((ip) => ({ ip }));
}
