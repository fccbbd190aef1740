/**
 * One customer API operation on a router, answered through the pipeline every operation shares, in this order: the
 * world's clock ticks; the bearer token (401); the token's rate limit (429, and the `X-RateLimit-*` headers on every
 * later answer); its scope (403 for a read-only token on an unsafe method); the operation's next scripted fault —
 * a hang, or one that answers before the operation runs; the JSON body (400); for a keyed create the
 * `Idempotency-Key` (400 for a malformed key, then the store's replay or refusal); the fault's latency; the handler
 * (a {@linkcode ProblemError} it throws is its answer); the idempotency record of the outcome; a fault that replaces
 * the answer after the operation ran, or one that spoils its body. Every answer is written to the request log, but
 * that of an unexpected error (rethrown: the app answers 500).
 *
 * @module
 */
import type { Context, Hono } from "hono";
import { abortableSleep } from "../lib/runtime/abort.ts";
import type { Fault } from "./faults.ts";
import { type IdempotencyDecision, idempotencyKeyProblem, requestFingerprint } from "./idempotency.ts";
import { ProblemError } from "./problem.ts";
import { readJson } from "./request_input.ts";
import {
  type Answer,
  corruptItem,
  corruptShape,
  droppedResponse,
  jsonResponse,
  notJsonResponse,
  problemResponse,
} from "./responses.ts";
import type { RequestLogEntry, Simulator } from "./simulator.ts";
import type { TokenState } from "./world_state.ts";

/** An HTTP method an operation answers. */
export type OperationMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** What an operation's handler gets. */
export interface OperationRequest {
  /** The path's parameters. */
  params: Record<string, string>;
  /** A query parameter's value. */
  query: (name: string) => string | undefined;
  /** Every value of a repeated query parameter. */
  queries: (name: string) => string[];
  /** The JSON body of an unsafe method (undefined when empty, and for `GET`). */
  body: unknown;
}

/** An operation's handler: its answer, or a thrown {@linkcode ProblemError}. */
export type OperationHandler = (request: OperationRequest) => Answer;

/** The request log's fields of one request, but its status. */
type LogFields = Omit<RequestLogEntry, "seq" | "at" | "atMs" | "status">;

/** A create that came with an `Idempotency-Key` (not yet checked). */
interface KeyedCreate {
  operation: string;
  key: string;
}

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);
/** Operations that honour `Idempotency-Key`. */
const KEYED_CREATES = new Set(["create_load_balancer", "create_edge"]);

/** Registers operation `operation` (its operationId) as `method` `path` on `router`, answered through the pipeline. */
export function addOperation(
  router: Hono,
  sim: Simulator,
  method: OperationMethod,
  path: string,
  operation: string,
  handler: OperationHandler,
): void {
  router.on(method, path, (c) => runOperation(sim, c, method, operation, handler));
}

/** Answers one request of `operation` through the pipeline. */
async function runOperation(
  sim: Simulator,
  c: Context,
  method: OperationMethod,
  operation: string,
  handler: OperationHandler,
): Promise<Response> {
  sim.world.tick();
  const url = new URL(c.req.url);
  const logged: LogFields = {
    operation,
    method,
    path: url.pathname + url.search,
    userAgent: c.req.header("user-agent"),
  };
  const token = authenticate(sim, c, logged);
  if (token instanceof Response) return token;
  const rateHeaders = rateLimit(sim, token, logged);
  if (rateHeaders instanceof Response) return rateHeaders;
  const forbidden = authorizeScope(sim, method, token, logged, rateHeaders);
  if (forbidden) return forbidden;

  const fault = sim.faults.take(operation);
  const idempotencyKey = c.req.header("idempotency-key");
  const entry: LogFields = {
    ...logged,
    tokenPrefix: tokenPrefix(token),
    idempotencyKey,
    fault: fault ? JSON.stringify(fault) : undefined,
  };
  if (fault?.hang) return await hang(sim, entry);
  const phase = fault?.phase ?? (fault?.drop || fault?.forget_answer ? "after" : "before");
  const faulted = fault && phase === "before" ? applyBeforeFault(sim, fault, entry, rateHeaders) : undefined;
  if (faulted) return faulted;

  const keyed: KeyedCreate | undefined = KEYED_CREATES.has(operation) && idempotencyKey !== undefined
    ? { operation, key: idempotencyKey }
    : undefined;
  let body: unknown;
  try {
    body = UNSAFE.has(method) ? await readJson(c) : undefined;
  } catch (cause) {
    // A body that is not JSON is a 4xx answer of the keyed create: like any other, it frees the key.
    return answerFailure(sim, cause, entry, rateHeaders, keyed);
  }
  const decision: IdempotencyDecision = keyed
    ? beginIdempotency(sim, keyed, requestFingerprint(method, url.pathname, body))
    : { kind: "run" };
  if (decision.kind === "refuse") return answerProblem(sim, entry, decision.problem, rateHeaders);
  // Latency is spent after a keyed request is registered: a slow create is "in progress".
  if (fault?.latency_ms) await abortableSleep(fault.latency_ms, sim.shutdown.signal).catch(() => {});
  let answer: Answer;
  if (decision.kind === "replay") {
    answer = { status: decision.status, body: decision.body };
  } else {
    try {
      answer = handler({
        params: c.req.param() as Record<string, string>,
        query: (name) => c.req.query(name),
        queries: (name) => c.req.queries(name) ?? [],
        body,
      });
    } catch (cause) {
      return answerFailure(sim, cause, entry, rateHeaders, keyed);
    }
  }

  const after = fault && phase === "after" ? fault : undefined;
  if (keyed && decision.kind === "run") {
    finishIdempotency(sim, keyed, {
      status: after?.status ?? answer.status,
      body: answer.body,
      keepAnswer: !fault?.forget_answer,
    });
  }
  const replayed = decision.kind === "replay";
  const headers: Record<string, string> = { ...rateHeaders };
  if (replayed) headers["idempotent-replayed"] = "true";
  const replaced = after ? applyAfterFault(sim, after, entry, answer, rateHeaders, headers) : undefined;
  if (replaced) return replaced;
  answer = corruptAnswer(fault, answer);
  sim.record({ ...entry, status: answer.status, replayed: replayed || undefined });
  return jsonResponse(answer, headers);
}

/** The state of the request's bearer token; a 401 when there is none or the simulator does not know it. */
function authenticate(sim: Simulator, c: Context, logged: LogFields): TokenState | Response {
  const token = /^Bearer (\S+)$/.exec(c.req.header("authorization") ?? "")?.[1];
  const state = token ? sim.world.tokens.get(token) : undefined;
  if (state) return state;
  sim.record({ ...logged, status: 401 });
  return problemResponse(new ProblemError(401, "the request needs a valid API token"));
}

/** Counts the request in its token's window: the rate headers of the answer, or a 429 past the limit. */
function rateLimit(sim: Simulator, token: TokenState, logged: LogFields): Record<string, string> | Response {
  const limit = sim.rateLimiter.take(token.token);
  if (limit.allowed) return limit.headers;
  sim.record({ ...logged, status: 429, tokenPrefix: tokenPrefix(token) });
  return problemResponse(
    new ProblemError(429, "too many requests for this credential", { retryAfterSeconds: limit.retryAfterSeconds }),
    limit.headers,
  );
}

/** A 403 when an unsafe method comes with a token that may not operate; undefined when the token may. */
function authorizeScope(
  sim: Simulator,
  method: OperationMethod,
  token: TokenState,
  logged: LogFields,
  rateHeaders: Record<string, string>,
): Response | undefined {
  const scopes = token.scope === "read_write" ? ["read", "operate"] : token.scope.split(",");
  if (!UNSAFE.has(method) || scopes.includes("operate") || scopes.includes("billing.manage")) return undefined;
  sim.record({ ...logged, status: 403, tokenPrefix: tokenPrefix(token) });
  return problemResponse(new ProblemError(403, "this API token is read-only"), rateHeaders);
}

/** The `hang` fault: logged with status 0 and held until the simulator stops; the client gives up on its own. */
async function hang(sim: Simulator, entry: LogFields): Promise<Response> {
  sim.record({ ...entry, status: 0 });
  await new Promise<void>((resolve) => {
    if (sim.shutdown.signal.aborted) return resolve();
    sim.shutdown.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  return droppedResponse(504);
}

/** The answer of a fault that strikes before the operation runs (status, not JSON, dropped); else undefined. */
function applyBeforeFault(
  sim: Simulator,
  fault: Fault,
  entry: LogFields,
  rateHeaders: Record<string, string>,
): Response | undefined {
  if (fault.status) return answerProblem(sim, entry, faultProblem(fault, fault.status), rateHeaders);
  if (fault.malformed === "json") {
    sim.record({ ...entry, status: 200 });
    return notJsonResponse(200, rateHeaders);
  }
  if (fault.drop) {
    sim.record({ ...entry, status: 0 });
    return droppedResponse(200);
  }
  return undefined;
}

/**
 * The idempotency decision of a keyed create: a refusal with the 400 for a malformed key (the store is not asked),
 * else the store's run, replay or refusal.
 */
function beginIdempotency(sim: Simulator, keyed: KeyedCreate, fingerprint: string): IdempotencyDecision {
  const malformed = idempotencyKeyProblem(keyed.key);
  if (malformed) return { kind: "refuse", problem: malformed };
  return sim.idempotency.begin(keyed.operation, keyed.key, fingerprint);
}

/** Records the outcome of a keyed create under its key (a 4xx frees the key, a 5xx holds it). */
function finishIdempotency(
  sim: Simulator,
  keyed: KeyedCreate,
  outcome: { status: number; body: unknown; keepAnswer?: boolean },
): void {
  sim.idempotency.finish(keyed.operation, keyed.key, outcome);
}

/**
 * The answer of a failed operation: a {@linkcode ProblemError}'s document, its outcome recorded under `keyed`'s key
 * when given; anything else is rethrown for the app's error handler.
 */
function answerFailure(
  sim: Simulator,
  cause: unknown,
  entry: LogFields,
  rateHeaders: Record<string, string>,
  keyed: KeyedCreate | undefined,
): Response {
  if (!(cause instanceof ProblemError)) throw cause;
  if (keyed) finishIdempotency(sim, keyed, { status: cause.status, body: cause.toProblem() });
  return answerProblem(sim, entry, cause, rateHeaders);
}

/** The answer of a fault that replaces the operation's answer after it ran (status, dropped, not JSON); else undefined. */
function applyAfterFault(
  sim: Simulator,
  fault: Fault,
  entry: LogFields,
  answer: Answer,
  rateHeaders: Record<string, string>,
  headers: Record<string, string>,
): Response | undefined {
  if (fault.status) return answerProblem(sim, entry, faultProblem(fault, fault.status), rateHeaders);
  if (fault.drop) {
    sim.record({ ...entry, status: 0 });
    return droppedResponse(answer.status);
  }
  if (fault.malformed === "json") {
    sim.record({ ...entry, status: answer.status });
    return notJsonResponse(answer.status, headers);
  }
  return undefined;
}

/** `answer` with the body a `malformed: "shape"` or `"item"` fault spoils; else `answer` itself. */
function corruptAnswer(fault: Fault | undefined, answer: Answer): Answer {
  if (fault?.malformed === "shape") return { status: answer.status, body: corruptShape(answer.body) };
  if (fault?.malformed === "item") {
    return { status: answer.status, body: corruptItem(answer.body, fault.item_index ?? 0) };
  }
  return answer;
}

/** Logs `problem`'s status for the request and answers with its document. */
function answerProblem(
  sim: Simulator,
  entry: LogFields,
  problem: ProblemError,
  headers: Record<string, string>,
): Response {
  sim.record({ ...entry, status: problem.status });
  return problemResponse(problem, headers);
}

/** The scripted fault's problem with `status`. */
function faultProblem(fault: Fault, status: number): ProblemError {
  return new ProblemError(status, fault.detail ?? "a scripted simulator fault", {
    reason: fault.reason,
    retryAfterSeconds: fault.retry_after,
  });
}

/** A token's displayed prefix, as the request log keeps it. */
function tokenPrefix(token: TokenState): string {
  return token.token.slice(0, 8);
}
