/**
 * Waiting for a component the test started (etcd, kube-apiserver, containerd, a kubelet, the simulator) to answer,
 * while watching that the processes it needs keep running: a crashed process fails the wait at once, naming it,
 * instead of after the whole timeout.
 *
 * @module
 */
import type { Started } from "../control_plane/control_plane_processes.ts";
import { eventually } from "./eventually.ts";

/**
 * {@linkcode eventually} for a component starting: looks every 250 ms until `check` returns true, an exception from
 * it counting as "not yet" (the component does not answer yet); throws at once naming the process of `alive` that
 * exited meanwhile, or naming `what` when `timeoutMs` passes.
 */
export function untilAlive(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean>,
  alive: Started[] = [],
): Promise<void> {
  return eventually(async () => {
    const dead = alive.find((p) => p.exited);
    if (dead) throw new Error(`${what}: ${dead.log.split("/").pop()?.replace(".log", "")} exited`);
    try {
      return await check();
    } catch {
      return false; // not yet
    }
  }, { timeoutMs, intervalMs: 250, what });
}
