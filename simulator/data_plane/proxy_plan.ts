/**
 * What the HAProxy of one owner runs, decided from the world — a `running` load balancer (its VM pair is one process
 * here) or a `running` combined edge with the `load_balancer` role:
 *
 * - frontends: for a load balancer one per API frontend and VM holding a served address of it (`.vm0` binds
 *   `public_ipv6_addresses[0]` and `public_ipv4`, `.vm1` binds `public_ipv6_addresses[1]`); for an edge one per
 *   distinct `frontend_port` of the members its last finished sync applied;
 * - backends: one per API backend and VM (`.vm0` always, `.vm1` only while that VM serves a frontend), so each VM's
 *   connections leave from its own leg on the load balancer's network; an edge's backend per `frontend_port` is
 *   `roundrobin` with the API's default check (the edge API documents neither);
 * - servers: one per member, named by its id (an edge member's name), address and port, so a member whose address or
 *   port changes is a new server while one that keeps them keeps its health across reloads; `.vm1`'s servers track
 *   `.vm0`'s health (each member is checked once); a member the mode may not contact (`local_addresses.ts`) is a
 *   disabled server without a check, never contacted.
 *
 * A TLS frontend naming a certificate the seed lacks is left out, its listeners failed with the reason. Pure functions.
 *
 * @module
 */
import { parseIp } from "../../lib/ip_address.ts";
import type { EdgeMemberState, EdgeState } from "../edges.ts";
import { DEFAULT_HEALTH_CHECK, type HealthCheckState, type LoadBalancerState } from "../load_balancer_state.ts";
import type { SeedCertificate } from "../seed.ts";
import type { NetworkState } from "../world_state.ts";
import type { ListenerSpec } from "./listener_plan.ts";
import { type ActiveDataPlaneMode, isLoopback, unreachableReason, vmLegAddress } from "./local_addresses.ts";

/** A member as its HAProxy serves it. */
export interface ServerPlan {
  /** `<member id or name>_<address>_<port>`. */
  name: string;
  /** Canonical address. */
  address: string;
  /** Port on the member. */
  port: number;
  /** 0–256; 0 takes no new connections. */
  weight: number;
  /** False: a disabled server (maintenance), neither checked nor given connections. */
  enabled: boolean;
  /** The VM leg its connections and checks leave from, when this machine may bind it. */
  source?: string;
  /** `<backend>/<server>` whose health this one follows (`.vm1` follows `.vm0`). */
  track?: string;
  /** Why the mode never contacts it (then disabled, unchecked). */
  unreachable?: string;
}

/** A backend section. */
export interface BackendPlan {
  /** Section name, e.g. `be-1.vm0` or `port-30080`. */
  name: string;
  /** `tcp` or `http`. */
  mode: "tcp" | "http";
  /** The API's balance. */
  balance: "roundrobin" | "leastconn" | "source";
  /** The API's health check. */
  check: HealthCheckState;
  /** In the API's order. */
  servers: ServerPlan[];
}

/** A frontend section. */
export interface FrontendPlan {
  /** Section name, e.g. `fe-1.vm0` or `port-30080`. */
  name: string;
  /** The backend's mode. */
  mode: "tcp" | "http";
  /** Its served listeners. */
  binds: ListenerSpec[];
  /** A TLS frontend's certificates, the first answering clients without SNI or with a name none covers. */
  certificateIds?: string[];
  /** Answer every request with a redirect to `https://`. */
  redirectToHttps: boolean;
  /** The backend section it forwards to. */
  backend: string;
}

/** What one owner's HAProxy runs. */
export interface ProxyPlan {
  /** Load balancer or edge id. */
  owner: string;
  /** Frontend sections. */
  frontends: FrontendPlan[];
  /** Backend sections. */
  backends: BackendPlan[];
  /** Listeners left out, by key, with the reason. */
  problems: Map<string, string>;
}

/** The backend section of API backend `backendId` on VM `vm`. */
export function backendSection(backendId: string, vm: number): string {
  return `${backendId}.vm${vm}`;
}

/** The server name of a member (its id, or an edge member's name) at `address:port`. */
export function serverName(member: { id: string; address: string; port: number }): string {
  return `${member.id}_${canonical(member.address)}_${member.port}`;
}

/** The frontend and backend section of an edge's `frontend_port`. */
export function edgeSection(port: number): string {
  return `port-${port}`;
}

/** The plan of a `running` load balancer, from its listeners (`planListeners`, this load balancer's only). */
export function loadBalancerPlan(
  lb: LoadBalancerState,
  options: {
    network: NetworkState | undefined;
    listeners: ListenerSpec[];
    mode: ActiveDataPlaneMode;
    certificates: ReadonlyMap<string, SeedCertificate> | undefined;
  },
): ProxyPlan {
  const problems = new Map<string, string>();
  const frontends: FrontendPlan[] = [];
  const vms = new Set([0]);
  for (const frontend of lb.frontends) {
    const mode = lb.backends.find((b) => b.id === frontend.backend_id)?.mode ?? "tcp";
    const mine = options.listeners.filter((l) =>
      l.served && l.route.kind === "load_balancer" && l.route.frontendId === frontend.id
    );
    const missing = frontend.tls ? frontend.certificate_ids.find((id) => !options.certificates?.has(id)) : undefined;
    if (missing !== undefined || (frontend.tls && frontend.certificate_ids.length === 0)) {
      const reason = missing === undefined
        ? "a TLS frontend needs a certificate"
        : `certificate ${missing} is not in the simulator's seed: add it to "certificates" with its PEM and key`;
      for (const listener of mine) problems.set(listener.key, reason);
      continue;
    }
    for (const vm of [...new Set(mine.map((l) => (l.route.kind === "load_balancer" ? l.route.vm : 0)))].sort()) {
      vms.add(vm);
      frontends.push({
        name: `${frontend.id}.vm${vm}`,
        mode,
        binds: mine.filter((l) => l.route.kind === "load_balancer" && l.route.vm === vm),
        ...(frontend.tls ? { certificateIds: [...frontend.certificate_ids] } : {}),
        redirectToHttps: frontend.redirect_to_https,
        backend: backendSection(frontend.backend_id, vm),
      });
    }
  }
  const backends = lb.backends.flatMap((backend) =>
    [...vms].sort().map((vm): BackendPlan => ({
      name: backendSection(backend.id, vm),
      mode: backend.mode,
      balance: backend.balance,
      check: { ...backend.health_check },
      servers: backend.members.map((member) => {
        const leg = options.network
          ? (family: 4 | 6) => vmLegAddress(options.network!, { seq: lb.seq, index: vm }, family)
          : undefined;
        const server = serverPlan(member, { leg, mode: options.mode });
        const checked = backend.health_check.type !== "none" && !server.unreachable;
        return vm > 0 && checked ? { ...server, track: `${backendSection(backend.id, 0)}/${server.name}` } : server;
      }),
    }))
  );
  return { owner: lb.id, frontends, backends, problems };
}

/** The plan of a `running` combined edge with the `load_balancer` role, serving the members it last applied. */
export function edgePlan(
  edge: EdgeState,
  options: { members: EdgeMemberState[]; listeners: ListenerSpec[]; mode: ActiveDataPlaneMode },
): ProxyPlan {
  const machine = edge.machines[0];
  const leg = (family: 4 | 6) => (family === 4 ? machine?.private_ipv4 : machine?.private_ipv6) ?? undefined;
  const ports = [...new Set(options.members.map((m) => m.frontend_port))].sort((a, b) => a - b);
  const frontends = ports.flatMap((port): FrontendPlan[] => {
    const binds = options.listeners.filter((l) => l.served && l.route.kind === "edge" && l.route.frontendPort === port);
    return binds.length
      ? [{ name: edgeSection(port), mode: "tcp", binds, redirectToHttps: false, backend: edgeSection(port) }]
      : [];
  });
  const backends = ports.map((port): BackendPlan => ({
    name: edgeSection(port),
    mode: "tcp",
    balance: "roundrobin",
    check: { ...DEFAULT_HEALTH_CHECK },
    servers: options.members.filter((m) => m.frontend_port === port).map((m) =>
      serverPlan({ ...m, id: m.name }, { leg, mode: options.mode })
    ),
  }));
  return { owner: edge.id, frontends, backends, problems: new Map() };
}

function serverPlan(
  member: { id: string; address: string; port: number; weight: number; enabled: boolean },
  options: { leg: ((family: 4 | 6) => string | undefined) | undefined; mode: ActiveDataPlaneMode },
): ServerPlan {
  const address = canonical(member.address);
  const unreachable = unreachableReason(address, options.mode);
  const family = parseIp(address)?.family;
  const leg = family && options.leg ? parseIp(options.leg(family) ?? "") : undefined;
  const source = leg && (options.mode === "netns" || isLoopback(leg)) ? leg.text : undefined;
  return {
    name: serverName(member),
    address,
    port: member.port,
    weight: member.weight,
    enabled: member.enabled,
    ...(source ? { source } : {}),
    ...(unreachable ? { unreachable } : {}),
  };
}

function canonical(address: string): string {
  return parseIp(address)?.text ?? address;
}
