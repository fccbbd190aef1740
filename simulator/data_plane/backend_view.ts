/**
 * The backends the data plane forwards to and checks, read from the world: each load balancer backend, and each
 * `frontend_port` of a combined edge's applied members (a `tcp` pool balanced `roundrobin` and checked with the API's
 * default health check — the edge API documents neither, see `docs/simulator.md`). Each member is keyed by its owner,
 * backend, id, address and port, so a member whose address or port changes starts over as a new one (up, checked
 * from then on), and one that keeps them keeps its health and counters. Pure functions.
 *
 * @module
 */
import { parseIp } from "../../lib/ip_address.ts";
import type { EdgeMemberState, EdgeState } from "../edges.ts";
import { DEFAULT_HEALTH_CHECK, type HealthCheckState, type LoadBalancerState } from "../load_balancer_state.ts";
import type { NetworkState } from "../world_state.ts";
import { type ActiveDataPlaneMode, isLoopback, vmLegAddress } from "./local_addresses.ts";

/** A member as the data plane uses it. */
export interface MemberConfig {
  /** `owner|backend|member|address|port`. */
  key: string;
  /** Member id (an edge member's name). */
  id: string;
  /** The member's `name` in the API, unique within its list. */
  name: string;
  /** The member's address in canonical text, so equal addresses key alike. */
  address: string;
  /** Port a connection is forwarded to (a node port, for the controller's members). */
  port: number;
  /** Weight (0: no new connections). */
  weight: number;
  /** False: no new connections and no checks. */
  enabled: boolean;
}

/** A backend as the data plane uses it. */
export interface BackendConfig {
  /** `owner|backend`. */
  key: string;
  /** Load balancer or edge id. */
  ownerId: string;
  /** `tcp` or `http`. */
  mode: "tcp" | "http";
  /** The backend's `balance`; always `roundrobin` on an edge (the API does not document one). */
  balance: "roundrobin" | "leastconn" | "source";
  /** The health check (the stored object: changes apply at the next check). */
  check: HealthCheckState;
  /** In the API's order, disabled and weight-0 ones included. */
  members: MemberConfig[];
}

const EDGE_CHECK: HealthCheckState = { ...DEFAULT_HEALTH_CHECK };

/** The backends of a load balancer. */
export function loadBalancerBackends(lb: LoadBalancerState): BackendConfig[] {
  return lb.backends.map((backend) => ({
    key: `${lb.id}|${backend.id}`,
    ownerId: lb.id,
    mode: backend.mode,
    balance: backend.balance,
    check: backend.health_check,
    members: backend.members.map((m) => ({
      key: `${lb.id}|${backend.id}|${m.id}|${canonical(m.address)}|${m.port}`,
      id: m.id,
      name: m.name,
      address: canonical(m.address),
      port: m.port,
      weight: m.weight,
      enabled: m.enabled,
    })),
  }));
}

/** The backends of an edge: one per `frontend_port` of the members it applied. */
export function edgeBackends(edge: EdgeState, members: EdgeMemberState[]): BackendConfig[] {
  const ports = [...new Set(members.map((m) => m.frontend_port))].sort((a, b) => a - b);
  return ports.map((port) => ({
    key: `${edge.id}|${port}`,
    ownerId: edge.id,
    mode: "tcp" as const,
    balance: "roundrobin" as const,
    check: EDGE_CHECK,
    members: members.filter((m) => m.frontend_port === port).map((m) => ({
      key: `${edge.id}|${port}|${m.name}|${canonical(m.address)}|${m.port}`,
      id: m.id,
      name: m.name,
      address: canonical(m.address),
      port: m.port,
      weight: m.weight,
      enabled: m.enabled,
    })),
  }));
}

/**
 * The address a connection to `memberAddress` leaves from: the VM's leg of the member's family — a load balancer VM's
 * (`vmLegAddress`) or the edge VM's private address — when this machine may bind it in `mode`; else none (the
 * system picks).
 */
export function connectionSource(
  owner:
    | { kind: "load_balancer"; network: NetworkState | undefined; seq: number; vm: number }
    | { kind: "edge"; edge: EdgeState },
  options: { memberAddress: string; mode: ActiveDataPlaneMode },
): string | undefined {
  const family = parseIp(options.memberAddress)?.family;
  if (!family) return undefined;
  let leg: string | null | undefined;
  if (owner.kind === "edge") {
    const machine = owner.edge.machines[0];
    leg = family === 4 ? machine?.private_ipv4 : machine?.private_ipv6;
  } else if (owner.network) {
    leg = vmLegAddress(owner.network, { seq: owner.seq, index: owner.vm }, family);
  }
  const ip = leg ? parseIp(leg) : undefined;
  if (!ip) return undefined;
  return options.mode === "netns" || isLoopback(ip) ? ip.text : undefined;
}

function canonical(address: string): string {
  return parseIp(address)?.text ?? address;
}
