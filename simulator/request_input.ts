/**
 * Reading what a request sends: its JSON body (400 when it is not JSON), a body checked against a request schema
 * (400 naming the field), and the `label` filters of a list's query (`key=value`; 400 otherwise).
 *
 * @module
 */
import type { Context } from "hono";
import type * as v from "valibot";
import { badRequest } from "./problem.ts";
import { parseBody } from "./request_schemas.ts";

/**
 * The request's JSON body; undefined when it is empty.
 *
 * @throws {ProblemError} 400 when the body is not JSON.
 */
export async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest("the body is not JSON");
  }
}

/**
 * `body` parsed with `schema`.
 *
 * @throws {ProblemError} 400 naming the first offending field (see {@linkcode parseBody}).
 */
export function parsed<S extends v.GenericSchema>(schema: S, body: unknown): v.InferOutput<S> {
  const result = parseBody(schema, body);
  if (!result.ok) throw result.error;
  return result.value;
}

/**
 * The label filter of a list: each `key=value` of the repeated `label` query parameter.
 *
 * @throws {ProblemError} 400 for a value without a key and `=`.
 */
export function parseLabels(values: string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const value of values) {
    const at = value.indexOf("=");
    if (at <= 0) throw badRequest(`query label: "${value}" must be key=value`);
    labels[value.slice(0, at)] = value.slice(at + 1);
  }
  return labels;
}
