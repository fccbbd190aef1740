/**
 * Everything one simulator instance holds: the world and its load balancers and edges, scripted faults, the
 * idempotency store, the rate limiter, the request log and per-operation counters. Resettable to its seed. (Its data
 * plane, when one runs, belongs to the server that runs both: `server.ts`.)
 *
 * @module
 */
import { Edges } from "./edges.ts";
import { FaultPlan } from "./faults.ts";
import { IdempotencyStore } from "./idempotency.ts";
import { LoadBalancers } from "./load_balancers.ts";
import { RateLimiter } from "./rate_limiter.ts";
import type { Seed } from "./seed.ts";
import { World } from "./world.ts";

/** One entry of the request log. */
export interface RequestLogEntry {
  /** Starts at 1 and is never reused, not even after {@linkcode Simulator.resetLog}. */
  seq: number;
  /** When it arrived (RFC 3339). */
  at: string;
  /** Milliseconds on the simulator's clock. */
  atMs: number;
  /** operationId, or `control` / `unknown`. */
  operation: string;
  /** HTTP method. */
  method: string;
  /** As requested, e.g. `/v1/load_balancers?label=…`; the path alone for an unknown route. */
  path: string;
  /** Answer status (0 when the connection was dropped or hung). */
  status: number;
  /** First 8 characters of the token (its displayed prefix). */
  tokenPrefix?: string;
  /** The `Idempotency-Key` sent, if any. */
  idempotencyKey?: string;
  /** True when the answer was an idempotent replay. */
  replayed?: boolean;
  /** The fault applied, if any. */
  fault?: string;
  /** The `User-Agent` header. */
  userAgent?: string;
}

/** Options of {@linkcode Simulator}. */
export interface SimulatorOptions {
  /** Clock in milliseconds (default `Date.now`). */
  clock?: () => number;
  /** Most log entries kept (default 10,000). */
  logLimit?: number;
}

/** A simulator instance. */
export class Simulator {
  readonly #seed: Seed;
  readonly #options: SimulatorOptions;
  /** Built from a copy of the seed; replaced by {@linkcode Simulator.resetWorld}. */
  world!: World;
  /** The load balancer verbs over `world`; replaced by {@linkcode Simulator.resetWorld}. */
  loadBalancers!: LoadBalancers;
  /** The edge verbs over `world`, holding the seed's edges ready; replaced by {@linkcode Simulator.resetWorld}. */
  edges!: Edges;
  /** Set through `POST /_simulator/faults`; emptied by {@linkcode Simulator.resetWorld}. */
  readonly faults = new FaultPlan();
  /** Keys of billable creates, kept 24 h on the world's clock; emptied by {@linkcode Simulator.resetWorld}. */
  idempotency!: IdempotencyStore;
  /** Reads `settings.rate_limit_per_minute` on every request; replaced by {@linkcode Simulator.resetWorld}. */
  rateLimiter!: RateLimiter;
  /** Request log, oldest first. */
  log: RequestLogEntry[] = [];
  /** Requests per operation. */
  counters = new Map<string, number>();
  #seq = 0;
  /** Aborted when the simulator stops: hanging requests end. */
  readonly shutdown = new AbortController();

  /** Creates a simulator from a parsed seed. */
  constructor(seed: Seed, options: SimulatorOptions = {}) {
    this.#seed = seed;
    this.#options = options;
    this.resetWorld();
  }

  /** Rebuilds the world from the seed (load balancers, edges, servers added later and faults are gone). */
  resetWorld(): void {
    const clock = this.#options.clock ?? Date.now;
    this.world = new World(structuredClone(this.#seed), { clock });
    this.loadBalancers = new LoadBalancers(this.world, {
      appliedBy: this.world.settings.data_plane === "off" ? "at_once" : "data_plane",
    });
    this.edges = new Edges(this.world);
    this.idempotency = new IdempotencyStore(() => this.world.now());
    this.rateLimiter = new RateLimiter(() => this.world.now(), () => this.world.settings.rate_limit_per_minute);
    for (const edge of this.#seed.edges) {
      const { id, members, ...rest } = edge;
      this.edges.create({
        ...rest,
        members: members.map((m) => ({ ...m })),
      }, { id, ready: true });
    }
    this.faults.clear();
  }

  /** Forgets the request log and counters. */
  resetLog(): void {
    this.log = [];
    this.counters.clear();
  }

  /** Appends to the request log and counts the operation. */
  record(entry: Omit<RequestLogEntry, "seq" | "at" | "atMs">): void {
    const now = this.world.now();
    this.log.push({ seq: ++this.#seq, at: new Date(now).toISOString(), atMs: now, ...entry });
    const limit = this.#options.logLimit ?? 10_000;
    if (this.log.length > limit) this.log.splice(0, this.log.length - limit);
    this.counters.set(entry.operation, (this.counters.get(entry.operation) ?? 0) + 1);
  }

  /** Requests counted for `operation` (all operations when omitted, control requests excluded). */
  count(operation?: string): number {
    if (operation) return this.counters.get(operation) ?? 0;
    let total = 0;
    for (const [name, n] of this.counters) if (name !== "control") total += n;
    return total;
  }
}
