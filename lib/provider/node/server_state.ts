/**
 * What a server's state means for its node, as the Go controller's state table says.
 *
 * @module
 */

/** The node-relevant meaning of a server state. */
interface ServerPresence {
  /** False when the server counts as gone (`deleting`). */
  exists: boolean;
  /** True when the server is shut down (`stopping`, `stopped`). */
  shutdown: boolean;
}

/** Exists/shutdown of a server state; unknown states count as existing and running. */
export function serverPresence(state: string): ServerPresence {
  switch (state) {
    case "deleting":
      return { exists: false, shutdown: false };
    case "stopping":
    case "stopped":
      return { exists: true, shutdown: true };
    default:
      return { exists: true, shutdown: false };
  }
}

/** True when a server in `state` answers nothing: shut down (`stopping`, `stopped`) or being deleted (`deleting`). */
export function serverDown(state: string): boolean {
  const presence = serverPresence(state);
  return presence.shutdown || !presence.exists;
}
