/**
 * The zones of the customer API: `list_zones` and `get_zone_capabilities`.
 *
 * @module
 */
import { Hono } from "hono";
import { addOperation } from "../operation_route.ts";
import type { Simulator } from "../simulator.ts";
import { zoneCapabilities, zoneDocument } from "../world_documents.ts";

/** The router of `/zones` (mounted under `/v1`). */
export function zonesRouter(sim: Simulator): Hono {
  const router = new Hono();
  const world = () => sim.world;
  addOperation(router, sim, "GET", "/zones", "list_zones", () => ({
    status: 200,
    body: { items: world().listZones().map((z) => zoneDocument(z)), next_cursor: null },
  }));
  addOperation(router, sim, "GET", "/zones/:zone/capabilities", "get_zone_capabilities", ({ params }) => ({
    status: 200,
    body: zoneCapabilities(world().zone(params.zone), world().publicIpv4Free()),
  }));
  return router;
}
