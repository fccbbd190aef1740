/**
 * The control API under `/_simulator`, for tests and demos: the whole state (with the data plane's listeners, member
 * health and connection counts read from HAProxy's runtime API at the request, see `data_plane/data_plane_state.ts`), the request log, counters, reset,
 * scripted faults, and changes to servers, settings, zones, tokens, networks and edges. It has no authentication, no
 * rate limit and no faults; each request is logged as operation `control`, and an error is a problem document (400
 * for anything but a {@linkcode ProblemError}).
 *
 * @module
 */
import { type Context, Hono } from "hono";
import * as v from "valibot";
import type { DataPlane } from "../data_plane/data_plane.ts";
import { dataPlaneDocument, decorateEdge, decorateLoadBalancer } from "../data_plane/data_plane_state.ts";
import { FaultSchema } from "../faults.ts";
import { ProblemError } from "../problem.ts";
import { parsed, readJson } from "../request_input.ts";
import { LabelsInput } from "../request_schemas.ts";
import { type Answer, jsonResponse, problemResponse } from "../responses.ts";
import {
  SeedEdgeSchema,
  SeedNetworkSchema,
  SeedServerSchema,
  SeedSettingsSchema,
  SeedTokenSchema,
  SeedZoneSchema,
} from "../seed.ts";
import { ServerOperationSchema, startServerOperation } from "../server_operations.ts";
import type { Simulator } from "../simulator.ts";
import {
  networkDocument,
  operationDocument,
  serverDocument,
  zoneCapabilities,
  zoneDocument,
} from "../world_documents.ts";

const ServerChangeSchema = v.strictObject({
  state: v.optional(v.picklist(["creating", "starting", "started", "stopping", "stopped", "deleting", "error"])),
  hostname: v.optional(v.string()),
  plan: v.optional(v.string()),
  public_ipv4: v.optional(v.nullable(v.string())),
  public_ipv6: v.optional(v.nullable(v.string())),
  ipv6_renumber_available: v.optional(v.boolean()),
  /** Replaces every label, under the API's `Labels` rules (as the console changes them). */
  labels: v.optional(LabelsInput),
  interfaces: v.optional(v.array(v.strictObject({ network_id: v.string(), address: v.optional(v.string()) }))),
});

const ZoneChangeSchema = v.strictObject({
  compute_nodes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  servers: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  storage_backends: v.optional(SeedZoneSchema.entries.storage_backends.wrapped),
});

/** The router of the control API (mounted under `/_simulator`), showing `dataPlane`'s state when one runs. */
export function controlRouter(sim: Simulator, dataPlane?: DataPlane): Hono {
  const router = new Hono();
  const control = (c: Context, run: () => Answer | Promise<Answer>) => {
    return (async () => {
      sim.world.tick();
      const url = new URL(c.req.url);
      try {
        const answer = await run();
        sim.record({ operation: "control", method: c.req.method, path: url.pathname, status: answer.status });
        return jsonResponse(answer);
      } catch (cause) {
        const error = cause instanceof ProblemError ? cause : new ProblemError(400, String((cause as Error).message));
        sim.record({ operation: "control", method: c.req.method, path: url.pathname, status: error.status });
        return problemResponse(error);
      }
    })();
  };
  const body = async <S extends v.GenericSchema>(c: Context, schema: S) => parsed(schema, await readJson(c));

  router.get("/state", (c) =>
    control(c, async () => {
      const view = await dataPlane?.snapshot();
      return {
        status: 200,
        body: {
          settings: sim.world.settings,
          zones: sim.world.listZones().map((z) => ({ ...zoneDocument(z), compute_nodes: z.compute_nodes })),
          networks: [...sim.world.networks.values()].map((n) => networkDocument(n, sim.world.servers.values())),
          servers: [...sim.world.servers.values()].map((s) => serverDocument(s, sim.world.zones)),
          load_balancers: sim.loadBalancers.list({}).map((lb) =>
            decorateLoadBalancer(sim.loadBalancers.document(lb, true), lb, view)
          ),
          edges: sim.edges.list().map((e) => decorateEdge(sim.edges.document(e, true), e, view)),
          data_plane: dataPlaneDocument(view),
        },
      };
    }));
  router.get("/requests", (c) =>
    control(c, () => {
      const operation = c.req.query("operation");
      return { status: 200, body: { items: sim.log.filter((e) => !operation || e.operation === operation) } };
    }));
  router.get("/counters", (c) => control(c, () => ({ status: 200, body: Object.fromEntries(sim.counters) })));
  router.post("/reset", (c) =>
    control(c, async () => {
      const options = (await readJson(c) ?? {}) as { world?: boolean; log?: boolean };
      if (options.world !== false) sim.resetWorld();
      if (options.log !== false) sim.resetLog();
      return { status: 204 };
    }));
  router.post("/faults", (c) =>
    control(c, async () => {
      const input = await readJson(c);
      const list = Array.isArray(input) ? input : [input];
      for (const fault of list) sim.faults.add(parsed(FaultSchema, fault));
      return { status: 201, body: { items: sim.faults.pending() } };
    }));
  router.get("/faults", (c) => control(c, () => ({ status: 200, body: { items: sim.faults.pending() } })));
  router.delete("/faults", (c) =>
    control(c, () => {
      sim.faults.clear();
      return { status: 204 };
    }));
  router.post("/servers", (c) =>
    control(c, async () => ({
      status: 201,
      body: { server: serverDocument(sim.world.addServer(await body(c, SeedServerSchema)), sim.world.zones) },
    })));
  router.patch("/servers/:id", (c) =>
    control(c, async () => {
      const server = sim.world.server(c.req.param("id"));
      const change = await body(c, ServerChangeSchema);
      // First: a refused address (400) leaves the server as it was.
      sim.world.changePublicAddresses(server, change);
      if (change.state !== undefined) server.state = change.state;
      if (change.hostname !== undefined) server.hostname = change.hostname;
      if (change.plan !== undefined) server.plan = change.plan;
      if (change.labels !== undefined) server.labels = { ...change.labels };
      if (change.interfaces !== undefined) sim.world.setInterfaces(server, change.interfaces);
      server.updated_at = sim.world.isoNow();
      return { status: 200, body: { server: serverDocument(server, sim.world.zones) } };
    }));
  // Announces an operation on a server (stop, delete, live migration) that runs for a while before the state changes.
  router.post("/servers/:id/operations", (c) =>
    control(c, async () => {
      const server = sim.world.server(c.req.param("id"));
      const operation = startServerOperation(sim.world, server, await body(c, ServerOperationSchema));
      return {
        status: 201,
        body: { operation: operationDocument(operation), server: serverDocument(server, sim.world.zones) },
      };
    }));
  router.delete("/servers/:id", (c) =>
    control(c, () => {
      sim.world.server(c.req.param("id"));
      sim.world.servers.delete(c.req.param("id"));
      return { status: 204 };
    }));
  router.patch("/settings", (c) =>
    control(c, async () => {
      const change = await body(c, v.partial(SeedSettingsSchema));
      for (const fixed of ["data_plane", "loopback_ipv4_range", "public_ipv4_ranges"] as const) {
        if (
          change[fixed] !== undefined && JSON.stringify(change[fixed]) !== JSON.stringify(sim.world.settings[fixed])
        ) {
          throw new ProblemError(400, `settings.${fixed} is fixed at start: restart the simulator to change it`);
        }
      }
      for (const [key, value] of Object.entries(change)) {
        if (value !== undefined) (sim.world.settings as Record<string, unknown>)[key] = value;
      }
      return { status: 200, body: { settings: sim.world.settings } };
    }));
  router.patch("/zones/:name", (c) =>
    control(c, async () => {
      const zone = sim.world.zone(c.req.param("name"));
      const change = await body(c, ZoneChangeSchema);
      if (change.compute_nodes !== undefined) zone.compute_nodes = change.compute_nodes;
      if (change.servers !== undefined) zone.servers = change.servers;
      if (change.storage_backends !== undefined) zone.storage_backends = [...change.storage_backends];
      return { status: 200, body: { capabilities: zoneCapabilities(zone, sim.world.publicIpv4Free()) } };
    }));
  router.post("/tokens", (c) =>
    control(c, async () => {
      const token = await body(c, SeedTokenSchema);
      sim.world.tokens.set(token.token, { token: token.token, scope: token.scope });
      return { status: 201, body: { prefix: token.token.slice(0, 8), scope: token.scope } };
    }));
  // Revokes a token: from now on every request with it is answered 401, as the real API answers a revoked token.
  router.delete("/tokens/:token", (c) =>
    control(c, () => {
      if (!sim.world.tokens.delete(c.req.param("token"))) throw new ProblemError(404, "no such token");
      return { status: 204 };
    }));
  router.post("/networks", (c) =>
    control(c, async () => ({
      status: 201,
      body: {
        network: networkDocument(sim.world.addNetwork(await body(c, SeedNetworkSchema)), sim.world.servers.values()),
      },
    })));
  router.post("/edges", (c) =>
    control(c, async () => {
      const { id, members, ...rest } = await body(c, SeedEdgeSchema);
      const { edge } = sim.edges.create({ ...rest, members }, { id, ready: true });
      return { status: 201, body: { edge: sim.edges.document(edge, true) } };
    }));
  return router;
}
