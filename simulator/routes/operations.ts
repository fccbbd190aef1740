/**
 * The operations of the customer API: `get_operation` (the state of a create, sync, delete, stop or migration, with
 * its events) and `list_operations`, newest first: filtered by `status`, or by `active` (pending or running; not
 * combinable with `status`), and by `kind`; `limit` 1–200 (default 50), cursors as every list.
 *
 * @module
 */
import { Hono } from "hono";
import { isActive } from "../operation_clock.ts";
import { addOperation } from "../operation_route.ts";
import { newestFirstKey, paginate, parseLimit } from "../pagination.ts";
import { badRequest, ProblemError } from "../problem.ts";
import type { Simulator } from "../simulator.ts";
import { operationDocument } from "../world_documents.ts";
import type { OperationState } from "../world_state.ts";

const STATUSES = ["pending", "running", "succeeded", "failed", "cancelled"];
/** An `OperationKind`'s shape: the document's enum has ~70 (`server.stop`, `load_balancer.create`, …). */
const KIND = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/** The router of `/operations` (mounted under `/v1`). */
export function operationsRouter(sim: Simulator): Hono {
  const router = new Hono();
  addOperation(router, sim, "GET", "/operations", "list_operations", ({ query }) => {
    const limit = parseLimit(query("limit"), 200);
    const status = query("status");
    const active = query("active");
    const kind = query("kind");
    if (status !== undefined && !STATUSES.includes(status)) {
      throw badRequest(`query status: must be one of ${STATUSES.join(", ")}`);
    }
    if (active !== undefined && active !== "true" && active !== "false") {
      throw badRequest("query active: must be true or false");
    }
    if (status !== undefined && active === "true") {
      throw badRequest("query status: cannot be combined with active=true");
    }
    if (kind !== undefined && !KIND.test(kind)) {
      throw badRequest(`query kind: ${JSON.stringify(kind)} is not an operation kind (such as server.stop)`);
    }
    const wanted = (op: OperationState) =>
      (status === undefined || op.status === status) &&
      (active === undefined || isActive(op) === (active === "true")) &&
      (kind === undefined || op.kind === kind);
    const items = [...sim.world.operations.values()].filter(wanted).sort((a, b) => b.seq - a.seq);
    const page = paginate(items, {
      list: "operations",
      keyOf: (op) => newestFirstKey(op.seq),
      cursor: query("cursor"),
      limit,
    });
    return {
      status: 200,
      body: { items: page.items.map((op) => operationDocument(op)), next_cursor: page.next_cursor },
    };
  });
  addOperation(router, sim, "GET", "/operations/:id", "get_operation", ({ params }) => {
    const op = sim.world.operations.get(params.id);
    if (!op) throw new ProblemError(404, `operation ${params.id} was not found`);
    return { status: 200, body: { operation: operationDocument(op, true) } };
  });
  return router;
}
