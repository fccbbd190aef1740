/**
 * The health checks of every checked member: the first right away when the member appears (or is enabled again),
 * then every `interval_seconds` of its backend's check as it is at that moment (an `update_load_balancer_backend`
 * applies from the next check). Each result moves the member's health by the rise/fall rule (`health_rule.ts`) and
 * is kept as its last check.
 *
 * @module
 */
import type { HealthCheckState } from "../load_balancer_state.ts";
import { afterCheck, type Health } from "./health_rule.ts";
import { probeMember } from "./health_probe.ts";
import type { ActiveDataPlaneMode } from "./local_addresses.ts";
import type { MemberTarget } from "./member_connection.ts";

/** What the data plane knows of a member at run time. */
export interface MemberRuntime {
  /** Its health. */
  health: Health;
  /** The last check, or null before the first (and with check type `none`). */
  lastCheck: { result: "passed" | "failed"; at: string; detail: string } | null;
  /** Connections forwarded to it. */
  connectionsTotal: number;
  /** Connections to it open now. */
  connectionsActive: number;
}

/** A member to check, as it is now. */
export interface CheckSubject {
  /** Where to connect, and from where. */
  target: MemberTarget;
  /** The backend's check. */
  check: HealthCheckState;
  /** Its run-time state, updated by each check. */
  runtime: MemberRuntime;
}

/** Options of {@linkcode HealthChecks}. */
export interface HealthChecksOptions {
  /** The data plane's mode. */
  mode: ActiveDataPlaneMode;
  /** The member under `key` as it is now; undefined once it is gone, disabled or no longer checked. */
  subject(key: string): CheckSubject | undefined;
  /** Called when a check takes a member out or brings it back. */
  onTransition(key: string, up: boolean, detail: string): void;
}

/** Timers of the checks, one chain per member key. */
export class HealthChecks {
  readonly #options: HealthChecksOptions;
  readonly #chains = new Map<string, { timer: ReturnType<typeof setTimeout> | undefined }>();
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #abort = new AbortController();
  #stopped = false;

  /** Creates the checks; none run until {@linkcode HealthChecks.ensure}. */
  constructor(options: HealthChecksOptions) {
    this.#options = options;
  }

  /** Starts checking `key` (first check now) unless it is checked already. */
  ensure(key: string): void {
    if (this.#stopped || this.#chains.has(key)) return;
    const chain: { timer: ReturnType<typeof setTimeout> | undefined } = { timer: undefined };
    chain.timer = setTimeout(() => this.#run(key, chain), 0);
    this.#chains.set(key, chain);
  }

  /** Stops checking `key`. */
  drop(key: string): void {
    const chain = this.#chains.get(key);
    if (chain) clearTimeout(chain.timer);
    this.#chains.delete(key);
  }

  /** The keys being checked. */
  keys(): string[] {
    return [...this.#chains.keys()];
  }

  /** Stops every check; resolves once the checks under way have given up. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    for (const chain of this.#chains.values()) clearTimeout(chain.timer);
    this.#chains.clear();
    await Promise.all(this.#inFlight);
  }

  async #run(key: string, chain: { timer: ReturnType<typeof setTimeout> | undefined }): Promise<void> {
    const current = () => !this.#stopped && this.#chains.get(key) === chain;
    const subject = this.#options.subject(key);
    if (!subject || !current()) {
      if (current()) this.#chains.delete(key);
      return;
    }
    const { check, runtime } = subject;
    const started = Date.now();
    const intervalMs = check.interval_seconds * 1000;
    const probe = probeMember(subject.target, {
      check,
      mode: this.#options.mode,
      timeoutMs: intervalMs,
      signal: this.#abort.signal,
    });
    this.#inFlight.add(probe);
    const result = await probe.finally(() => this.#inFlight.delete(probe));
    if (!current() || this.#options.subject(key)?.runtime !== runtime) return;
    const before = runtime.health.up;
    runtime.health = afterCheck(runtime.health, result.passed, check);
    runtime.lastCheck = {
      result: result.passed ? "passed" : "failed",
      at: new Date().toISOString(),
      detail: result.detail,
    };
    if (runtime.health.up !== before) this.#options.onTransition(key, runtime.health.up, result.detail);
    chain.timer = setTimeout(() => this.#run(key, chain), Math.max(0, started + intervalMs - Date.now()));
  }
}
