/**
 * A Service's members on a combined edge: members whose names start with one of the Service's prefixes (this
 * cluster's, and the Go controller's it replaces) are its own; every
 * other member (other Services', hand-made ones) is kept untouched and in its order; a Service port already served by
 * a kept member is a conflict; the status comes from the edge's addresses. Pure functions.
 *
 * @module
 */
import type { Edge } from "../../cloud/schemas.ts";
import type { EdgeMemberInput } from "../../cloud/edges.ts";
import type { CloudCall } from "./cloud_calls.ts";
import { edgeMemberName } from "./load_balancer_names.ts";
import { passEvents, type PlannedEvent } from "./load_balancer_plan.ts";
import { type Ingress, type IngressStyle, orderedIngress, sameIngress } from "./service_ingress.ts";
import type { LoadBalancerIntent } from "./service_plan.ts";
import { DEFAULT_WEIGHT } from "./member_drain.ts";

/** The member list to send, or the conflict that prevents it. */
type EdgeMembersPlan =
  | { ok: true; members: EdgeMemberInput[]; changed: boolean }
  | { ok: false; conflict: string };

/** An edge member in the API's input shape (`id` and unknown fields dropped, defaults made explicit). */
export function asEdgeInput(member: Edge["members"][number]): EdgeMemberInput {
  return {
    name: member.name,
    frontend_port: member.frontend_port,
    address: member.address,
    port: member.port,
    weight: member.weight ?? DEFAULT_WEIGHT,
    enabled: member.enabled ?? true,
  };
}

function key(m: EdgeMemberInput): string {
  return [m.name, m.frontend_port, m.address, m.port, m.weight ?? DEFAULT_WEIGHT, m.enabled ?? true].join("|");
}

/** True when `name` starts with one of `prefixes`. */
function ownedBy(name: string, prefixes: readonly string[]): boolean {
  return prefixes.some((prefix) => name.startsWith(prefix));
}

/** The edge's new member list with this Service's `wanted` members (its members are named with one of `prefixes`). */
export function edgeMembersPlan(edge: Edge, prefixes: readonly string[], wanted: EdgeMemberInput[]): EdgeMembersPlan {
  const kept = edge.members.filter((m) => !ownedBy(m.name, prefixes));
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

/** The edge's list without the members named with one of `prefixes`, or undefined when it has none of them. */
export function edgeMembersWithout(edge: Edge, prefixes: readonly string[]): EdgeMemberInput[] | undefined {
  if (!edge.members.some((m) => ownedBy(m.name, prefixes))) return undefined;
  return edge.members.filter((m) => !ownedBy(m.name, prefixes)).map(asEdgeInput);
}

/** True for a combined edge with the `load_balancer` role. */
function isCombinedLoadBalancerEdge(edge: Edge): boolean {
  return edge.placement === "combined" && edge.roles.includes("load_balancer");
}

/**
 * The Service's ingress from an edge: the load-balancer machine's IPv6 and the edge's (or machine's) IPv4, in `style`
 * ({@linkcode orderedIngress}).
 */
export function edgeIngress(edge: Edge, style?: IngressStyle): Ingress[] {
  const machine = edge.machines.find((m) => m.roles.includes("load_balancer"));
  const ipv4 = edge.public_ipv4 ?? machine?.public_ipv4;
  return orderedIngress(machine?.public_ipv6 ? [machine.public_ipv6] : [], ipv4 ? [ipv4] : [], style);
}

/** The Service's own members on an edge: per port, every chosen address on the port's node port, weight 100. */
export function wantedEdgeMembers(
  intent: Pick<LoadBalancerIntent, "ports" | "members" | "edgePrefix">,
): EdgeMemberInput[] {
  return intent.ports.flatMap((port) =>
    intent.members.map((member) => ({
      name: edgeMemberName(intent.edgePrefix, port.port, member.address, port.nodePort),
      frontend_port: port.port,
      address: member.address,
      port: port.nodePort,
      weight: 100,
      enabled: true,
    }))
  );
}

/** One pass over a Service on an edge: the call, the status and the framework's events; or why it cannot be done. */
export type EdgePlan =
  | { ok: false; problem: string }
  | {
    ok: true;
    calls: CloudCall[];
    events: PlannedEvent[];
    ingress?: Ingress[];
    served: boolean;
    ensuringOpen: boolean;
  };

/**
 * Plans the Service's members on `edge`: refuses an edge that is not combined with the `load_balancer` role and a port
 * another member serves; otherwise one `update_edge` with the whole member list when it changes. The events follow
 * the rule of the dedicated plan (`EnsuringLoadBalancer` … `EnsuredLoadBalancer` once the edge has an address).
 */
export function planEdge(
  edge: Edge,
  intent: Pick<LoadBalancerIntent, "ports" | "members" | "edgePrefix" | "legacyEdgePrefix">,
  state: {
    currentIngress: readonly { ip?: string; ipMode?: string }[];
    ensuringOpen: boolean;
    recordChanges: boolean;
    ingressStyle?: IngressStyle;
  },
): EdgePlan {
  if (!isCombinedLoadBalancerEdge(edge)) {
    return {
      ok: false,
      problem: `edge ${edge.id} is not a combined edge with the load_balancer role; drop the edge annotation to use ` +
        "a dedicated load balancer",
    };
  }
  const plan = edgeMembersPlan(edge, [intent.edgePrefix, intent.legacyEdgePrefix], wantedEdgeMembers(intent));
  if (!plan.ok) return { ok: false, problem: plan.conflict };
  const calls: CloudCall[] = plan.changed
    ? [{ operation: "update_edge", edgeId: edge.id, body: { members: plan.members } }]
    : [];
  const ingress = edgeIngress(edge, state.ingressStyle);
  const served = ingress.length > 0;
  const statusChanges = served && !sameIngress(state.currentIngress, ingress);
  const { events, ensuringOpen } = passEvents({
    changes: calls.length > 0 || statusChanges || state.recordChanges,
    membersOnly: false,
    served,
    ensuringOpen: state.ensuringOpen,
  });
  return { ok: true, calls, events, ingress: statusChanges ? ingress : undefined, served, ensuringOpen };
}
