/**
 * How the simulator writes its answers: JSON documents, problem documents (`application/problem+json`, with
 * `Retry-After` when the problem has one), and the broken answers scripted faults ask for — a body that is not JSON,
 * a connection dropped mid-answer, a field of the wrong type (`shape`) or one spoiled list item (`item`).
 *
 * @module
 */
import type { ProblemError } from "./problem.ts";

/** What a handler answers: a status and, unless it is a 204, a JSON body. */
export interface Answer {
  /** HTTP status. */
  status: number;
  /** The JSON document; none for a 204. */
  body?: unknown;
}

/** The problem document of `error`, with `headers` and, when the error has one, `Retry-After`. */
export function problemResponse(error: ProblemError, headers: Record<string, string> = {}): Response {
  const extra: Record<string, string> = { ...headers, "content-type": "application/problem+json" };
  if (error.retryAfterSeconds !== undefined) extra["retry-after"] = String(error.retryAfterSeconds);
  return new Response(JSON.stringify(error.toProblem()), { status: error.status, headers: extra });
}

/** `answer` as JSON with `headers`; no body for a 204 or an answer without one. */
export function jsonResponse(answer: Answer, headers: Record<string, string> = {}): Response {
  if (answer.body === undefined || answer.status === 204) return new Response(null, { status: answer.status, headers });
  return new Response(JSON.stringify(answer.body), {
    status: answer.status,
    headers: { ...headers, "content-type": "application/json" },
  });
}

/** A `status` answer whose body is not JSON (the `malformed: "json"` fault). */
export function notJsonResponse(status: number, headers: Record<string, string>): Response {
  return new Response("{ this is not json", { status, headers });
}

/** A `status` answer whose connection breaks mid-body (the `drop` and `hang` faults). */
export function droppedResponse(status: number): Response {
  // Headers go out, then the body stream fails: the client sees the connection break mid-answer.
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"partial":'));
      controller.error(new Error("connection dropped by a simulator fault"));
    },
  });
  return new Response(body, { status, headers: { "content-type": "application/json" } });
}

/**
 * Gives an answer a field of the wrong type (the `malformed: "shape"` fault): the `id` (or first field) of the
 * envelope's first object, or the envelope's first field itself.
 */
export function corruptShape(body: unknown): unknown {
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

/**
 * Gives one item of a list answer a field of the wrong type, keeping its `id` so a client can name it (the
 * `malformed: "item"` fault); an answer that is not a non-empty list gets {@linkcode corruptShape}.
 */
export function corruptItem(body: unknown, index: number): unknown {
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
