/**
 * Operations on a server as Ankra Cloud runs them: `server.stop`, `server.delete` and `server.migrate` (a live
 * migration). From the moment one is announced it is the server's `active_operation` (in `get_server`,
 * `list_servers` and `list_operations?active=true`), `pending` for a while when asked to wait, then `running`; the
 * server's state changes only once it has run its duration:
 *
 * - `server.stop`: `started` for the duration, then `stopping` for the transition, then `stopped`; succeeded.
 * - `server.delete`: unchanged for the duration, then `deleting` for the transition, then gone (404); succeeded.
 * - `server.migrate`: `started` throughout; succeeded after the duration (only a `started` server, and only in a
 *   zone with `live_migration`: two compute nodes and Ankra Storage).
 * - Any of them made to fail: `failed` after the duration with an error saying so, the server as it was.
 *
 * A server has one operation at a time (409 naming the one it has). The API document offers no route to start these
 * with an API token (the slice has none); the control API starts them, as the console or the platform would.
 *
 * @module
 */
import * as v from "valibot";
import { isActive } from "./operation_clock.ts";
import { conflict } from "./problem.ts";
import type { World } from "./world.ts";
import { zoneHasLiveMigration } from "./world_documents.ts";
import type { OperationState, ServerState } from "./world_state.ts";

const durationMs = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(86_400_000));

/** The control API's request to start an operation on a server. */
export const ServerOperationSchema = v.strictObject({
  kind: v.picklist(["server.stop", "server.delete", "server.migrate"]),
  /** How long it runs before the server's state changes (default `settings.server_operation_delay_ms`). */
  duration_ms: v.optional(durationMs),
  /** How long the server is `stopping` / `deleting` (default `settings.server_transition_delay_ms`). */
  transition_ms: v.optional(durationMs),
  /** How long it waits `pending` before it runs (default 0). */
  pending_ms: v.optional(durationMs),
  /** `failed`: it fails after its duration, and the server stays as it was. */
  outcome: v.optional(v.picklist(["succeeded", "failed"]), "succeeded"),
});

/** A parsed request of {@linkcode ServerOperationSchema}. */
type ServerOperationRequest = v.InferOutput<typeof ServerOperationSchema>;

/** The error a failed operation of each kind ends with. */
const FAILURES: Record<ServerOperationRequest["kind"], string> = {
  "server.stop": "the guest did not shut down; the server keeps running",
  "server.delete": "the server could not be deleted; it keeps running",
  "server.migrate": "the live migration did not converge; the server stays on its host",
};

/** Starts `request`'s operation on `server` (409 when the server cannot have it now); returns the operation. */
export function startServerOperation(
  world: World,
  server: ServerState,
  request: ServerOperationRequest,
): OperationState {
  refuseUnlessPossible(world, server, request.kind);
  const duration = request.duration_ms ?? world.settings.server_operation_delay_ms;
  const transition = request.transition_ms ?? world.settings.server_transition_delay_ms;
  const here = () => world.servers.get(server.id) === server;
  const setState = (state: string) => (at: number) => {
    if (!here()) return;
    server.state = state;
    server.updated_at = new Date(at).toISOString();
  };
  const failed = request.outcome === "failed";
  let steps: { name: string; afterMs: number; apply?: (at: number) => void }[];
  let finalChange: ((at: number) => void) | undefined;
  let runsFor = duration;
  if (request.kind === "server.migrate") {
    steps = [{ name: "transfer_memory", afterMs: 0 }];
  } else if (failed) {
    steps = [{ name: "scheduled", afterMs: 0 }];
  } else if (request.kind === "server.stop") {
    steps = [{ name: "scheduled", afterMs: 0 }, { name: "power_off", afterMs: duration, apply: setState("stopping") }];
    finalChange = setState("stopped");
    runsFor = duration + transition;
  } else {
    steps = [{ name: "scheduled", afterMs: 0 }, { name: "destroy", afterMs: duration, apply: setState("deleting") }];
    finalChange = () => {
      if (here()) world.servers.delete(server.id);
    };
    runsFor = duration + transition;
  }
  const operation: OperationState = world.startOperation(request.kind, {
    serverId: server.id,
    delayMs: runsFor,
    pendingMs: request.pending_ms,
    steps,
    failWith: failed ? FAILURES[request.kind] : undefined,
    onFinish: (at) => {
      if (server.active_operation === operation) server.active_operation = null;
      if (!failed) finalChange?.(at);
    },
  });
  server.active_operation = operation;
  return operation;
}

/** A 409 naming why `server` cannot have an operation of `kind` now; nothing when it can. */
function refuseUnlessPossible(world: World, server: ServerState, kind: ServerOperationRequest["kind"]): void {
  const current = server.active_operation;
  if (current && isActive(current)) {
    throw conflict(
      `server ${server.id} already has operation ${current.id} (${current.kind}, ${current.status}): wait until it ` +
        "has finished",
    );
  }
  if (server.state === "deleting") throw conflict(`server ${server.id} is being deleted`);
  if (kind === "server.stop" && ["stopping", "stopped", "creating"].includes(server.state)) {
    throw conflict(`server ${server.id} is ${server.state}: only a running server can be stopped`);
  }
  if (kind === "server.migrate") {
    if (server.state !== "started") {
      throw conflict(`server ${server.id} is ${server.state}: only a started server can be live-migrated`);
    }
    const zone = world.zone(server.zone);
    if (!zoneHasLiveMigration(zone)) {
      throw conflict(
        `zone ${zone.name} cannot live-migrate servers: live_migration is missing (it needs 2 compute nodes and ` +
          "Ankra Storage, ceph)",
      );
    }
  }
}
