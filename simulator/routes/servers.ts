/**
 * The servers of the customer API: `list_servers` (oldest first, filtered by `hostname` and `label`),
 * `get_server` and `list_server_interfaces`.
 *
 * @module
 */
import { Hono } from "hono";
import { addOperation } from "../operation_route.ts";
import { oldestFirstKey, paginate, parseLimit } from "../pagination.ts";
import { badRequest } from "../problem.ts";
import { parseLabels } from "../request_input.ts";
import type { Simulator } from "../simulator.ts";
import { serverDocument } from "../world_documents.ts";

/** The router of `/servers` (mounted under `/v1`). */
export function serversRouter(sim: Simulator): Hono {
  const router = new Hono();
  const world = () => sim.world;
  addOperation(router, sim, "GET", "/servers", "list_servers", ({ query, queries }) => {
    const limit = parseLimit(query("limit"));
    const labels = parseLabels(queries("label"));
    const hostname = query("hostname");
    if (hostname !== undefined && hostname.length > 253) throw badRequest("query hostname: at most 253 characters");
    const items = [...world().servers.values()]
      .filter((s) => hostname === undefined || s.hostname === hostname)
      .filter((s) => Object.entries(labels).every(([k, value]) => s.labels[k] === value))
      .sort((a, b) => a.seq - b.seq);
    const page = paginate(items, {
      list: "servers",
      keyOf: (s) => oldestFirstKey(s.seq),
      cursor: query("cursor"),
      limit,
    });
    return {
      status: 200,
      body: { items: page.items.map((s) => serverDocument(s, world().zones)), next_cursor: page.next_cursor },
    };
  });
  addOperation(router, sim, "GET", "/servers/:id", "get_server", ({ params }) => ({
    status: 200,
    body: { server: serverDocument(world().server(params.id), world().zones) },
  }));
  addOperation(router, sim, "GET", "/servers/:id/networks", "list_server_interfaces", ({ params }) => ({
    status: 200,
    body: { items: world().server(params.id).interfaces.map((i) => ({ ...i })), next_cursor: null },
  }));
  return router;
}
