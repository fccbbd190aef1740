/**
 * What becomes of the connections to a member that leaves a backend. HAProxy applies a new configuration by a reload:
 * the old process keeps serving the connections it holds, and — where `hard-stop-after` is set — is stopped that long
 * after the reload, ending them. The API document says neither whether nor after how long Ankra's VMs do so. So the
 * simulator keeps them (the default, HAProxy's own) unless the seed sets `reload_hard_stop_after_ms`: then the
 * connections to a member that is no longer in any backend end that long after the change that removed it. A member
 * that stays with weight 0 or `enabled: false` keeps its connections either way (it takes no new ones).
 *
 * @module
 */
import type { Socket } from "node:net";

/** The connections of each member (by its key, `backend_view.ts`), and the ends scheduled for removed ones. */
export class MemberSessions {
  readonly #sockets = new Map<string, Set<Socket>>();
  readonly #ending = new Map<string, ReturnType<typeof setTimeout>>();

  /** Remembers `socket` as a connection to member `key` (forgotten when it closes). */
  track(key: string, socket: Socket): void {
    let sockets = this.#sockets.get(key);
    if (!sockets) this.#sockets.set(key, sockets = new Set());
    sockets.add(socket);
    socket.once("close", () => {
      sockets.delete(socket);
      if (sockets.size === 0 && this.#sockets.get(key) === sockets) this.#sockets.delete(key);
    });
  }

  /**
   * Follows the members in backends now (`present`): with `hardStopAfterMs`, the connections of a member no longer
   * present end that long after now (unless it comes back before); without, they run until they close.
   */
  follow(present: ReadonlySet<string>, hardStopAfterMs: number | undefined): void {
    for (const [key, timer] of this.#ending) {
      if (present.has(key)) {
        clearTimeout(timer);
        this.#ending.delete(key);
      }
    }
    if (hardStopAfterMs === undefined) return;
    for (const key of this.#sockets.keys()) {
      if (present.has(key) || this.#ending.has(key)) continue;
      this.#ending.set(
        key,
        setTimeout(() => {
          this.#ending.delete(key);
          for (const socket of this.#sockets.get(key) ?? []) socket.destroy();
          this.#sockets.delete(key);
        }, hardStopAfterMs),
      );
    }
  }

  /** Cancels every scheduled end (the data plane stops; its connections are destroyed by it). */
  stop(): void {
    for (const timer of this.#ending.values()) clearTimeout(timer);
    this.#ending.clear();
  }
}
