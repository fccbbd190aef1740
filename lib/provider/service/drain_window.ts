/**
 * The drain window, the one rule both ways of serving a Service use for what leaves it: a member of a load balancer's
 * backend (`member_drain.ts`) or a node of a node-address Service's ingress (`node_address_plan.ts`) that stops being
 * wanted stays, drained, for `--member-drain-period` from the moment it was first seen leaving, then goes; one that is
 * wanted again stops draining at once; a period of 0 lets everything go at once. When each drain began is the caller's
 * memory between passes (a restart begins the window again: it only delays a removal). Pure.
 *
 * @module
 */

/** When each thing leaving (by its name) began to leave, epoch milliseconds. */
export type DrainStarts = ReadonlyMap<string, number>;

/** What {@linkcode drainWindow} decides from, besides what leaves. */
interface DrainClock {
  /** The drain period; 0: everything leaves at once. */
  periodMs: number;
  /** Now, epoch milliseconds. */
  now: number;
}

/** What is still draining after this pass, and when the earliest drain ends (a pass is due then). */
interface DrainWindow {
  /** Each name still draining, with when it began: the most recent first, then by name. */
  draining: Map<string, number>;
  /** When the earliest drain ends; absent when nothing drains. */
  nextAtMs?: number;
}

/**
 * The names of `leaving` (no longer wanted) still inside their window: each began at its start in `known`, or now
 * when it is seen leaving for the first time; those whose window has passed are left out.
 */
export function drainWindow(leaving: Iterable<string>, known: DrainStarts, clock: DrainClock): DrainWindow {
  if (clock.periodMs <= 0) return { draining: new Map() };
  const inside = [...new Set(leaving)]
    .map((name) => [name, known.get(name) ?? clock.now] as const)
    .filter(([, since]) => clock.now - since < clock.periodMs)
    .sort(([a, sa], [b, sb]) => sb - sa || (a < b ? -1 : a > b ? 1 : 0));
  return endOf(new Map(inside), clock.periodMs);
}

/** `draining` with the time its earliest drain ends (`periodMs` after it began). */
export function endOf(draining: Map<string, number>, periodMs: number): DrainWindow {
  if (draining.size === 0) return { draining };
  return { draining, nextAtMs: Math.min(...draining.values()) + periodMs };
}
