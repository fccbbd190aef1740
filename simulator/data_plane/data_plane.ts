/**
 * The simulator's data plane: an HAProxy per owner the plan names (`haproxy_plan.ts`), its configuration rendered
 * (`haproxy_config.ts`) into the owner's folder, started, reloaded on every change and stopped with its owner
 * (`haproxy_process.ts`). Level-based like a controller: every reconcile reads the whole world (after every API
 * request, when an operation is due, and every 2 s while HAProxy refuses a configuration) and brings the processes to
 * it. A load balancer's configuration counts as applied once its HAProxy loaded it; a refused one is logged once,
 * shown on its listeners and retried. An edge serves the members of its last finished sync, remembered here.
 *
 * @module
 */
import type { EdgeMemberState, EdgeState } from "../edges.ts";
import type { LoadBalancerState } from "../load_balancer_state.ts";
import type { SeedCertificate } from "../seed.ts";
import type { NetworkState } from "../world_state.ts";
import type { DataPlaneView, ListenerView, OwnerStats } from "./data_plane_state.ts";
import { renderHaproxyConfig } from "./haproxy_config.ts";
import { type ListenerSpec, planHaproxies, type ProxyPlan } from "./haproxy_plan.ts";
import * as haproxy from "./haproxy_process.ts";
import { readRuntimeStats } from "./haproxy_runtime.ts";
import type { ActiveDataPlaneMode } from "./local_addresses.ts";
import { NetnsRoutes } from "./netns_routes.ts";

/**
 * The narrow view of the world the data plane reads, and the one fact it reports back: every load balancer, edge and
 * network as stored; the seeded certificates by id; the seed's `reload_hard_stop_after_ms` and `public_ipv4_ranges`
 * (the `netns` mode makes them local); `tick` finishes the operations that are due and says in how many milliseconds
 * the next running one is; `markApplied` records that a load balancer's VMs run `generation`.
 */
export interface DataPlaneWorld {
  loadBalancers(): LoadBalancerState[];
  edges(): EdgeState[];
  networks(): NetworkState[];
  certificates(): ReadonlyMap<string, SeedCertificate> | undefined;
  hardStopAfterMs(): number | undefined;
  publicIpv4Ranges(): readonly string[];
  tick(): number | undefined;
  markApplied(loadBalancerId: string, generation: number): void;
}

/**
 * One owner's HAProxy: its folder and process; the configuration it runs and the listeners in it; a configuration it
 * refused, retried from `retryAt`, and what the refusal means for the listeners; the last line logged for it; when
 * HAProxy last reported a check of each `backend/server`.
 */
interface Owner {
  id: string;
  what: string;
  dir: string;
  process?: haproxy.HaproxyProcess;
  loaded?: string;
  loadedBinds: Set<string>;
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
  #tools?: haproxy.HaproxyTools;
  #root?: string;
  #plans = new Map<string, ProxyPlan>();
  #wanted = false;
  #loop?: Promise<void>;
  #dueTimer?: ReturnType<typeof setTimeout>;
  #retryTimer?: ReturnType<typeof setTimeout>;
  #stopped = false;

  /**
   * Creates the data plane over `world` in `mode`, logging to `log` (default: standard error, prefixed
   * `ankra-cloud-simulator: data plane:`); nothing runs before {@linkcode DataPlane.start}.
   */
  constructor(world: DataPlaneWorld, options: { mode: ActiveDataPlaneMode; log?: (line: string) => void }) {
    this.#world = world;
    this.mode = options.mode;
    this.#log = options.log ?? ((line) => console.error(`ankra-cloud-simulator: data plane: ${line}`));
    if (options.mode === "netns") this.#netns = new NetnsRoutes();
  }

  /** Finds HAProxy (an error naming the package when missing), prepares the mode, and serves the world. */
  async start(): Promise<void> {
    this.#tools = haproxy.locateHaproxyTools();
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

  /** What `/_simulator/state` shows now: each plan, its listeners' states, and its HAProxy's runtime figures. */
  async snapshot(): Promise<DataPlaneView> {
    const stats = new Map<string, OwnerStats>();
    await Promise.all([...this.#owners.values()].map(async (owner) => {
      const process = owner.process;
      if (!process?.alive) return;
      // The check times are taken before the figures: a check logged while they are read would otherwise show its
      // time beside the figures from before it, and a reader waiting for the time to change would miss that check.
      const checks = new Map(owner.checks);
      // Reloading or gone: shown without HAProxy's figures this time.
      const read = await readRuntimeStats(process.masterSocket, () => !process.alive).catch(() => undefined);
      const { pid, masterSocket, configPath } = process;
      if (read) {
        stats.set(owner.id, { ...read, checks, process: { pid, masterSocket, configPath } });
      }
    }));
    const owners = new Map([...this.#plans].map(([id, plan]) => {
      const listeners = plan.listeners.map((spec) => ({ ...spec, ...this.#listenerState(plan, spec) }));
      return [id, { plan, listeners, stats: stats.get(id) }];
    }));
    return { mode: this.mode, owners };
  }

  #listenerState(plan: ProxyPlan, spec: ListenerSpec): Pick<ListenerView, "state" | "error"> {
    if (!spec.served) return { state: "not_served" };
    const problem = plan.problems.get(spec.key);
    if (problem) return { state: "failed", error: problem };
    const owner = this.#owners.get(plan.owner);
    if (owner?.process?.alive && owner.loadedBinds.has(spec.key)) return { state: "listening" };
    const failure = owner?.failure;
    if (failure && (failure.key === undefined || failure.key === spec.key)) {
      return { state: "failed", error: failure.error };
    }
    return { state: "opening" };
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
    await this.#netns?.cover(world.networks());
    const plans = planHaproxies({
      loadBalancers,
      edges: edges.map((edge) => ({ edge, members: this.#edgeApplied.get(edge.id) ?? [] })),
      networks: world.networks(),
      mode: this.mode,
      certificates: world.certificates(),
    });
    this.#plans = new Map(plans.map((plan) => [plan.owner, plan]));
    await Promise.all([...this.#owners.values()].filter((o) => !this.#plans.has(o.id)).map((o) => this.#drop(o)));
    await Promise.all(plans.map((plan) => this.#apply(plan)));
    this.#scheduleTimers(dueInMs);
  }

  /** Brings the owner's HAProxy to `plan`: started, or reloaded when its configuration changed. */
  async #apply(plan: ProxyPlan): Promise<void> {
    const owner = this.#owners.get(plan.owner) ?? await this.#adopt(plan);
    for (const [key, problem] of plan.problems) this.#logOnce(owner, `${problem} (${plan.what}, listener ${key})`);
    const rendered = renderHaproxyConfig(plan, {
      dir: owner.dir,
      hardStopAfterMs: this.#world.hardStopAfterMs(),
      certificates: this.#world.certificates(),
    });
    const markApplied = () => {
      if (plan.generation !== undefined && !plan.problems.size) this.#world.markApplied(plan.owner, plan.generation);
    };
    if (owner.process?.alive && owner.loaded === rendered.config) return markApplied();
    if (owner.refused === rendered.config && Date.now() < owner.retryAt) return;
    for (const [path, content] of rendered.files) await Deno.writeTextFile(path, content);
    await Deno.writeTextFile(`${owner.dir}/haproxy.cfg`, rendered.config);
    let outcome;
    if (owner.process?.alive) outcome = await owner.process.reload();
    else {
      const onLine = (line: string) => this.#heard(owner, line);
      const started = await haproxy.HaproxyProcess.start(this.#tools!, { dir: owner.dir, onLine });
      owner.process = started.process;
      owner.loaded = undefined;
      owner.loadedBinds = new Set();
      outcome = started.outcome;
    }
    if (this.#stopped || this.#owners.get(plan.owner) !== owner) return;
    if (outcome.loaded) {
      owner.loaded = rendered.config;
      owner.loadedBinds = new Set(plan.frontends.flatMap((f) => f.binds.map((b) => b.key)));
      owner.refused = owner.failure = undefined;
      return markApplied();
    }
    owner.refused = rendered.config;
    owner.retryAt = Date.now() + RETRY_MS;
    owner.failure = haproxy.refusalOf(outcome.alerts);
    const alerts = outcome.alerts.join("; ");
    this.#logOnce(
      owner,
      `haproxy refused the configuration of ${plan.what}: ${alerts}; retrying every ${RETRY_MS / 1000} s`,
    );
  }

  async #adopt(plan: ProxyPlan): Promise<Owner> {
    const dir = `${this.#root}/${plan.owner}`;
    await Deno.mkdir(dir, { recursive: true });
    const owner: Owner = {
      id: plan.owner,
      what: plan.what,
      dir,
      loadedBinds: new Set(),
      retryAt: 0,
      checks: new Map(),
    };
    this.#owners.set(owner.id, owner);
    return owner;
  }

  #heard(owner: Owner, line: string): void {
    const read = haproxy.readHaproxyLine(line);
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
    if (this.#retryTimer === undefined && [...this.#owners.values()].some((o) => o.refused !== undefined)) {
      this.#retryTimer = setTimeout(() => {
        this.#retryTimer = undefined;
        this.wake();
      }, RETRY_MS);
    }
  }
}
