/**
 * The report of a dry run (`--dry-run`): every write a real run would make — to Ankra Cloud or to Kubernetes — is
 * recorded here instead of being sent. Each distinct action is logged once (`dry run: would …`), and `/metrics`
 * shows them: `ankra_ccm_dry_run_actions` counts the distinct planned actions by controller and kind, and
 * `ankra_ccm_dry_run_planned_action` has one series per action (object and what would be done).
 *
 * @module
 */
import * as log from "../log.ts";
import type { MetricsRegistry } from "./metrics.ts";

/** One planned write. */
export interface PlannedAction {
  /** The controller that would do it (`service`, `cloud-node`, `cloud-node-lifecycle`). */
  controller: string;
  /** The object it is about (`default/web`, `node worker-1`). */
  object: string;
  /** Kind of action (`create_load_balancer`, `patch_node`, `event`, …). */
  action: string;
  /** What exactly would be done. */
  detail: string;
}

/** Collects the writes of a dry run. */
export class DryRunReport {
  readonly #seen = new Map<string, PlannedAction>();
  readonly #counts?: ReturnType<MetricsRegistry["gauge"]>;
  readonly #series?: ReturnType<MetricsRegistry["gauge"]>;

  /** Creates the report; with `metrics`, the actions are on `/metrics` too. */
  constructor(metrics?: MetricsRegistry) {
    this.#counts = metrics?.gauge(
      "ankra_ccm_dry_run_actions",
      "Dry run: distinct writes a real run would make, by controller and action.",
    );
    this.#series = metrics?.gauge(
      "ankra_ccm_dry_run_planned_action",
      "Dry run: one series per write a real run would make (1).",
    );
  }

  /** Records a write a real run would make (logged the first time it is seen). */
  would(action: PlannedAction): void {
    const key = `${action.controller}|${action.object}|${action.action}|${action.detail}`;
    if (this.#seen.has(key)) return;
    this.#seen.set(key, action);
    log.info(0, `dry run: would ${action.detail}`, {
      controller: action.controller,
      object: action.object,
      action: action.action,
    });
    const byKind =
      [...this.#seen.values()].filter((a) => a.controller === action.controller && a.action === action.action).length;
    this.#counts?.set(byKind, { controller: action.controller, action: action.action });
    this.#series?.set(1, {
      controller: action.controller,
      object: action.object,
      action: action.action,
      detail: action.detail.slice(0, 200),
    });
  }

  /** Records an observation that needs no write (`no change`, `would adopt`), logged once per object and text. */
  note(controller: string, object: string, text: string): void {
    const key = `note|${controller}|${object}|${text}`;
    if (this.#seen.has(key)) return;
    this.#seen.set(key, { controller, object, action: "note", detail: text });
    log.info(0, `dry run: ${text}`, { controller, object });
  }

  /** Every planned write so far. */
  get actions(): PlannedAction[] {
    return [...this.#seen.values()].filter((a) => a.action !== "note");
  }
}
