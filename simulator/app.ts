/**
 * The simulator's HTTP surface (hono): the customer API under `/v1` with the real API's authentication, scopes,
 * rate limits, idempotency, envelopes and problem documents (one router per resource under `simulator/routes/`, each
 * operation answered through the pipeline of `simulator/operation_route.ts`); and a control API under `/_simulator`
 * for tests and demos (servers, settings, faults, request log, counters, reset). The control API has no
 * authentication: bind the simulator to loopback. After every request the data plane, if any, follows the world.
 *
 * @module
 */
import { Hono } from "hono";
import { ProblemError } from "./problem.ts";
import { problemResponse } from "./responses.ts";
import { controlRouter } from "./routes/control.ts";
import { edgesRouter } from "./routes/edges.ts";
import { loadBalancersRouter } from "./routes/load_balancers.ts";
import { networksRouter } from "./routes/networks.ts";
import { operationsRouter } from "./routes/operations.ts";
import { quotasRouter } from "./routes/quotas.ts";
import { serversRouter } from "./routes/servers.ts";
import { zonesRouter } from "./routes/zones.ts";
import type { Simulator } from "./simulator.ts";
import type { DataPlane } from "./data_plane/data_plane.ts";

/**
 * Builds the hono app for `sim` (and its data plane, woken after every request, when one runs): the routers mounted,
 * 404 for any other route, 500 for an unexpected error.
 */
export function simulatorApp(sim: Simulator, options: { dataPlane?: DataPlane } = {}): Hono {
  const { dataPlane } = options;
  const app = new Hono();
  app.use(async (_c, next) => {
    await next();
    dataPlane?.wake();
  });
  const customerApi = [
    serversRouter,
    zonesRouter,
    networksRouter,
    loadBalancersRouter,
    edgesRouter,
    operationsRouter,
    quotasRouter,
  ];
  for (const router of customerApi) app.route("/v1", router(sim));
  app.route("/_simulator", controlRouter(sim, dataPlane));

  app.notFound((c) => {
    const error = new ProblemError(404, `no route ${c.req.method} ${new URL(c.req.url).pathname}`);
    sim.record({ operation: "unknown", method: c.req.method, path: new URL(c.req.url).pathname, status: 404 });
    return problemResponse(error);
  });
  app.onError((err) => {
    if (err instanceof ProblemError) return problemResponse(err);
    return problemResponse(new ProblemError(500, `simulator error: ${err.message}`));
  });
  return app;
}
