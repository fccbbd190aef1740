/**
 * The data plane's members at run time: each member's health, last check and connection counts by its key
 * (`backend_view.ts`), kept in step with the world's backends, and its health checks started and stopped with it. A
 * member appears up (HAProxy's `init-state up`); one that is enabled again, or whose backend's check type changes to
 * or from `none`, starts over the same way; a disabled member is not checked; a member gone from the world is
 * forgotten. With check type `none` a member is always up.
 *
 * @module
 */
import type { BackendConfig } from "./backend_view.ts";
import { type CheckSubject, HealthChecks, type MemberRuntime } from "./health_checks.ts";
import { type Health, initialHealth } from "./health_rule.ts";
import type { ActiveDataPlaneMode } from "./local_addresses.ts";

/** Options of {@linkcode MemberStates}. */
export interface MemberStatesOptions {
  /** The data plane's mode. */
  mode: ActiveDataPlaneMode;
  /** The address the first VM's checks of a member of `owner` at `address` leave from, if any. */
  checkSource(owner: string, address: string): string | undefined;
  /** Where a member's transitions (up, down) are told. */
  log(line: string): void;
}

interface Entry {
  runtime: MemberRuntime;
  backend: BackendConfig;
  address: string;
  port: number;
  enabled: boolean;
  checked: boolean;
}

/** Every member's run-time state and checks. */
export class MemberStates {
  readonly #entries = new Map<string, Entry>();
  readonly #checks: HealthChecks;
  readonly #options: MemberStatesOptions;

  /** Creates the states; no member is known before {@linkcode MemberStates.follow}. */
  constructor(options: MemberStatesOptions) {
    this.#options = options;
    this.#checks = new HealthChecks({
      mode: options.mode,
      subject: (key) => this.#subject(key),
      onTransition: (key, up, detail) => {
        const entry = this.#entries.get(key);
        const where = entry ? `${entry.address}:${entry.port} of ${entry.backend.key.replace("|", " backend ")}` : key;
        options.log(`member ${where} is ${up ? "up" : "down"}: ${detail}`);
      },
    });
  }

  /** The state of member `key`. */
  runtime(key: string): MemberRuntime | undefined {
    return this.#entries.get(key)?.runtime;
  }

  /** Brings the members to those of `backends` (the running load balancers' and edges'). */
  follow(backends: BackendConfig[]): void {
    const seen = new Set<string>();
    for (const backend of backends) {
      const checked = backend.check.type !== "none";
      for (const member of backend.members) {
        seen.add(member.key);
        let entry = this.#entries.get(member.key);
        if (!entry) {
          entry = {
            runtime: {
              health: startHealth(backend, checked),
              lastCheck: null,
              connectionsTotal: 0,
              connectionsActive: 0,
            },
            backend,
            address: member.address,
            port: member.port,
            enabled: member.enabled,
            checked,
          };
          this.#entries.set(member.key, entry);
        } else if ((member.enabled && !entry.enabled) || checked !== entry.checked) {
          this.#checks.drop(member.key);
          entry.runtime.health = startHealth(backend, checked);
          entry.runtime.lastCheck = null;
        }
        Object.assign(entry, { backend, enabled: member.enabled, checked });
        if (member.enabled && checked) this.#checks.ensure(member.key);
        else this.#checks.drop(member.key);
      }
    }
    for (const key of [...this.#entries.keys()]) {
      if (seen.has(key)) continue;
      this.#entries.delete(key);
      this.#checks.drop(key);
    }
  }

  /** Stops every check (resolves once those under way have given up). */
  stop(): Promise<void> {
    return this.#checks.stop();
  }

  #subject(key: string): CheckSubject | undefined {
    const entry = this.#entries.get(key);
    if (!entry || !entry.enabled || !entry.checked) return undefined;
    return {
      target: {
        address: entry.address,
        port: entry.port,
        source: this.#options.checkSource(entry.backend.ownerId, entry.address),
      },
      check: entry.backend.check,
      runtime: entry.runtime,
    };
  }
}

function startHealth(backend: BackendConfig, checked: boolean): Health {
  return checked ? initialHealth(backend.check) : { counter: backend.check.rise + backend.check.fall - 1, up: true };
}
