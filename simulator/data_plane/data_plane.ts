/**
 * The simulator's data plane: real HAProxy processes doing what Ankra's load balancer VMs do. One HAProxy per
 * `running` load balancer (its VM pair is one process here) and per `running` combined edge with the
 * `load_balancer` role, its configuration rendered from the world (`proxy_plan.ts`, `haproxy_config.ts`), every
 * change applied by a reload through the master CLI after the servers' state is dumped (so members keep their health),
 * and stopped with its owner. Level-based like a controller: every reconcile reads the whole world (after every API
 * request, when an operation is due, and every 2 s while HAProxy refuses a configuration) and brings the processes to
 * it. A load balancer's configuration counts as applied (`is_configuration_applied`) once its HAProxy has loaded the
 * configuration that holds the change; a refused one is logged once with HAProxy's own alerts and left unapplied.
 *
 * The data plane reads the world through {@linkcode DataPlaneWorld}, which its owner passes in; what it shows
 * (`/_simulator/state`) comes from HAProxy's runtime API (`snapshot`, `data_plane_state.ts`).
 *
 * @module
 */
import type { EdgeMemberState, EdgeState } from "../edges.ts";
import type { LoadBalancerState } from "../load_balancer_state.ts";
import type { SeedCertificate } from "../seed.ts";
import type { NetworkState } from "../world_state.ts";
import { renderHaproxyConfig } from "./haproxy_config.ts";
import { HaproxyProcess, type HaproxyTools, locateHaproxyTools } from "./haproxy_process.ts";
import { parseShowProc, parseShowStat, readHaproxyLine, refusalOf, type StatRow } from "./haproxy_status.ts";
import { type ListenerSpec, planListeners } from "./listener_plan.ts";
import type { ActiveDataPlaneMode } from "./local_addresses.ts";
import { NetnsRoutes } from "./netns_routes.ts";
import { edgePlan, loadBalancerPlan, type ProxyPlan } from "./proxy_plan.ts";

/** The narrow view of the world the data plane reads, and the one fact it reports back. */
export interface DataPlaneWorld {
  /** Every load balancer, as stored. */
  loadBalancers(): LoadBalancerState[];
  /** Every edge, as stored. */
  edges(): EdgeState[];
  /** Every private network. */
  networks(): NetworkState[];
  /** The seeded certificates by id (undefined: none seeded). */
  certificates(): ReadonlyMap<string, SeedCertificate> | undefined;
  /** The seed's `reload_hard_stop_after_ms`. */
  hardStopAfterMs(): number | undefined;
  /** The seed's `public_ipv4_ranges` (the `netns` mode makes them local). */
  publicIpv4Ranges(): readonly string[];
  /** Finishes the operations that are due; milliseconds until the next running one is, if any. */
  tick(): number | undefined;
  /** Records that a load balancer's VMs run `generation`. */
  markApplied(loadBalancerId: string, generation: number): void;
}

/** Options of {@linkcode DataPlane}. */
export interface DataPlaneOptions {
  /** `loopback` or `netns`. */
  mode: ActiveDataPlaneMode;
  /** Where lines go (default: standard error, prefixed `ankra-cloud-simulator: data plane:`). */
  log?: (line: string) => void;
}

/** A listener and whether HAProxy serves it. */
export interface ListenerView {
  /** What the world asks for. */
  spec: ListenerSpec;
  /** `listening` (its HAProxy runs it), `opening`, `failed` (with `error`) or `not_served` (the spec's reason). */
  state: "listening" | "opening" | "failed" | "not_served";
  /** Why it failed. */
  error?: string;
}

/** One owner's HAProxy as the runtime API shows it now. */
export interface OwnerStats {
  /** The current worker's `show stat` rows. */
  rows: StatRow[];
  /** `scur` by `proxy/name`, summed over the current worker and the old ones still finishing connections. */
  active: Map<string, number>;
  /** When HAProxy last reported a check of `backend/server` (its `option log-health-checks` lines). */
  checks: ReadonlyMap<string, string>;
  /** The master's PID and socket, and the configuration file. */
  process: { pid: number; masterSocket: string; configPath: string };
}

/** What `/_simulator/state` shows of the data plane, read at one moment. */
export interface DataPlaneView {
  /** The mode. */
  mode: ActiveDataPlaneMode;
  /** Every planned listener with its state. */
  listeners: ListenerView[];
  /** The plan of each owner served now. */
  plans: ReadonlyMap<string, ProxyPlan>;
  /** The runtime API's answers, by owner (absent while its HAProxy does not run or answer). */
  owners: ReadonlyMap<string, OwnerStats>;
  /** The members each edge serves (those of its last finished sync). */
  edgeMembers: ReadonlyMap<string, EdgeMemberState[]>;
}

interface Owner {
  id: string;
  what: string;
  dir: string;
  process?: HaproxyProcess;
  /** The configuration its HAProxy runs, and the listeners in it. */
  loaded?: string;
  loadedBinds: Set<string>;
  /** A configuration HAProxy refused, retried from `retryAt`. */
  refused?: string;
  retryAt: number;
  failure?: { error: string; key?: string };
  logged?: string;
  checks: Map<string, string>;
}

const RETRY_MS = 2_000;

/** The data plane of one simulator. */
export class DataPlane {
  /** `loopback` or `netns`, fixed when made: which addresses are served and contacted (`local_addresses.ts`). */
  readonly mode: ActiveDataPlaneMode;
  readonly #world: DataPlaneWorld;
  readonly #log: (line: string) => void;
  readonly #owners = new Map<string, Owner>();
  readonly #edgeApplied = new Map<string, EdgeMemberState[]>();
  readonly #netns?: NetnsRoutes;
  #tools?: HaproxyTools;
  #root?: string;
  #specs: ListenerSpec[] = [];
  #plans = new Map<string, ProxyPlan>();
  #wanted = false;
  #loop?: Promise<void>;
  #dueTimer?: ReturnType<typeof setTimeout>;
  #retryTimer?: ReturnType<typeof setTimeout>;
  #stopped = false;

  /** Creates the data plane over `world`; nothing runs before {@linkcode DataPlane.start}. */
  constructor(world: DataPlaneWorld, options: DataPlaneOptions) {
    this.#world = world;
    this.mode = options.mode;
    this.#log = options.log ?? ((line) => console.error(`ankra-cloud-simulator: data plane: ${line}`));
    if (options.mode === "netns") this.#netns = new NetnsRoutes();
  }

  /** Finds HAProxy (an error naming the package when missing), prepares the mode, and serves the world. */
  async start(): Promise<void> {
    this.#tools = locateHaproxyTools();
    await this.#netns?.prepare(this.#world.publicIpv4Ranges());
    this.#root = await Deno.makeTempDir({ prefix: "ankra-cloud-simulator-haproxy-" });
    await this.settle();
  }

  /** Asks for a reconcile soon (after an API request); returns at once. */
  wake(): void {
    if (this.#stopped) return;
    this.#wanted = true;
    this.#loop ??= this.#run().finally(() => this.#loop = undefined);
  }

  /** Reconciles now and resolves once the processes follow the world. */
  async settle(): Promise<void> {
    this.wake();
    while (this.#loop) await this.#loop;
  }

  /** Stops every HAProxy (their connections end) and removes their files. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#dueTimer);
    clearTimeout(this.#retryTimer);
    while (this.#loop) await this.#loop;
    await Promise.all([...this.#owners.values()].map((owner) => this.#drop(owner)));
    if (this.#root) await Deno.remove(this.#root, { recursive: true }).catch(() => {});
  }

  /** The listeners, in plan order, with their states. */
  listeners(): ListenerView[] {
    return this.#specs.map((spec) => {
      if (!spec.served) return { spec, state: "not_served" };
      const ownerId = spec.route.kind === "load_balancer" ? spec.route.loadBalancerId : spec.route.edgeId;
      const problem = this.#plans.get(ownerId)?.problems.get(spec.key);
      if (problem) return { spec, state: "failed", error: problem };
      const owner = this.#owners.get(ownerId);
      if (owner?.process?.alive && owner.loadedBinds.has(spec.key)) return { spec, state: "listening" };
      if (owner?.failure && (owner.failure.key === undefined || owner.failure.key === spec.key)) {
        return { spec, state: "failed", error: owner.failure.error };
      }
      return { spec, state: "opening" };
    });
  }

  /** What HAProxy shows now: every owner's `show stat` (through the master CLI), with the listeners and plans. */
  async snapshot(): Promise<DataPlaneView> {
    const owners = new Map<string, OwnerStats>();
    await Promise.all([...this.#owners.values()].map(async (owner) => {
      const process = owner.process;
      if (!process?.alive) return;
      try {
        const procs = parseShowProc(await process.command("show proc"));
        if (procs.current === undefined) return;
        const rows = parseShowStat(await process.command(`@!${procs.current} show stat`));
        const active = new Map<string, number>();
        const add = (list: StatRow[]) => {
          for (const row of list) {
            const key = `${row.pxname}/${row.svname}`;
            active.set(key, (active.get(key) ?? 0) + Number(row.scur || 0));
          }
        };
        add(rows);
        for (const pid of procs.old) add(parseShowStat(await process.command(`@!${pid} show stat`).catch(() => "")));
        owners.set(owner.id, {
          rows,
          active,
          checks: new Map(owner.checks),
          process: { pid: process.pid, masterSocket: process.masterSocket, configPath: process.configPath },
        });
      } catch { /* reloading or gone: shown without HAProxy's figures this time */ }
    }));
    return {
      mode: this.mode,
      listeners: this.listeners(),
      plans: new Map(this.#plans),
      owners,
      edgeMembers: new Map(this.#edgeApplied),
    };
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
    const world = this.#world;
    const dueInMs = world.tick();
    const loadBalancers = world.loadBalancers();
    const edges = world.edges();
    for (const edgeId of this.#edgeApplied.keys()) {
      if (!edges.some((e) => e.id === edgeId)) this.#edgeApplied.delete(edgeId);
    }
    for (const edge of edges) {
      const syncing = edge.active_operation?.status === "running";
      if (edge.state === "running" && !syncing) this.#edgeApplied.set(edge.id, edge.members.map((m) => ({ ...m })));
    }
    const specs = planListeners({
      loadBalancers,
      edges: edges.map((edge) => ({ edge, members: this.#edgeApplied.get(edge.id) ?? [] })),
      mode: this.mode,
    });
    await this.#netns?.cover(world.networks());
    const networks = new Map(world.networks().map((n) => [n.id, n]));
    const wanted = new Map<string, { plan: ProxyPlan; what: string; generation?: number }>();
    for (const lb of loadBalancers) {
      if (lb.state !== "running") continue;
      const listeners = specs.filter((s) => s.route.kind === "load_balancer" && s.route.loadBalancerId === lb.id);
      const plan = loadBalancerPlan(lb, {
        network: networks.get(lb.network_id),
        listeners,
        mode: this.mode,
        certificates: world.certificates(),
      });
      wanted.set(lb.id, { plan, what: `load balancer ${lb.id}`, generation: lb.configuration_generation });
    }
    for (const edge of edges) {
      if (edge.state !== "running" || edge.placement !== "combined" || !edge.roles.includes("load_balancer")) continue;
      const listeners = specs.filter((s) => s.route.kind === "edge" && s.route.edgeId === edge.id);
      const plan = edgePlan(edge, { members: this.#edgeApplied.get(edge.id) ?? [], listeners, mode: this.mode });
      wanted.set(edge.id, { plan, what: `edge ${edge.id}` });
    }
    this.#specs = specs;
    this.#plans = new Map([...wanted].map(([id, w]) => [id, w.plan]));
    await Promise.all([...this.#owners.values()].filter((o) => !wanted.has(o.id)).map((o) => this.#drop(o)));
    await Promise.all([...wanted].map(([id, w]) => this.#apply(id, w)));
    this.#scheduleTimers(dueInMs);
  }

  async #apply(id: string, wanted: { plan: ProxyPlan; what: string; generation?: number }): Promise<void> {
    let owner = this.#owners.get(id);
    if (!owner) {
      const dir = `${this.#root}/${id}`;
      await Deno.mkdir(dir, { recursive: true });
      owner = { id, what: wanted.what, dir, loadedBinds: new Set(), retryAt: 0, checks: new Map() };
      this.#owners.set(id, owner);
    }
    const { plan } = wanted;
    for (const [key, problem] of plan.problems) this.#logOnce(owner, `${problem} (${wanted.what}, listener ${key})`);
    const rendered = renderHaproxyConfig(plan, {
      dir: owner.dir,
      hardStopAfterMs: this.#world.hardStopAfterMs(),
      certificates: this.#world.certificates(),
    });
    const markApplied = () => {
      if (wanted.generation !== undefined && plan.problems.size === 0) this.#world.markApplied(id, wanted.generation);
    };
    if (owner.process?.alive && owner.loaded === rendered.config) return markApplied();
    if (owner.refused === rendered.config && Date.now() < owner.retryAt) return;
    for (const [path, content] of rendered.files) await Deno.writeTextFile(path, content);
    await Deno.writeTextFile(`${owner.dir}/haproxy.cfg`, rendered.config);
    let outcome;
    if (owner.process?.alive) {
      const process = owner.process;
      const state = await process.worker("show servers state").catch(() => "");
      await Deno.writeTextFile(`${owner.dir}/server-state`, state.replace(/^\s*\n/, ""));
      outcome = await process.reload();
    } else {
      const current = owner;
      const started = await HaproxyProcess.start(this.#tools!, {
        dir: owner.dir,
        onLine: (line) => this.#heard(current, line),
      });
      owner.process = started.process;
      owner.loaded = undefined;
      owner.loadedBinds = new Set();
      outcome = started.outcome;
    }
    if (this.#stopped || this.#owners.get(id) !== owner) return;
    if (outcome.loaded) {
      owner.loaded = rendered.config;
      owner.loadedBinds = new Set(plan.frontends.flatMap((f) => f.binds.map((b) => b.key)));
      owner.refused = undefined;
      owner.failure = undefined;
      return markApplied();
    }
    owner.refused = rendered.config;
    owner.retryAt = Date.now() + RETRY_MS;
    owner.failure = refusalOf(outcome.alerts);
    this.#logOnce(
      owner,
      `haproxy refused the configuration of ${wanted.what}: ${outcome.alerts.join("; ")}; retrying every ` +
        `${RETRY_MS / 1000} s`,
    );
  }

  #heard(owner: Owner, line: string): void {
    const read = readHaproxyLine(line);
    if (read.kind === "check") owner.checks.set(read.server, new Date().toISOString());
    const transition = /\] *\(\d+\) : (Server \S+ is (?:UP|DOWN)\b.*)$/.exec(line)?.[1];
    if (transition) this.#log(`${owner.what}: ${transition}`);
  }

  #logOnce(owner: Owner, line: string): void {
    if (owner.logged === line) return;
    owner.logged = line;
    this.#log(line);
  }

  async #drop(owner: Owner): Promise<void> {
    this.#owners.delete(owner.id);
    await owner.process?.stop();
    await Deno.remove(owner.dir, { recursive: true }).catch(() => {});
  }

  #scheduleTimers(dueInMs: number | undefined): void {
    if (this.#stopped) return;
    clearTimeout(this.#dueTimer);
    if (dueInMs !== undefined) this.#dueTimer = setTimeout(() => this.wake(), dueInMs + 5);
    const refused = [...this.#owners.values()].some((o) => o.refused !== undefined);
    if (refused && this.#retryTimer === undefined) {
      this.#retryTimer = setTimeout(() => {
        this.#retryTimer = undefined;
        this.wake();
      }, RETRY_MS);
    }
  }
}
