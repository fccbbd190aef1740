/**
 * The listeners the data plane should have, from the world's load balancers and edges — what each HAProxy VM binds:
 *
 * - a `running` load balancer: for every frontend, one listener on `address:port` for every published address (each
 *   of `public_ipv6_addresses`, held by VM 0, 1, …, and `public_ipv4`, held by the active VM 0);
 * - a `running` combined edge with the `load_balancer` role: one listener per distinct `frontend_port` of the members
 *   it last applied, on the edge VM's public IPv6 and IPv4.
 *
 * An address the mode cannot serve is planned as not served, with the reason (see `local_addresses.ts`). Listeners
 * are keyed by `address|port` (every public address is allocated to one owner, and a load balancer's frontend ports
 * are unique, so keys do not collide; should they, the first keeps it). A pure function.
 *
 * @module
 */
import type { EdgeMemberState, EdgeState } from "../edges.ts";
import type { LoadBalancerState } from "../load_balancer_state.ts";
import { type ActiveDataPlaneMode, servability } from "./local_addresses.ts";

/** Where a listener's connections go: a load balancer frontend (looked up live by id) or an edge port's members. */
export type ListenerRoute =
  | {
    kind: "load_balancer";
    /** The load balancer. */
    loadBalancerId: string;
    /** The frontend; its backend is read when a connection arrives. */
    frontendId: string;
    /** The VM holding the address (its leg is the connections' source). */
    vm: number;
  }
  | {
    kind: "edge";
    /** The edge. */
    edgeId: string;
    /** The members' `frontend_port`. */
    frontendPort: number;
  };

/** One planned listener. */
export interface ListenerSpec {
  /** `address|port`. */
  key: string;
  /** Canonical address. */
  address: string;
  /** TCP port. */
  port: number;
  /** Where connections go. */
  route: ListenerRoute;
  /** For a TLS frontend, its certificate ids (the first answers clients without SNI). */
  tls?: string[];
  /** False when the mode cannot serve the address; `reason` says why. */
  served: boolean;
  /** Why it is not served. */
  reason?: string;
}

/** What the plan reads: load balancers, and each edge with the members its last finished sync applied. */
export interface ListenerPlanInput {
  /** Every load balancer. */
  loadBalancers: Iterable<LoadBalancerState>;
  /** Every edge and its applied members. */
  edges: Iterable<{ edge: EdgeState; members: EdgeMemberState[] }>;
  /** The data plane's mode. */
  mode: ActiveDataPlaneMode;
}

/** The key of a listener. */
export function listenerKey(address: string, port: number): string {
  return `${address}|${port}`;
}

/** The listeners the world asks for, in a stable order (load balancers, then edges, as given). */
export function planListeners(input: ListenerPlanInput): ListenerSpec[] {
  const specs = new Map<string, ListenerSpec>();
  const add = (address: string, port: number, route: ListenerRoute, tls?: string[]) => {
    const key = listenerKey(address, port);
    if (specs.has(key)) return;
    const served = servability(address, input.mode);
    specs.set(key, {
      key,
      address,
      port,
      route,
      ...(tls ? { tls } : {}),
      served: served.served,
      ...(served.served ? {} : { reason: served.reason }),
    });
  };
  for (const lb of input.loadBalancers) {
    if (lb.state !== "running") continue;
    const addresses: { address: string; vm: number }[] = lb.public_ipv6_addresses.map((address, vm) => ({
      address,
      vm,
    }));
    if (lb.public_ipv4) addresses.push({ address: lb.public_ipv4, vm: 0 });
    for (const frontend of lb.frontends) {
      for (const { address, vm } of addresses) {
        add(
          address,
          frontend.port,
          { kind: "load_balancer", loadBalancerId: lb.id, frontendId: frontend.id, vm },
          frontend.tls ? [...frontend.certificate_ids] : undefined,
        );
      }
    }
  }
  for (const { edge, members } of input.edges) {
    if (edge.state !== "running" || edge.placement !== "combined" || !edge.roles.includes("load_balancer")) continue;
    const machine = edge.machines[0];
    const addresses = [machine?.public_ipv6, machine?.public_ipv4].filter((a): a is string => Boolean(a));
    const ports = [...new Set(members.map((m) => m.frontend_port))].sort((a, b) => a - b);
    for (const port of ports) {
      for (const address of addresses) add(address, port, { kind: "edge", edgeId: edge.id, frontendPort: port });
    }
  }
  return [...specs.values()];
}
