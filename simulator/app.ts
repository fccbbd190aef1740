/**
 * The simulator's HTTP surface (hono): the customer API under `/v1` with the real API's authentication, scopes,
 * rate limits, idempotency, envelopes and problem documents; and a control API under `/_simulator` for tests and
 * demos (servers, settings, faults, request log, counters, reset). The control API has no authentication: bind the
 * simulator to loopback.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import * as v from "valibot";
import { abortableSleep } from "../lib/runtime/abort.ts";
import { FaultSchema } from "./faults.ts";
import { paginate, parseLimit } from "./pagination.ts";
import { badRequest, ProblemError } from "./problem.ts";
import {
  CreateBackendBody,
  CreateEdgeBody,
  CreateFrontendBody,
  CreateLoadBalancerBody,
  MemberInput,
  parseBody,
  ReplaceMembersBody,
  UpdateBackendBody,
  UpdateEdgeBody,
  UpdateLoadBalancerBody,
  UpdateMemberBody,
} from "./request_schemas.ts";
import { SeedEdgeSchema, SeedNetworkSchema, SeedServerSchema, SeedSettingsSchema, SeedTokenSchema } from "./seed.ts";
import type { Simulator } from "./simulator.ts";

/** What a handler returns. */
interface Answer {
  status: number;
  body?: unknown;
}

/** What a handler gets. */
interface HandlerContext {
  params: Record<string, string>;
  query: (name: string) => string | undefined;
  queries: (name: string) => string[];
  body: unknown;
}

type Handler = (ctx: HandlerContext) => Answer;

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const KEYED_CREATES = new Set(["create_load_balancer", "create_edge"]);

function problemResponse(error: ProblemError, headers: Record<string, string> = {}): Response {
  const extra: Record<string, string> = { ...headers, "content-type": "application/problem+json" };
  if (error.retryAfterSeconds !== undefined) extra["retry-after"] = String(error.retryAfterSeconds);
  return new Response(JSON.stringify(error.toProblem()), { status: error.status, headers: extra });
}

function jsonResponse(answer: Answer, headers: Record<string, string> = {}): Response {
  if (answer.body === undefined || answer.status === 204) return new Response(null, { status: answer.status, headers });
  return new Response(JSON.stringify(answer.body), {
    status: answer.status,
    headers: { ...headers, "content-type": "application/json" },
  });
}

function droppedResponse(status: number): Response {
  // Headers go out, then the body stream fails: the client sees the connection break mid-answer.
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"partial":'));
      controller.error(new Error("connection dropped by a simulator fault"));
    },
  });
  return new Response(body, { status, headers: { "content-type": "application/json" } });
}

function corruptShape(body: unknown): unknown {
  if (body && typeof body === "object" && !Array.isArray(body)) {
    const copy: Record<string, unknown> = { ...body as Record<string, unknown> };
    const key = Object.keys(copy)[0];
    if (key !== undefined) {
      const inner = copy[key];
      if (inner && typeof inner === "object" && !Array.isArray(inner)) {
        const innerCopy = { ...inner as Record<string, unknown> };
        const innerKey = "id" in innerCopy ? "id" : Object.keys(innerCopy)[0];
        innerCopy[innerKey] = 12345;
        copy[key] = innerCopy;
      } else {
        copy[key] = 12345;
      }
    }
    return copy;
  }
  return 12345;
}

/** Gives one item of a list answer a field of the wrong type (keeping its `id`, so a client can name it). */
function corruptItem(body: unknown, index: number): unknown {
  const list = body as { items?: unknown[] } | null;
  if (!list || !Array.isArray(list.items) || list.items.length === 0) return corruptShape(body);
  const items = [...list.items];
  const at = Math.min(index, items.length - 1);
  const item = { ...items[at] as Record<string, unknown> };
  const field = ["hostname", "name", "state"].find((k) => k in item) ??
    Object.keys(item).find((k) => k !== "id") ?? "id";
  item[field] = 12345;
  items[at] = item;
  return { ...list, items };
}

function parseLabels(values: string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const value of values) {
    const at = value.indexOf("=");
    if (at <= 0) throw badRequest(`query label: "${value}" must be key=value`);
    labels[value.slice(0, at)] = value.slice(at + 1);
  }
  return labels;
}

function parsed<S extends v.GenericSchema>(schema: S, body: unknown): v.InferOutput<S> {
  const result = parseBody(schema, body);
  if (!result.ok) throw result.error;
  return result.value;
}

async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest("the body is not JSON");
  }
}

function fingerprint(method: string, path: string, body: unknown): string {
  return `${method} ${path} ${JSON.stringify(body ?? null)}`;
}

/** Builds the hono app for `sim`. */
export function simulatorApp(sim: Simulator): Hono {
  const app = new Hono();

  function route(
    method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
    path: string,
    operation: string,
    handler: Handler,
  ) {
    app.on(method, path, async (c) => {
      sim.world.tick();
      const url = new URL(c.req.url);
      const logged = { operation, method, path: url.pathname + url.search, userAgent: c.req.header("user-agent") };
      const auth = c.req.header("authorization") ?? "";
      const token = /^Bearer (\S+)$/.exec(auth)?.[1];
      const tokenState = token ? sim.world.tokens.get(token) : undefined;
      if (!tokenState) {
        sim.record({ ...logged, status: 401 });
        return problemResponse(new ProblemError(401, "the request needs a valid API token"));
      }
      const tokenPrefix = tokenState.token.slice(0, 8);
      const limit = sim.rateLimiter.take(tokenState.token);
      const rateHeaders = limit.headers;
      if (!limit.allowed) {
        sim.record({ ...logged, status: 429, tokenPrefix });
        return problemResponse(
          new ProblemError(429, "too many requests for this credential", {
            retryAfterSeconds: limit.retryAfterSeconds,
          }),
          rateHeaders,
        );
      }
      const scopes = tokenState.scope === "read_write" ? ["read", "operate"] : tokenState.scope.split(",");
      if (UNSAFE.has(method) && !scopes.includes("operate") && !scopes.includes("billing.manage")) {
        sim.record({ ...logged, status: 403, tokenPrefix });
        return problemResponse(new ProblemError(403, "this API token is read-only"), rateHeaders);
      }
      const fault = sim.faults.take(operation);
      const faultName = fault ? JSON.stringify(fault) : undefined;
      const idempotencyKey = c.req.header("idempotency-key");
      const entry = { ...logged, tokenPrefix, idempotencyKey, fault: faultName };
      if (fault?.hang) {
        sim.record({ ...entry, status: 0 });
        // Held until the simulator stops; the client gives up on its own timeout.
        await new Promise<void>((resolve) => {
          if (sim.shutdown.signal.aborted) return resolve();
          sim.shutdown.signal.addEventListener("abort", () => resolve(), { once: true });
        });
        return droppedResponse(504);
      }
      const phase = fault?.phase ?? (fault?.drop || fault?.forget_answer ? "after" : "before");
      if (fault && phase === "before") {
        if (fault.status) {
          sim.record({ ...entry, status: fault.status });
          return problemResponse(
            new ProblemError(fault.status, fault.detail ?? "a scripted simulator fault", {
              reason: fault.reason,
              retryAfterSeconds: fault.retry_after,
            }),
            rateHeaders,
          );
        }
        if (fault.malformed === "json") {
          sim.record({ ...entry, status: 200 });
          return new Response("{ this is not json", { status: 200, headers: rateHeaders });
        }
        if (fault.drop) {
          sim.record({ ...entry, status: 0 });
          return droppedResponse(200);
        }
      }
      let answer: Answer;
      let replayed = false;
      const keyed = KEYED_CREATES.has(operation) && idempotencyKey !== undefined;
      try {
        const body = UNSAFE.has(method) ? await readJson(c) : undefined;
        if (keyed) {
          const decision = sim.idempotency.begin(operation, idempotencyKey!, fingerprint(method, url.pathname, body));
          if (decision.kind === "replay") {
            replayed = true;
            answer = { status: decision.status, body: decision.body };
          }
        }
        // Latency is spent after a keyed request is registered: a slow create is "in progress".
        if (fault?.latency_ms) await abortableSleep(fault.latency_ms, sim.shutdown.signal).catch(() => {});
        answer ??= handler({
          params: c.req.param() as Record<string, string>,
          query: (name) => c.req.query(name),
          queries: (name) => c.req.queries(name) ?? [],
          body,
        });
      } catch (cause) {
        if (!(cause instanceof ProblemError)) throw cause;
        if (
          keyed && !replayed &&
          ![
            "idempotency_key_in_progress",
            "idempotency_key_outcome_unknown",
            "idempotency_key_answer_not_stored",
            "idempotency_key_reused",
          ].includes(cause.reason ?? "") &&
          cause.message !== "header Idempotency-Key: must be 1-255 visible ASCII characters"
        ) {
          sim.idempotency.finish(operation, idempotencyKey!, { status: cause.status, body: cause.toProblem() });
        }
        sim.record({ ...entry, status: cause.status });
        return problemResponse(cause, rateHeaders);
      }
      const afterStatus = fault && phase === "after" ? fault.status : undefined;
      if (keyed && !replayed) {
        sim.idempotency.finish(operation, idempotencyKey!, {
          status: afterStatus ?? answer.status,
          body: answer.body,
          keepAnswer: !fault?.forget_answer,
        });
      }
      const headers: Record<string, string> = { ...rateHeaders };
      if (replayed) headers["idempotent-replayed"] = "true";
      if (fault && phase === "after") {
        if (afterStatus) {
          sim.record({ ...entry, status: afterStatus });
          return problemResponse(
            new ProblemError(afterStatus, fault.detail ?? "a scripted simulator fault", {
              reason: fault.reason,
              retryAfterSeconds: fault.retry_after,
            }),
            rateHeaders,
          );
        }
        if (fault.drop) {
          sim.record({ ...entry, status: 0 });
          return droppedResponse(answer.status);
        }
        if (fault.malformed === "json") {
          sim.record({ ...entry, status: answer.status });
          return new Response("{ this is not json", { status: answer.status, headers });
        }
      }
      if (fault?.malformed === "shape") answer = { status: answer.status, body: corruptShape(answer.body) };
      if (fault?.malformed === "item") {
        answer = { status: answer.status, body: corruptItem(answer.body, fault.item_index ?? 0) };
      }
      sim.record({ ...entry, status: answer.status, replayed: replayed || undefined });
      return jsonResponse(answer, headers);
    });
  }

  const world = () => sim.world;
  const lbs = () => sim.loadBalancers;
  const edges = () => sim.edges;

  // --- servers ---------------------------------------------------------------------------------------------------
  route("GET", "/v1/servers", "list_servers", ({ query, queries }) => {
    const limit = parseLimit(query("limit"));
    const labels = parseLabels(queries("label"));
    const hostname = query("hostname");
    if (hostname !== undefined && hostname.length > 253) badRequestThrow("query hostname: at most 253 characters");
    const items = [...world().servers.values()]
      .filter((s) => hostname === undefined || s.hostname === hostname)
      .filter((s) => Object.entries(labels).every(([k, value]) => s.labels[k] === value))
      .sort((a, b) => a.seq - b.seq);
    const page = paginate(items, {
      list: "servers",
      keyOf: (s) => String(s.seq).padStart(13, "0"),
      cursor: query("cursor"),
      limit,
    });
    return {
      status: 200,
      body: { items: page.items.map((s) => world().serverDocument(s)), next_cursor: page.next_cursor },
    };
  });
  route("GET", "/v1/servers/:id", "get_server", ({ params }) => ({
    status: 200,
    body: { server: world().serverDocument(world().server(params.id)) },
  }));
  route("GET", "/v1/servers/:id/networks", "list_server_interfaces", ({ params }) => ({
    status: 200,
    body: { items: world().server(params.id).interfaces.map((i) => ({ ...i })), next_cursor: null },
  }));

  // --- zones and networks ----------------------------------------------------------------------------------------
  route("GET", "/v1/zones", "list_zones", () => ({
    status: 200,
    body: { items: world().listZones().map((z) => world().zoneDocument(z)), next_cursor: null },
  }));
  route("GET", "/v1/zones/:zone/capabilities", "get_zone_capabilities", ({ params }) => ({
    status: 200,
    body: world().capabilities(world().zone(params.zone)),
  }));
  route("GET", "/v1/networks", "list_networks", ({ query }) => {
    const limit = parseLimit(query("limit"));
    const items = [...world().networks.values()].sort((a, b) => b.seq - a.seq);
    const page = paginate(items, {
      list: "networks",
      keyOf: (n) => String(1e12 - n.seq).padStart(13, "0"),
      cursor: query("cursor"),
      limit,
    });
    return {
      status: 200,
      body: { items: page.items.map((n) => world().networkDocument(n, false)), next_cursor: page.next_cursor },
    };
  });
  route("GET", "/v1/networks/:id", "get_network", ({ params }) => ({
    status: 200,
    body: { network: world().networkDocument(world().network(params.id), true) },
  }));

  // --- load balancers --------------------------------------------------------------------------------------------
  const newestFirstKey = (seq: number) => String(1e12 - seq).padStart(13, "0");
  route("GET", "/v1/load-balancers", "list_load_balancers", ({ query, queries }) => {
    const limit = parseLimit(query("limit"));
    const items = lbs().list(parseLabels(queries("label")));
    const page = paginate(items, {
      list: "load-balancers",
      keyOf: (lb) => newestFirstKey(lb.seq),
      cursor: query("cursor"),
      limit,
    });
    return {
      status: 200,
      body: { items: page.items.map((lb) => lbs().document(lb, false)), next_cursor: page.next_cursor },
    };
  });
  route("POST", "/v1/load-balancers", "create_load_balancer", ({ body }) => {
    const { lb, operation } = lbs().create(parsed(CreateLoadBalancerBody, body));
    return {
      status: 202,
      body: { load_balancer: lbs().document(lb, true), operation: world().operationDocument(operation) },
    };
  });
  route("GET", "/v1/load-balancers/:id", "get_load_balancer", ({ params }) => ({
    status: 200,
    body: { load_balancer: lbs().document(lbs().get(params.id), true) },
  }));
  route("PATCH", "/v1/load-balancers/:id", "update_load_balancer", ({ params, body }) => ({
    status: 200,
    body: { load_balancer: lbs().document(lbs().update(params.id, parsed(UpdateLoadBalancerBody, body)), true) },
  }));
  route("DELETE", "/v1/load-balancers/:id", "delete_load_balancer", ({ params }) => ({
    status: 202,
    body: { operation: world().operationDocument(lbs().delete(params.id)) },
  }));
  route("POST", "/v1/load-balancers/:id/backends", "create_load_balancer_backend", ({ params, body }) => {
    const backend = lbs().createBackend(params.id, parsed(CreateBackendBody, body));
    return { status: 201, body: { backend: backendDocument(backend) } };
  });
  route("PATCH", "/v1/load-balancers/:id/backends/:backend", "update_load_balancer_backend", ({ params, body }) => {
    const backend = lbs().updateBackend(params.id, params.backend, parsed(UpdateBackendBody, body));
    return { status: 200, body: { backend: backendDocument(backend) } };
  });
  route("DELETE", "/v1/load-balancers/:id/backends/:backend", "delete_load_balancer_backend", ({ params }) => {
    lbs().deleteBackend(params.id, params.backend);
    return { status: 204 };
  });
  route("POST", "/v1/load-balancers/:id/frontends", "create_load_balancer_frontend", ({ params, body }) => {
    const lb = lbs().get(params.id);
    const frontend = lbs().createFrontend(params.id, parsed(CreateFrontendBody, body));
    const mode = lb.backends.find((b) => b.id === frontend.backend_id)?.mode ?? "tcp";
    return { status: 201, body: { frontend: { ...frontend, mode } } };
  });
  route("DELETE", "/v1/load-balancers/:id/frontends/:frontend", "delete_load_balancer_frontend", ({ params }) => {
    lbs().deleteFrontend(params.id, params.frontend);
    return { status: 204 };
  });
  route(
    "PUT",
    "/v1/load-balancers/:id/backends/:backend/members",
    "replace_load_balancer_members",
    ({ params, body }) => {
      const members = lbs().replaceMembers(params.id, params.backend, parsed(ReplaceMembersBody, body).members);
      return { status: 200, body: { members: members.map((m) => ({ ...m })) } };
    },
  );
  route(
    "POST",
    "/v1/load-balancers/:id/backends/:backend/members",
    "create_load_balancer_member",
    ({ params, body }) => {
      const member = lbs().addMember(params.id, params.backend, parsed(MemberInput, body));
      return { status: 201, body: { member: { ...member } } };
    },
  );
  route(
    "PATCH",
    "/v1/load-balancers/:id/backends/:backend/members/:member",
    "update_load_balancer_member",
    ({ params, body }) => {
      const member = lbs().updateMember(params.id, params.backend, params.member, parsed(UpdateMemberBody, body));
      return { status: 200, body: { member: { ...member } } };
    },
  );
  route(
    "DELETE",
    "/v1/load-balancers/:id/backends/:backend/members/:member",
    "delete_load_balancer_member",
    ({ params }) => {
      lbs().deleteMember(params.id, params.backend, params.member);
      return { status: 204 };
    },
  );

  // --- edges -----------------------------------------------------------------------------------------------------
  route("GET", "/v1/edges", "list_edges", ({ query }) => {
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
  route("GET", "/v1/edges/:id", "get_edge", ({ params }) => ({
    status: 200,
    body: { edge: edges().document(edges().get(params.id), true) },
  }));
  route("PATCH", "/v1/edges/:id", "update_edge", ({ params, body }) => {
    const { edge, operation } = edges().update(params.id, parsed(UpdateEdgeBody, body));
    return {
      status: 202,
      body: { edge: edges().document(edge, true), operation: world().operationDocument(operation) },
    };
  });
  route("POST", "/v1/edges", "create_edge", ({ body }) => {
    const { edge, operation } = edges().create(parsed(CreateEdgeBody, body));
    return {
      status: 202,
      body: { edge: edges().document(edge, true), operation: world().operationDocument(operation) },
    };
  });
  route("DELETE", "/v1/edges/:id", "delete_edge", ({ params }) => ({
    status: 202,
    body: { operation: world().operationDocument(edges().delete(params.id)) },
  }));

  // --- operations and quotas -------------------------------------------------------------------------------------
  route("GET", "/v1/operations/:id", "get_operation", ({ params }) => {
    const op = world().operations.get(params.id);
    if (!op) throw new ProblemError(404, `operation ${params.id} was not found`);
    return { status: 200, body: { operation: world().operationDocument(op, true) } };
  });
  route("GET", "/v1/quotas", "get_quotas", () => {
    const servers = world().servers.size;
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
          private_networks: world().networks.size,
        },
      },
    };
  });

  controlRoutes(app, sim);

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

function badRequestThrow(detail: string): never {
  throw badRequest(detail);
}

function backendDocument(backend: {
  id: string;
  name: string;
  mode: string;
  balance: string;
  health_check: { type: string; path: string };
  members: unknown[];
}): Record<string, unknown> {
  return {
    ...backend,
    health_check: { ...backend.health_check },
    health_check_path: backend.health_check.type === "http" ? backend.health_check.path : "",
    members: backend.members.map((m) => ({ ...m as object })),
  };
}

function controlRoutes(app: Hono, sim: Simulator): void {
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

  app.get("/_simulator/state", (c) =>
    control(c, () => ({
      status: 200,
      body: {
        settings: sim.world.settings,
        zones: sim.world.listZones().map((z) => ({ ...sim.world.zoneDocument(z), compute_nodes: z.compute_nodes })),
        networks: [...sim.world.networks.values()].map((n) => sim.world.networkDocument(n, true)),
        servers: [...sim.world.servers.values()].map((s) => sim.world.serverDocument(s)),
        load_balancers: sim.loadBalancers.list({}).map((lb) => sim.loadBalancers.document(lb, true)),
        edges: sim.edges.list().map((e) => sim.edges.document(e, true)),
      },
    })));
  app.get("/_simulator/requests", (c) =>
    control(c, () => {
      const operation = c.req.query("operation");
      return { status: 200, body: { items: sim.log.filter((e) => !operation || e.operation === operation) } };
    }));
  app.get("/_simulator/counters", (c) => control(c, () => ({ status: 200, body: Object.fromEntries(sim.counters) })));
  app.post("/_simulator/reset", (c) =>
    control(c, async () => {
      const options = (await readJson(c) ?? {}) as { world?: boolean; log?: boolean };
      if (options.world !== false) sim.resetWorld();
      if (options.log !== false) sim.resetLog();
      return { status: 204 };
    }));
  app.post("/_simulator/faults", (c) =>
    control(c, async () => {
      const input = await readJson(c);
      const list = Array.isArray(input) ? input : [input];
      for (const fault of list) sim.faults.add(parsed(FaultSchema, fault));
      return { status: 201, body: { items: sim.faults.pending() } };
    }));
  app.get("/_simulator/faults", (c) => control(c, () => ({ status: 200, body: { items: sim.faults.pending() } })));
  app.delete("/_simulator/faults", (c) =>
    control(c, () => {
      sim.faults.clear();
      return { status: 204 };
    }));
  app.post("/_simulator/servers", (c) =>
    control(c, async () => ({
      status: 201,
      body: { server: sim.world.serverDocument(sim.world.addServer(await body(c, SeedServerSchema))) },
    })));
  app.patch("/_simulator/servers/:id", (c) =>
    control(c, async () => {
      const server = sim.world.server(c.req.param("id"));
      const change = await body(c, ServerChangeSchema);
      if (change.state !== undefined) server.state = change.state;
      if (change.hostname !== undefined) server.hostname = change.hostname;
      if (change.public_ipv4 !== undefined) server.public_ipv4 = change.public_ipv4;
      if (change.public_ipv6 !== undefined) server.public_ipv6 = change.public_ipv6;
      if (change.plan !== undefined) server.plan = change.plan;
      if (change.labels !== undefined) server.labels = { ...change.labels };
      if (change.interfaces !== undefined) sim.world.setInterfaces(server, change.interfaces);
      server.updated_at = sim.world.isoNow();
      return { status: 200, body: { server: sim.world.serverDocument(server) } };
    }));
  app.delete("/_simulator/servers/:id", (c) =>
    control(c, () => {
      sim.world.server(c.req.param("id"));
      sim.world.servers.delete(c.req.param("id"));
      return { status: 204 };
    }));
  app.patch("/_simulator/settings", (c) =>
    control(c, async () => {
      const change = await body(c, v.partial(SeedSettingsSchema));
      for (const [key, value] of Object.entries(change)) {
        if (value !== undefined) (sim.world.settings as Record<string, unknown>)[key] = value;
      }
      return { status: 200, body: { settings: sim.world.settings } };
    }));
  app.patch("/_simulator/zones/:name", (c) =>
    control(c, async () => {
      const zone = sim.world.zone(c.req.param("name"));
      const change = await body(c, ZoneChangeSchema);
      if (change.compute_nodes !== undefined) zone.compute_nodes = change.compute_nodes;
      if (change.servers !== undefined) zone.servers = change.servers;
      return { status: 200, body: { capabilities: sim.world.capabilities(zone) } };
    }));
  app.post("/_simulator/tokens", (c) =>
    control(c, async () => {
      const token = await body(c, SeedTokenSchema);
      sim.world.tokens.set(token.token, { token: token.token, scope: token.scope });
      return { status: 201, body: { prefix: token.token.slice(0, 8), scope: token.scope } };
    }));
  app.post("/_simulator/networks", (c) =>
    control(c, async () => ({
      status: 201,
      body: { network: sim.world.networkDocument(sim.world.addNetwork(await body(c, SeedNetworkSchema)), true) },
    })));
  app.post("/_simulator/edges", (c) =>
    control(c, async () => {
      const { id, members, ...rest } = await body(c, SeedEdgeSchema);
      const { edge } = sim.edges.create({ ...rest, members }, { id, ready: true });
      return { status: 201, body: { edge: sim.edges.document(edge, true) } };
    }));
}

const ServerChangeSchema = v.strictObject({
  state: v.optional(v.picklist(["creating", "starting", "started", "stopping", "stopped", "deleting", "error"])),
  hostname: v.optional(v.string()),
  plan: v.optional(v.string()),
  public_ipv4: v.optional(v.nullable(v.string())),
  public_ipv6: v.optional(v.nullable(v.string())),
  labels: v.optional(v.record(v.string(), v.string())),
  interfaces: v.optional(v.array(v.strictObject({ network_id: v.string(), address: v.optional(v.string()) }))),
});

const ZoneChangeSchema = v.strictObject({
  compute_nodes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  servers: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
});
