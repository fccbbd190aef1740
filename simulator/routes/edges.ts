/**
 * The edges of the customer API: `list_edges` (newest first), `get_edge`, `create_edge` (a keyed create),
 * `update_edge` and `delete_edge`; changes answer 202 with the operation they start.
 *
 * @module
 */
import { Hono } from "hono";
import { addOperation } from "../operation_route.ts";
import { newestFirstKey, paginate, parseLimit } from "../pagination.ts";
import { parsed } from "../request_input.ts";
import { CreateEdgeBody, UpdateEdgeBody } from "../request_schemas.ts";
import type { Simulator } from "../simulator.ts";
import { operationDocument } from "../world_documents.ts";

/** The router of `/edges` (mounted under `/v1`). */
export function edgesRouter(sim: Simulator): Hono {
  const router = new Hono();
  const edges = () => sim.edges;
  addOperation(router, sim, "GET", "/edges", "list_edges", ({ query }) => {
    const limit = parseLimit(query("limit"));
    const page = paginate(edges().list(), {
      list: "edges",
      keyOf: (e) => newestFirstKey(e.seq),
      cursor: query("cursor"),
      limit,
    });
    return {
      status: 200,
      body: { items: page.items.map((e) => edges().document(e, false)), next_cursor: page.next_cursor },
    };
  });
  addOperation(router, sim, "GET", "/edges/:id", "get_edge", ({ params }) => ({
    status: 200,
    body: { edge: edges().document(edges().get(params.id), true) },
  }));
  addOperation(router, sim, "PATCH", "/edges/:id", "update_edge", ({ params, body }) => {
    const { edge, operation } = edges().update(params.id, parsed(UpdateEdgeBody, body));
    return {
      status: 202,
      body: { edge: edges().document(edge, true), operation: operationDocument(operation) },
    };
  });
  addOperation(router, sim, "POST", "/edges", "create_edge", ({ body }) => {
    const { edge, operation } = edges().create(parsed(CreateEdgeBody, body));
    return {
      status: 202,
      body: { edge: edges().document(edge, true), operation: operationDocument(operation) },
    };
  });
  addOperation(router, sim, "DELETE", "/edges/:id", "delete_edge", ({ params }) => ({
    status: 202,
    body: { operation: operationDocument(edges().delete(params.id)) },
  }));
  return router;
}
