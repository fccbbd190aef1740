/**
 * The account's quotas in the customer API: `get_quotas`, fixed limits and the usage the world implies.
 *
 * @module
 */
import { Hono } from "hono";
import { addOperation } from "../operation_route.ts";
import type { Simulator } from "../simulator.ts";

/** The router of `/quotas` (mounted under `/v1`). */
export function quotasRouter(sim: Simulator): Hono {
  const router = new Hono();
  addOperation(router, sim, "GET", "/quotas", "get_quotas", () => {
    const servers = sim.world.servers.size;
    return {
      status: 200,
      body: {
        limits: {
          servers: 50,
          cores: 200,
          storage_gibibytes: 4000,
          floating_ips: 10,
          routers: 5,
          private_networks: 10,
        },
        usage: {
          servers,
          cores: servers * 2,
          storage_gibibytes: servers * 40,
          floating_ips: 0,
          routers: 0,
          private_networks: sim.world.networks.size,
        },
      },
    };
  });
  return router;
}
