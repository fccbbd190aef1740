/**
 * What a server's active operation announces for its node, before the server's state says anything. Ankra Cloud
 * shows a stop, a delete or a live migration as the server's `active_operation` (with the server list, so reading it
 * costs no call) while the server is still `started`:
 *
 * - an active (`pending` or `running`) `server.stop` or `server.delete`: the node is **leaving** — its server is about
 *   to go down, so whatever sends it traffic should stop doing so first;
 * - an active `server.migrate` (a live migration): the server stays up — worth telling, nothing to do;
 * - any other kind (the API's `OperationKind` has ~70, and grows), or an operation that has finished: nothing.
 *
 * Also the Node events that tell it ({@linkcode plannedChangeEvent}). Pure.
 *
 * @module
 */
import type { Server } from "../../cloud/schemas.ts";
import { parseProviderId } from "../provider_id.ts";
import { serverDown } from "./server_state.ts";

/** The operation kinds that announce something, and what. */
const ANNOUNCING = {
  "server.stop": { kind: "leaving", what: "stop", reason: "ServerStopPlanned" },
  "server.delete": { kind: "leaving", what: "delete", reason: "ServerDeletePlanned" },
  "server.migrate": { kind: "migrating", what: "live migration", reason: "ServerMigrating" },
} as const;

/** An operation kind that announces a planned change. */
type AnnouncingKind = keyof typeof ANNOUNCING;

/** A change of a node's server its active operation announces. */
export interface PlannedChange {
  /** `leaving`: a stop or delete, the server is about to go down; `migrating`: a live migration, it stays up. */
  kind: "leaving" | "migrating";
  /** The server. */
  serverId: string;
  /** The operation's id. */
  operationId: string;
  /** `server.stop`, `server.delete` or `server.migrate`. */
  operationKind: AnnouncingKind;
  /** `pending` (waiting to run) or `running`. */
  status: "pending" | "running";
  /** When it started running, else when it was created (RFC 3339, the API's clock). */
  since: string;
}

/** A planned change, with when this controller first saw its operation. */
export interface SeenPlannedChange extends PlannedChange {
  /**
   * When this process first saw the operation (epoch milliseconds, its own clock: no skew against the API's); a
   * restart sees it anew.
   */
  seenAtMs: number;
}

/** What of a server the rule reads. */
type ServerWithOperation = Pick<Server, "id" | "active_operation">;

/** The change `server`'s active operation announces; undefined when it announces none (see the module comment). */
export function plannedChange(server: ServerWithOperation): PlannedChange | undefined {
  const op = server.active_operation;
  if (!op || (op.status !== "pending" && op.status !== "running")) return undefined;
  if (!Object.hasOwn(ANNOUNCING, op.kind)) return undefined;
  // An operation naming another server is not about this one.
  if (op.server_id && op.server_id !== server.id) return undefined;
  const operationKind = op.kind as AnnouncingKind;
  return {
    kind: ANNOUNCING[operationKind].kind,
    serverId: server.id,
    operationId: op.id,
    operationKind,
    status: op.status,
    since: op.started_at ?? op.created_at,
  };
}

/**
 * The change announced for a node's server, found by its providerID in `servers` (the shared server list); undefined
 * for a node without an Ankra providerID, a server the list does not hold, or no change.
 */
export function plannedChangeOfNode(
  node: { providerID?: string },
  servers: { server(id: string): ServerWithOperation | undefined },
): PlannedChange | undefined {
  const id = parseProviderId(node.providerID ?? "")?.serverId;
  const server = id === undefined ? undefined : servers.server(id);
  return server && plannedChange(server);
}

/**
 * True when the node on `server` leaves whatever it serves: its stop or delete is announced ({@linkcode plannedChange}
 * `leaving`), or the server is already down ({@linkcode serverDown}: announced or not, done or not). The controller's
 * Services and the doctor's count of serving nodes read this one rule.
 */
export function serverLeaving(server: ServerWithOperation & Pick<Server, "state">): boolean {
  return plannedChange(server)?.kind === "leaving" || serverDown(server.state);
}

/**
 * Short words for `change`, for a message that names why a node is treated as it is: `leaving: planned stop
 * (operation op-1)`, `leaving: planned delete (operation op-1)`, `live migration (operation op-1)`.
 */
export function describePlannedChange(change: PlannedChange): string {
  const { what } = ANNOUNCING[change.operationKind];
  const words = change.kind === "leaving" ? `leaving: planned ${what}` : what;
  return `${words} (operation ${change.operationId})`;
}

/** The Normal event on the Node that tells `change` has begun: `ServerStopPlanned`, `ServerDeletePlanned`, `ServerMigrating`. */
export function plannedChangeEvent(change: PlannedChange): { reason: string; message: string } {
  const { reason } = ANNOUNCING[change.operationKind];
  const operation = `operation ${change.operationId}, ${change.operationKind}, ${change.status} since ${change.since}`;
  const message = {
    "server.stop": `Ankra Cloud is about to stop server ${change.serverId} (${operation}): the node will shut down`,
    "server.delete": `Ankra Cloud is about to delete server ${change.serverId} (${operation}): the node will go away`,
    "server.migrate": `Ankra Cloud is live-migrating server ${change.serverId} (${operation}): the node stays up`,
  }[change.operationKind];
  return { reason, message };
}
