// deno-lint-ignore-file no-explicit-any -- answers are JSON documents checked field by field
/**
 * The simulator's API in-process, for the contract tests (tests/unit/simulator/contract_*_test.ts): requests go to the
 * hono app directly, on a fake clock the test moves, and answers can be checked against the client's schemas.
 *
 * @module
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { RESPONSE_SCHEMAS } from "../../../lib/cloud/schemas.ts";
import { simulatorApp } from "../../../simulator/app.ts";
import { Simulator } from "../../../simulator/simulator.ts";
import { TEST_TOKEN, testSeed } from "./simulator.ts";

/** One answer of the simulator: status, JSON body (`{}` when empty) and headers. */
export interface Reply {
  /** HTTP status. */
  status: number;
  /** The parsed JSON body, `{}` when the answer had none. */
  body: Record<string, unknown>;
  /** Response headers. */
  headers: Headers;
}

/**
 * A simulator seeded with `testSeed(extra)` on a fake clock starting at 2026-11-30T10:00:00Z. `call` sends a request
 * with the full-access token (`token: null` sends none); `valid` also asserts a 2xx answer that validates against
 * the client's schema of the operation; `advance` moves the clock.
 */
export function contractHarness(extra: Record<string, unknown> = {}) {
  let now = Date.parse("2026-11-30T10:00:00Z");
  const sim = new Simulator(testSeed(extra), { clock: () => now });
  const app = simulatorApp(sim);
  async function call(
    method: string,
    path: string,
    options: { body?: unknown; token?: string | null; headers?: Record<string, string> } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== null) headers.authorization = `Bearer ${options.token ?? TEST_TOKEN}`;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const response = await app.fetch(
      new Request(`http://simulator.test${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      }),
    );
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers };
  }
  /** Calls and checks the answer against the client's schema of `operation`. */
  async function valid(operation: keyof typeof RESPONSE_SCHEMAS, method: string, path: string, body?: unknown) {
    const reply = await call(method, path, { body });
    assert.ok(reply.status >= 200 && reply.status < 300, `${operation}: ${reply.status} ${JSON.stringify(reply.body)}`);
    const parsed = v.safeParse(RESPONSE_SCHEMAS[operation], reply.body);
    assert.ok(parsed.success, `${operation} answer does not validate: ${JSON.stringify(parsed.issues?.[0]?.path)}`);
    return reply.body as Record<string, any>;
  }
  return {
    sim,
    call,
    valid,
    advance(ms: number) {
      now += ms;
    },
  };
}

/** The body of a valid load balancer create (zone de-fsn1, network net-1, no public IPv4). */
export const LOAD_BALANCER_BODY = {
  zone: "de-fsn1",
  name: "k8s-prod-shop-web",
  network_id: "net-1",
  public_ipv4: false,
};

/** Creates a load balancer through `h` (asserting a valid answer) and returns the document. */
export async function newLoadBalancer(
  h: ReturnType<typeof contractHarness>,
  body: Record<string, unknown> = LOAD_BALANCER_BODY,
) {
  return (await h.valid("create_load_balancer", "POST", "/v1/load-balancers", body)).load_balancer as Record<
    string,
    any
  >;
}
