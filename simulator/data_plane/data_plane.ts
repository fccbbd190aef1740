/**
 * The simulator's data plane: what the load balancers' and combined edges' HAProxy VMs do with traffic, beside the
 * API's world. Level-based like a controller: every reconcile reads the whole world and brings the listeners and
 * health checks to it — after every API request (the app wakes it), when an operation is due (a load balancer
 * becoming `running`), and every 2 s while a listener could not bind. A closed listener leaves its accepted
 * connections running and new connections follow the configuration as it is when they arrive, as an HAProxy reload;
 * when a load balancer or edge is gone, its VMs are, so its connections end. A load balancer's configuration counts
 * as applied (`is_configuration_applied`) once every listener it may have here listens.
 *
 * The pieces: the listener plan (`listener_plan.ts`), backends (`backend_view.ts`), balancing (`balancing.ts`),
 * health checks (`health_checks.ts`), forwarding per mode (`tcp_forwarding.ts`, `http_forwarding.ts`), TLS
 * (`tls_certificates.ts`), the address rule per mode (`local_addresses.ts`), and the state it shows
 * (`data_plane_state.ts`).
 *
 * @module
 */
import type { Server, Socket } from "node:net";
import { parseIp } from "../../lib/ip_address.ts";
import type { EdgeMemberState } from "../edges.ts";
import type { Simulator } from "../simulator.ts";
import { type BackendConfig, connectionSource, edgeBackends, loadBalancerBackends } from "./backend_view.ts";
import { type BalancerMemory, newBalancerMemory, pickMember } from "./balancing.ts";
import type { MemberRuntime } from "./health_checks.ts";
import { MemberStates } from "./member_states.ts";
import { forwardHttp } from "./http_forwarding.ts";
import { closeListenerSocket, openListenerSocket } from "./listener_socket.ts";
import { type ListenerSpec, planListeners, sameSocket } from "./listener_plan.ts";
import type { ActiveDataPlaneMode } from "./local_addresses.ts";
import { connectMember } from "./member_connection.ts";
import { forwardTcp } from "./tcp_forwarding.ts";
import { tlsServerOptions } from "./tls_certificates.ts";
import { NetnsRoutes } from "./netns_routes.ts";
import { MemberSessions } from "./member_sessions.ts";

/** A listener as the data plane holds it. */
export interface ListenerEntry {
  /** What it serves now. */
  spec: ListenerSpec;
  /** `listening`, `failed` (with `error`), `not_served` (with the spec's reason) or `opening`. */
  status: "listening" | "failed" | "not_served" | "opening";
  /** Why it could not bind. */
  error?: string;
  /** Connections it accepted. */
  connectionsTotal: number;
  /** The listening socket while it listens. */
  server?: Server;
  /** The error last logged (each error is logged once). */
  logged?: string;
}

/** Options of {@linkcode DataPlane}. */
export interface DataPlaneOptions {
  /** `loopback` or `netns`. */
  mode: ActiveDataPlaneMode;
  /** Where lines go (default: standard error, prefixed `ankra-cloud-simulator: data plane:`). */
  log?: (line: string) => void;
}

const RETRY_MS = 2_000;
const CONNECT_TIMEOUT_MS = 5_000;

/** The data plane of one simulator. */
export class DataPlane {
  /** `loopback` or `netns`, fixed when made: which addresses are served and contacted (`local_addresses.ts`). */
  readonly mode: ActiveDataPlaneMode;
  readonly #sim: Simulator;
  readonly #log: (line: string) => void;
  readonly #listeners = new Map<string, ListenerEntry>();
  readonly #members: MemberStates;
  readonly #frontendTotals = new Map<string, number>();
  readonly #balancers = new Map<string, BalancerMemory>();
  readonly #edgeApplied = new Map<string, EdgeMemberState[]>();
  readonly #sockets = new Map<string, Set<Socket>>();
  readonly #sessions = new MemberSessions();
  readonly #netns?: NetnsRoutes;
  #wanted = false;
  #loop?: Promise<void>;
  #dueTimer?: ReturnType<typeof setTimeout>;
  #retryTimer?: ReturnType<typeof setTimeout>;
  #stopped = false;

  /** Creates the data plane of `sim`; nothing listens before {@linkcode DataPlane.start}. */
  constructor(sim: Simulator, options: DataPlaneOptions) {
    this.#sim = sim;
    this.mode = options.mode;
    this.#log = options.log ?? ((line) => console.error(`ankra-cloud-simulator: data plane: ${line}`));
    if (options.mode === "netns") this.#netns = new NetnsRoutes();
    this.#members = new MemberStates({
      mode: options.mode,
      checkSource: (owner, address) => this.#source(owner, address, 0),
      log: this.#log,
    });
  }

  /** Checks the mode's preconditions (netns: a namespace of its own, local routes) and serves the world. */
  async start(): Promise<void> {
    await this.#netns?.prepare(this.#sim.world.settings.public_ipv4_ranges);
    await this.settle();
  }

  /** Asks for a reconcile soon (after an API request); returns at once. */
  wake(): void {
    if (this.#stopped) return;
    this.#wanted = true;
    this.#loop ??= this.#run().finally(() => this.#loop = undefined);
  }

  /** Reconciles now and resolves once the listeners and checks follow the world. */
  async settle(): Promise<void> {
    this.wake();
    while (this.#loop) await this.#loop;
  }

  /** Closes every listener and connection and stops the checks. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#dueTimer);
    clearTimeout(this.#retryTimer);
    while (this.#loop) await this.#loop;
    await this.#members.stop();
    this.#sessions.stop();
    for (const entry of this.#listeners.values()) if (entry.server) closeListenerSocket(entry.server);
    this.#listeners.clear();
    for (const sockets of this.#sockets.values()) for (const socket of sockets) socket.destroy();
    this.#sockets.clear();
  }

  /** The listeners, in plan order. */
  listeners(): ListenerEntry[] {
    return [...this.#listeners.values()];
  }

  /** A member's run-time state by its key (see `backend_view.ts`). */
  member(key: string): MemberRuntime | undefined {
    return this.#members.runtime(key);
  }

  /** Client connections a frontend (`lbId|frontendId`, or `edgeId|port`) accepted. */
  frontendConnections(key: string): number {
    return this.#frontendTotals.get(key) ?? 0;
  }

  /** The members an edge serves (those of its last finished sync). */
  edgeMembers(edgeId: string): EdgeMemberState[] {
    return this.#edgeApplied.get(edgeId) ?? [];
  }

  async #run(): Promise<void> {
    while (this.#wanted && !this.#stopped) {
      this.#wanted = false;
      try {
        await this.#reconcile();
      } catch (cause) {
        this.#log(`reconcile failed: ${(cause as Error).message}`);
      }
    }
  }

  async #reconcile(): Promise<void> {
    const sim = this.#sim;
    sim.world.tick();
    const loadBalancers = [...sim.loadBalancers.items.values()];
    const generations = new Map(loadBalancers.map((lb) => [lb.id, lb.configuration_generation]));
    for (const edgeId of this.#edgeApplied.keys()) if (!sim.edges.items.has(edgeId)) this.#edgeApplied.delete(edgeId);
    for (const edge of sim.edges.items.values()) {
      const syncing = edge.active_operation?.status === "running";
      if (edge.state === "running" && !syncing) this.#edgeApplied.set(edge.id, edge.members.map((m) => ({ ...m })));
    }
    const edges = [...sim.edges.items.values()].map((edge) => ({ edge, members: this.edgeMembers(edge.id) }));
    const backends = [
      ...loadBalancers.filter((lb) => lb.state === "running").flatMap(loadBalancerBackends),
      ...edges.filter(({ edge }) => edge.state === "running").flatMap(({ edge, members }) =>
        edgeBackends(edge, members)
      ),
    ];
    this.#members.follow(backends);
    this.#sessions.follow(
      new Set(backends.flatMap((b) => b.members.map((m) => m.key))),
      sim.world.settings.reload_hard_stop_after_ms,
    );
    const backendKeys = new Set(backends.map((b) => b.key));
    for (const key of this.#balancers.keys()) if (!backendKeys.has(key)) this.#balancers.delete(key);
    await this.#netns?.cover(sim.world.networks.values());
    await this.#followListeners(planListeners({ loadBalancers, edges, mode: this.mode }));
    for (const lb of loadBalancers) {
      const mine = [...this.#listeners.values()].filter((e) =>
        e.spec.route.kind === "load_balancer" &&
        e.spec.route.loadBalancerId === lb.id
      );
      if (lb.state === "running" && mine.every((e) => e.status === "listening" || e.status === "not_served")) {
        sim.loadBalancers.markApplied(lb.id, generations.get(lb.id)!);
      }
    }
    for (const key of this.#frontendTotals.keys()) {
      const owner = key.slice(0, key.indexOf("|"));
      if (!sim.loadBalancers.items.has(owner) && !sim.edges.items.has(owner)) this.#frontendTotals.delete(key);
    }
    for (const [owner, sockets] of this.#sockets) {
      if (sim.loadBalancers.items.has(owner) || sim.edges.items.has(owner)) continue;
      for (const socket of sockets) socket.destroy();
      this.#sockets.delete(owner);
    }
    this.#scheduleTimers();
  }

  async #followListeners(specs: ListenerSpec[]): Promise<void> {
    const wanted = new Map(specs.map((spec) => [spec.key, spec]));
    for (const [key, entry] of this.#listeners) {
      const spec = wanted.get(key);
      if (spec && sameSocket(entry.spec, spec) && spec.served) continue;
      if (entry.server) closeListenerSocket(entry.server);
      this.#listeners.delete(key);
    }
    const openings: Promise<void>[] = [];
    for (const spec of specs) {
      let entry = this.#listeners.get(spec.key);
      if (!entry) {
        entry = { spec, status: spec.served ? "opening" : "not_served", connectionsTotal: 0 };
        this.#listeners.set(spec.key, entry);
      }
      entry.spec = spec;
      if (spec.served && entry.status !== "listening") openings.push(this.#open(entry));
    }
    await Promise.all(openings);
    const entries = new Map(this.#listeners);
    this.#listeners.clear();
    for (const spec of specs) this.#listeners.set(spec.key, entries.get(spec.key)!);
  }

  async #open(entry: ListenerEntry): Promise<void> {
    const { spec } = entry;
    const tls = spec.tls ? tlsServerOptions(spec.tls, this.#sim.world.certificates) : undefined;
    try {
      if (typeof tls === "string") throw new Error(`cannot serve TLS on ${spec.address}:${spec.port}: ${tls}`);
      entry.server = await openListenerSocket({
        address: spec.address,
        port: spec.port,
        tls,
        onConnection: (socket) => this.#accept(entry, socket),
      });
      if (this.#listeners.get(spec.key) !== entry || this.#stopped) {
        closeListenerSocket(entry.server);
        return;
      }
      entry.status = "listening";
      entry.error = undefined;
      entry.logged = undefined;
    } catch (cause) {
      entry.status = "failed";
      entry.error = (cause as Error).message;
      if (entry.logged !== entry.error) {
        entry.logged = entry.error;
        this.#log(`${entry.error} (${describeRoute(spec)}); retrying every ${RETRY_MS / 1000} s`);
      }
    }
  }

  #accept(entry: ListenerEntry, client: Socket): void {
    const route = entry.spec.route;
    const sim = this.#sim;
    const clientAddress = parseIp(client.remoteAddress ?? "")?.text ?? String(client.remoteAddress);
    let backend: BackendConfig | undefined;
    let owner: string;
    let vm = 0;
    let http: { proto: "http" | "https"; redirect: boolean } | undefined;
    let frontendKey: string;
    if (route.kind === "load_balancer") {
      owner = route.loadBalancerId;
      vm = route.vm;
      const lb = sim.loadBalancers.items.get(owner);
      const frontend = lb?.frontends.find((f) => f.id === route.frontendId);
      frontendKey = `${owner}|${route.frontendId}`;
      if (lb && frontend && lb.state === "running") {
        backend = loadBalancerBackends(lb).find((b) => b.key === `${lb.id}|${frontend.backend_id}`);
        if (backend?.mode === "http") {
          http = { proto: frontend.tls ? "https" : "http", redirect: frontend.redirect_to_https };
        }
      }
    } else {
      owner = route.edgeId;
      frontendKey = `${owner}|${route.frontendPort}`;
      const edge = sim.edges.items.get(owner);
      if (edge) backend = edgeBackends(edge, this.edgeMembers(owner)).find((b) => b.key === frontendKey);
    }
    if (!backend || this.#stopped) {
      client.destroy();
      return;
    }
    entry.connectionsTotal++;
    this.#frontendTotals.set(frontendKey, (this.#frontendTotals.get(frontendKey) ?? 0) + 1);
    this.#track(owner, client);
    const chosen = backend;
    const open = () => this.#openUpstream(chosen, { owner, vm, clientAddress });
    if (!http) return forwardTcp(client, open);
    const host = entry.spec.address.includes(":") ? `[${entry.spec.address}]` : entry.spec.address;
    forwardHttp(client, {
      clientAddress,
      proto: http.proto,
      redirectToHttps: http.redirect,
      authority: `${host}:${entry.spec.port}`,
      open,
    });
  }

  async #openUpstream(
    backend: BackendConfig,
    via: { owner: string; vm: number; clientAddress: string },
  ): Promise<Socket | undefined> {
    const tried = new Set<string>();
    let memory = this.#balancers.get(backend.key);
    if (!memory) this.#balancers.set(backend.key, memory = newBalancerMemory());
    while (!this.#stopped) {
      const candidates = backend.members.flatMap((m) => {
        const runtime = this.#members.runtime(m.key);
        if (!m.enabled || tried.has(m.key) || !runtime?.health.up) return [];
        return [{ id: m.key, weight: m.weight, active: runtime.connectionsActive }];
      });
      const key = pickMember(backend.balance, candidates, { memory, clientAddress: via.clientAddress });
      if (!key) return undefined;
      tried.add(key);
      const member = backend.members.find((m) => m.key === key)!;
      const runtime = this.#members.runtime(key)!;
      try {
        const socket = await connectMember(
          { address: member.address, port: member.port, source: this.#source(via.owner, member.address, via.vm) },
          { mode: this.mode, timeoutMs: CONNECT_TIMEOUT_MS },
        );
        if (this.#stopped) {
          socket.destroy();
          return undefined;
        }
        runtime.connectionsTotal++;
        runtime.connectionsActive++;
        socket.once("close", () => runtime.connectionsActive--);
        this.#track(via.owner, socket);
        this.#sessions.track(key, socket);
        return socket;
      } catch (cause) {
        // Logged as HAProxy logs a failed connect; the next member that may take it (HAProxy's redispatch).
        this.#log(
          `${via.owner}: a connection to member ${member.address}:${member.port} failed: ${(cause as Error).message}`,
        );
      }
    }
    return undefined;
  }

  #source(owner: string, memberAddress: string, vm: number): string | undefined {
    const lb = this.#sim.loadBalancers.items.get(owner);
    if (lb) {
      const network = this.#sim.world.networks.get(lb.network_id);
      return connectionSource({ kind: "load_balancer", network, seq: lb.seq, vm }, { memberAddress, mode: this.mode });
    }
    const edge = this.#sim.edges.items.get(owner);
    return edge ? connectionSource({ kind: "edge", edge }, { memberAddress, mode: this.mode }) : undefined;
  }

  #track(owner: string, socket: Socket): void {
    let sockets = this.#sockets.get(owner);
    if (!sockets) this.#sockets.set(owner, sockets = new Set());
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  }

  #scheduleTimers(): void {
    if (this.#stopped) return;
    clearTimeout(this.#dueTimer);
    const now = this.#sim.world.now();
    const due = [...this.#sim.world.operations.values()].filter((op) => op.status === "running")
      .map((op) => op.finishAt).sort((a, b) => a - b)[0];
    if (due !== undefined) this.#dueTimer = setTimeout(() => this.wake(), Math.max(0, due - now) + 5);
    const failed = [...this.#listeners.values()].some((e) => e.status === "failed");
    if (failed && this.#retryTimer === undefined) {
      this.#retryTimer = setTimeout(() => {
        this.#retryTimer = undefined;
        this.wake();
      }, RETRY_MS);
    }
  }
}

function describeRoute(spec: ListenerSpec): string {
  const route = spec.route;
  return route.kind === "load_balancer"
    ? `load balancer ${route.loadBalancerId} frontend ${route.frontendId}`
    : `edge ${route.edgeId} frontend port ${route.frontendPort}`;
}
