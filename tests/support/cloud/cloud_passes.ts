/**
 * Waiting for a controller's next passes as the Ankra Cloud simulator sees them: a steady-state pass makes no
 * change, so the only trace it leaves is its read (the service controller's drift check reads the load balancer, or
 * the edge, it serves). A test that must show "nothing happens" waits for such reads instead of for a fixed time:
 * each read proves one more full pass of the controller.
 *
 * @module
 */
import type { Simulator } from "../../../simulator/simulator.ts";
import { eventually } from "../wait/eventually.ts";

/** Every Ankra Cloud write operation on load balancers. */
export const WRITES = [
  "create_load_balancer",
  "update_load_balancer",
  "delete_load_balancer",
  "create_load_balancer_backend",
  "update_load_balancer_backend",
  "delete_load_balancer_backend",
  "create_load_balancer_frontend",
  "delete_load_balancer_frontend",
  "replace_load_balancer_members",
];

/** A simulator request log filter: an operation name, and optionally a text its path contains (an id). */
export interface CloudRead {
  /** The operation, e.g. `get_load_balancer`. */
  operation: string;
  /** Text the request path contains, e.g. the load balancer's id. */
  pathIncludes?: string;
}

/** How many requests of `read` the simulator has answered so far. */
export function readsOf(sim: Simulator, read: CloudRead): number {
  return sim.log.filter((entry) =>
    entry.operation === read.operation && (read.pathIncludes === undefined || entry.path.includes(read.pathIncludes))
  ).length;
}

/**
 * Resolves once the simulator has answered `count` more requests of `read` than it had when this was called.
 *
 * @throws naming the read when they do not come within `timeoutMs`.
 */
export function moreReads(
  sim: Simulator,
  read: CloudRead,
  options: { count?: number; timeoutMs?: number } = {},
): Promise<void> {
  const from = readsOf(sim, read);
  const count = options.count ?? 1;
  return eventually(
    () => readsOf(sim, read) >= from + count,
    options.timeoutMs ?? 15_000,
    `${count} more ${read.operation}${read.pathIncludes ? ` of ${read.pathIncludes}` : ""}`,
  );
}
