/**
 * The operations of the customer API: `get_operation`, the state of a create, sync or delete a change started.
 *
 * @module
 */
import { Hono } from "hono";
import { addOperation } from "../operation_route.ts";
import { ProblemError } from "../problem.ts";
import type { Simulator } from "../simulator.ts";
import { operationDocument } from "../world_documents.ts";

/** The router of `/operations` (mounted under `/v1`). */
export function operationsRouter(sim: Simulator): Hono {
  const router = new Hono();
  addOperation(router, sim, "GET", "/operations/:id", "get_operation", ({ params }) => {
    const op = sim.world.operations.get(params.id);
    if (!op) throw new ProblemError(404, `operation ${params.id} was not found`);
    return { status: 200, body: { operation: operationDocument(op, true) } };
  });
  return router;
}
