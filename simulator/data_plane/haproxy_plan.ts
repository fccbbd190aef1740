/**
 * What each HAProxy of the data plane binds and forwards, decided from the world: one HAProxy per `running` load
 * balancer (its VM pair is one process here) and per `running` combined edge with the `load_balancer` role — the
 * listeners (served or not, by mode: `local_addresses.ts`), frontends, backends and servers that docs/simulator.md
 * describes under "The HAProxy of a load balancer". A server is named by member, address and port, so a member that
 * keeps them keeps its health across reloads. Listeners are keyed `address|port`; should two owners ask for one key,
 * the first (load balancers, then edges, as given) keeps it. Pure functions.
 *
 * @module
 */
import { parseIp } from "../../lib/ip_address.ts";
import type { EdgeMemberState, EdgeState } from "../edges.ts";
import { DEFAULT_HEALTH_CHECK, type HealthCheckState, type LoadBalancerState } from "../load_balancer_state.ts";
import type { SeedCertificate } from "../seed.ts";
import type { NetworkState } from "../world_state.ts";
import * as local from "./local_addresses.ts";

/** Where a listener's connections go: a load balancer frontend on the VM holding the address, or an edge's port. */
export type ListenerRoute =
  | { kind: "load_balancer"; loadBalancerId: string; frontendId: string; vm: number }
  | { kind: "edge"; edgeId: string; frontendPort: number };

/**
 * One planned listener: `key` is `address|port` (the address canonical); `tls` a TLS frontend's certificate ids;
 * `served` false, with the `reason`, when the mode cannot serve the address.
 */
export interface ListenerSpec {
  key: string;
  address: string;
  port: number;
  route: ListenerRoute;
  tls?: string[];
  served: boolean;
  reason?: string;
}

/** A member as its HAProxy serves it. */
export interface ServerPlan {
  /** `<member>_<address>_<port>`: {@linkcode serverName}. */
  name: string;
  /** The member's id (an edge member's name). */
  member: string;
  /** Canonical. */
  address: string;
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

/** A backend section (`be-1.vm0`, `port-30080`): the API's mode, balance and check, its servers in the API's order. */
export interface BackendPlan {
  name: string;
  mode: "tcp" | "http";
  balance: "roundrobin" | "leastconn" | "source";
  check: HealthCheckState;
  servers: ServerPlan[];
}

/**
 * A frontend section (`fe-1.vm0`, `port-30080`) in its backend's mode, binding its served listeners; a TLS one with
 * its certificates (the first answers clients without SNI or with a name none covers).
 */
export interface FrontendPlan {
  name: string;
  mode: "tcp" | "http";
  binds: ListenerSpec[];
  certificateIds?: string[];
  redirectToHttps: boolean;
  backend: string;
}

/**
 * What one owner's HAProxy runs: `owner` the load balancer or edge id, `what` its name in the log, `generation` a load
 * balancer's `configuration_generation` (applied once HAProxy loads a plan without problems); every listener planned
 * for it, served or not, in order; `problems` the served listeners left out, by key, with the reason.
 */
export interface ProxyPlan {
  owner: string;
  what: string;
  generation?: number;
  listeners: ListenerSpec[];
  frontends: FrontendPlan[];
  backends: BackendPlan[];
  problems: Map<string, string>;
}

/** What the plan reads: the world, each edge with the members its last finished sync applied, and the mode. */
export interface PlanInput {
  loadBalancers: Iterable<LoadBalancerState>;
  edges: Iterable<{ edge: EdgeState; members: EdgeMemberState[] }>;
  networks: Iterable<NetworkState>;
  mode: local.ActiveDataPlaneMode;
  certificates: ReadonlyMap<string, SeedCertificate> | undefined;
}

/** The listener at `address:port`, or none when another owner took its key. */
type Listen = (address: string, port: number, route: ListenerRoute, tls?: string[]) => ListenerSpec[];

/** The key of a listener. */
export function listenerKey(address: string, port: number): string {
  return `${address}|${port}`;
}

/** The backend section of API backend `backendId` on VM `vm`. */
export function backendSection(backendId: string, vm: number): string {
  return `${backendId}.vm${vm}`;
}

/** The frontend and backend section of an edge's `frontend_port`. */
export function edgeSection(port: number): string {
  return `port-${port}`;
}

/** The server name of a member (its id, or an edge member's name) at `address:port`. */
export function serverName(member: { id: string; address: string; port: number }): string {
  return `${member.id}_${canonical(member.address)}_${member.port}`;
}

/** The plan of every HAProxy the world asks for: running load balancers, then combined edges, in the order given. */
export function planHaproxies(input: PlanInput): ProxyPlan[] {
  const taken = new Set<string>();
  const listen: Listen = (address, port, route, tls) => {
    const key = listenerKey(address, port);
    if (taken.has(key)) return [];
    taken.add(key);
    const served = local.servability(address, input.mode);
    const reason = served.served ? {} : { reason: served.reason };
    return [{ key, address, port, route, ...(tls ? { tls } : {}), served: served.served, ...reason }];
  };
  const networks = new Map([...input.networks].map((n) => [n.id, n]));
  const plans: ProxyPlan[] = [];
  for (const lb of input.loadBalancers) {
    if (lb.state === "running") plans.push(loadBalancerPlan(lb, networks.get(lb.network_id), input, listen));
  }
  for (const { edge, members } of input.edges) {
    if (edge.state !== "running" || edge.placement !== "combined" || !edge.roles.includes("load_balancer")) continue;
    plans.push(edgePlan(edge, members, input.mode, listen));
  }
  return plans;
}

function loadBalancerPlan(lb: LoadBalancerState, network: NetworkState | undefined, input: PlanInput, listen: Listen) {
  const addresses = lb.public_ipv6_addresses.map((address, vm) => ({ address, vm }));
  if (lb.public_ipv4) addresses.push({ address: lb.public_ipv4, vm: 0 });
  const listeners: ListenerSpec[] = [];
  const frontends: FrontendPlan[] = [];
  const problems = new Map<string, string>();
  const vms = new Set([0]);
  for (const frontend of lb.frontends) {
    const tls = frontend.tls ? [...frontend.certificate_ids] : undefined;
    const route = { kind: "load_balancer", loadBalancerId: lb.id, frontendId: frontend.id } as const;
    const mine = addresses.map(({ address, vm }) => ({
      vm,
      specs: listen(address, frontend.port, { ...route, vm }, tls),
    }));
    listeners.push(...mine.flatMap((m) => m.specs));
    const served = mine.flatMap(({ vm, specs }) => specs.filter((l) => l.served).map((spec) => ({ vm, spec })));
    const missing = tls?.find((id) => !input.certificates?.has(id));
    if (missing !== undefined || tls?.length === 0) {
      const reason = missing === undefined
        ? "a TLS frontend needs a certificate"
        : `certificate ${missing} is not in the simulator's seed: add it to "certificates" with its PEM and key`;
      for (const { spec } of served) problems.set(spec.key, reason);
      continue;
    }
    for (const vm of [...new Set(served.map((s) => s.vm))].sort()) {
      vms.add(vm);
      frontends.push({
        name: `${frontend.id}.vm${vm}`,
        mode: lb.backends.find((b) => b.id === frontend.backend_id)?.mode ?? "tcp",
        binds: served.filter((s) => s.vm === vm).map((s) => s.spec),
        ...(tls ? { certificateIds: tls } : {}),
        redirectToHttps: frontend.redirect_to_https,
        backend: backendSection(frontend.backend_id, vm),
      });
    }
  }
  const backends = lb.backends.flatMap((backend) =>
    [...vms].sort().map((vm): BackendPlan => {
      const leg = network && ((family: 4 | 6) => local.vmLegAddress(network, { seq: lb.seq, index: vm }, family));
      const { mode, balance, health_check: check } = backend;
      const servers = backend.members.map((member) => {
        const server = serverPlan(member, leg, input.mode);
        const track = vm > 0 && check.type !== "none" && !server.unreachable;
        return track ? { ...server, track: `${backendSection(backend.id, 0)}/${server.name}` } : server;
      });
      return { name: backendSection(backend.id, vm), mode, balance, check: { ...check }, servers };
    })
  );
  const generation = lb.configuration_generation;
  return { owner: lb.id, what: `load balancer ${lb.id}`, generation, listeners, frontends, backends, problems };
}

function edgePlan(edge: EdgeState, members: EdgeMemberState[], mode: local.ActiveDataPlaneMode, listen: Listen) {
  const machine = edge.machines[0];
  const addresses = [machine?.public_ipv6, machine?.public_ipv4].filter((a): a is string => Boolean(a));
  const leg = (family: 4 | 6) => (family === 4 ? machine?.private_ipv4 : machine?.private_ipv6) ?? undefined;
  const ports = [...new Set(members.map((m) => m.frontend_port))].sort((a, b) => a - b);
  const listeners: ListenerSpec[] = [];
  const frontends: FrontendPlan[] = [];
  const backends = ports.map((port): BackendPlan => {
    const specs = addresses.flatMap((a) => listen(a, port, { kind: "edge", edgeId: edge.id, frontendPort: port }));
    listeners.push(...specs);
    const binds = specs.filter((l) => l.served);
    const name = edgeSection(port);
    if (binds.length) frontends.push({ name, mode: "tcp", binds, redirectToHttps: false, backend: name });
    const servers = members.filter((m) => m.frontend_port === port).map((m) =>
      serverPlan({ ...m, id: m.name }, leg, mode)
    );
    return { name, mode: "tcp", balance: "roundrobin", check: { ...DEFAULT_HEALTH_CHECK }, servers };
  });
  const problems = new Map<string, string>();
  return { owner: edge.id, what: `edge ${edge.id}`, listeners, frontends, backends, problems };
}

function serverPlan(
  member: { id: string; address: string; port: number; weight: number; enabled: boolean },
  leg: ((family: 4 | 6) => string | undefined) | undefined,
  mode: local.ActiveDataPlaneMode,
): ServerPlan {
  const address = canonical(member.address);
  const unreachable = local.unreachableReason(address, mode);
  const family = parseIp(address)?.family;
  const from = family && leg ? parseIp(leg(family) ?? "") : undefined;
  const source = from && (mode === "netns" || local.isLoopback(from)) ? from.text : undefined;
  const { id, port, weight, enabled } = member;
  const optional = { ...(source ? { source } : {}), ...(unreachable ? { unreachable } : {}) };
  return { name: serverName(member), member: id, address, port, weight, enabled, ...optional };
}

function canonical(address: string): string {
  return parseIp(address)?.text ?? address;
}
