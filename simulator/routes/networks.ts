/**
 * The private networks of the customer API: `list_networks` (newest first) and `get_network`.
 *
 * @module
 */
import { Hono } from "hono";
import { addOperation } from "../operation_route.ts";
import { newestFirstKey, paginate, parseLimit } from "../pagination.ts";
import type { Simulator } from "../simulator.ts";
import { networkDocument } from "../world_documents.ts";

/** The router of `/networks` (mounted under `/v1`). */
export function networksRouter(sim: Simulator): Hono {
  const router = new Hono();
  const world = () => sim.world;
  addOperation(router, sim, "GET", "/networks", "list_networks", ({ query }) => {
    const limit = parseLimit(query("limit"));
    const items = [...world().networks.values()].sort((a, b) => b.seq - a.seq);
    const page = paginate(items, {
      list: "networks",
      keyOf: (n) => newestFirstKey(n.seq),
      cursor: query("cursor"),
      limit,
    });
    return {
      status: 200,
      body: { items: page.items.map((n) => networkDocument(n)), next_cursor: page.next_cursor },
    };
  });
  addOperation(router, sim, "GET", "/networks/:id", "get_network", ({ params }) => ({
    status: 200,
    body: { network: networkDocument(world().network(params.id), world().servers.values()) },
  }));
  return router;
}
