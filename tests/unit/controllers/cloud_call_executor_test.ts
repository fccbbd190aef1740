/**
 * The executor of planned calls, without I/O: a recorder stands in for the client's ten write operations and answers
 * as the API does (ids for what is created), so the test sees the order, the resolved references and the document
 * the calls leave behind.
 */
import assert from "node:assert/strict";
import type { LoadBalancer } from "../../../lib/cloud/schemas.ts";
import { CloudApiError } from "../../../lib/cloud/errors.ts";
import {
  applyCloudCalls,
  cloudCallSender,
  type CloudCallTarget,
  refusedAsInvalid,
} from "../../../lib/controllers/cloud_call_executor.ts";
import type { CloudCall } from "../../../lib/provider/service/cloud_calls.ts";
import { DryRunReport } from "../../../lib/runtime/dry_run.ts";

const hc = { type: "tcp" as const, path: "/", expected_status: "200-399", interval_seconds: 2, rise: 2, fall: 3 };

function lbDocument(id: string, extra: Partial<LoadBalancer> = {}): LoadBalancer {
  return {
    id,
    name: "n",
    zone: "z",
    state: "creating",
    labels: {},
    frontends: [],
    backends: [],
    ...extra,
  } as unknown as LoadBalancer;
}

/** Records every call as `operation target…` and answers like the API. */
function recorder(options: { notFound?: string[] } = {}) {
  const sent: string[] = [];
  let next = 0;
  const id = (prefix: string) => `${prefix}-${++next}`;
  const gone = (what: string): Promise<never> | undefined =>
    options.notFound?.includes(what)
      ? Promise.reject(new CloudApiError("not_found", { operation: what, status: 404 }))
      : undefined;
  const target: CloudCallTarget = {
    createLoadBalancer: (body) => {
      sent.push(`create_load_balancer ${body.name}`);
      return Promise.resolve({ loadBalancer: lbDocument(id("lb"), { name: body.name }) }) as never;
    },
    updateLoadBalancer: (lb, body) => {
      sent.push(`update_load_balancer ${lb} ${JSON.stringify(body.labels)}`);
      return Promise.resolve(lbDocument(lb, { labels: body.labels ?? {} })) as never;
    },
    deleteLoadBalancer: (lb) => {
      sent.push(`delete_load_balancer ${lb}`);
      return (gone("delete_load_balancer") ?? Promise.resolve()) as never;
    },
    createBackend: (lb, body) => {
      sent.push(`create_backend ${lb} ${body.name}`);
      return Promise.resolve({
        id: id("be"),
        name: body.name,
        mode: body.mode,
        health_check: hc,
        members: [],
      }) as never;
    },
    updateBackend: (lb, backend) => {
      sent.push(`update_backend ${lb} ${backend}`);
      return Promise.resolve({
        id: backend,
        name: "tcp-80",
        mode: "tcp",
        balance: "leastconn",
        health_check: hc,
      }) as never;
    },
    deleteBackend: (lb, backend) => {
      sent.push(`delete_backend ${lb} ${backend}`);
      return (gone("delete_backend") ?? Promise.resolve()) as never;
    },
    replaceMembers: (lb, backend, members) => {
      sent.push(`replace_members ${lb} ${backend} ${members.map((m) => m.address).join(",")}`);
      return Promise.resolve(members.map((m, i) => ({ ...m, id: `m${i}` }))) as never;
    },
    createFrontend: (lb, body) => {
      sent.push(`create_frontend ${lb} ${body.name} -> ${body.backend_id}`);
      return Promise.resolve({ id: id("fe"), ...body }) as never;
    },
    deleteFrontend: (lb, frontend) => {
      sent.push(`delete_frontend ${lb} ${frontend}`);
      return (gone("delete_frontend") ?? Promise.resolve()) as never;
    },
    updateEdge: (edge, body) => {
      sent.push(`update_edge ${edge} ${body.members?.length}`);
      return Promise.resolve() as never;
    },
  };
  return { target, sent };
}

const NEW: CloudCall[] = [
  {
    operation: "create_load_balancer",
    body: { zone: "z", name: "k8s-web", network_id: "net-1", labels: {}, public_ipv4: false },
  },
  {
    operation: "create_load_balancer_backend",
    loadBalancer: { created: true },
    body: { name: "tcp-80", mode: "tcp", health_check: hc },
  },
  {
    operation: "replace_load_balancer_members",
    loadBalancer: { created: true },
    backend: { createdName: "tcp-80" },
    name: "tcp-80",
    body: { members: [{ name: "m", address: "10.0.0.5", port: 30080 }] },
  },
  {
    operation: "create_load_balancer_frontend",
    loadBalancer: { created: true },
    backend: { createdName: "tcp-80" },
    body: { name: "tcp-80", port: 80 },
  },
];

Deno.test("calls referring to what the plan creates get its ids, in order, and the document shows every change", async () => {
  const { target, sent } = recorder();
  const created: string[] = [];
  const result = await applyCloudCalls(target, NEW, { onCreated: (lb) => created.push(lb.id) });
  assert.deepEqual(sent, [
    "create_load_balancer k8s-web",
    "create_backend lb-1 tcp-80",
    "replace_members lb-1 be-2 10.0.0.5",
    "create_frontend lb-1 tcp-80 -> be-2",
  ]);
  assert.deepEqual(created, ["lb-1"], "the create is known before the calls that follow it");
  assert.equal(result.created, true);
  assert.equal(result.sent, 4);
  assert.deepEqual(result.loadBalancer?.backends.map((b) => [b.id, b.members.map((m) => m.address)]), [
    ["be-2", ["10.0.0.5"]],
  ]);
  assert.deepEqual(result.loadBalancer?.frontends.map((f) => [f.name, f.backend_id]), [["tcp-80", "be-2"]]);
});

Deno.test("changes to an existing load balancer keep its document current without a read, and 404 on a delete is done", async () => {
  const { target, sent } = recorder({ notFound: ["delete_frontend", "delete_backend"] });
  const current = lbDocument("lb-9", {
    state: "running",
    frontends: [{ id: "fe-old", name: "tcp-81", port: 81, backend_id: "be-old" }] as LoadBalancer["frontends"],
    backends: [
      { id: "be-old", name: "tcp-81", mode: "tcp", health_check: hc, members: [] },
      { id: "be-80", name: "tcp-80", mode: "tcp", health_check: hc, members: [] },
    ] as unknown as LoadBalancer["backends"],
  });
  const result = await applyCloudCalls(target, [
    { operation: "delete_load_balancer_frontend", loadBalancer: { id: "lb-9" }, frontendId: "fe-old", name: "tcp-81" },
    {
      operation: "update_load_balancer_backend",
      loadBalancer: { id: "lb-9" },
      backend: { id: "be-80" },
      name: "tcp-80",
      body: { balance: "leastconn" },
    },
    {
      operation: "delete_load_balancer_backend",
      loadBalancer: { id: "lb-9" },
      backend: { id: "be-old" },
      name: "tcp-81",
    },
  ], { current });
  assert.deepEqual(sent, ["delete_frontend lb-9 fe-old", "update_backend lb-9 be-80", "delete_backend lb-9 be-old"]);
  assert.deepEqual(result.loadBalancer?.frontends, []);
  assert.deepEqual(result.loadBalancer?.backends.map((b) => [b.id, b.balance]), [["be-80", "leastconn"]]);
  assert.equal(current.backends.length, 2, "the caller's document is not changed in place");
});

Deno.test("a 404 on anything but a delete fails the pass, so the controller reads the real load balancer", async () => {
  const { target } = recorder();
  target.replaceMembers = () =>
    Promise.reject(new CloudApiError("not_found", { operation: "replace_members", status: 404 }));
  await assert.rejects(
    applyCloudCalls(target, [{
      operation: "replace_load_balancer_members",
      loadBalancer: { id: "lb-gone" },
      backend: { id: "be-1" },
      name: "tcp-80",
      body: { members: [] },
    }]),
    (error: unknown) => error instanceof CloudApiError && error.kind === "not_found",
  );
});

Deno.test("in a dry run nothing is sent: each call is described once, under the owner the sender binds", async () => {
  const { target, sent } = recorder();
  const report = new DryRunReport();
  const send = cloudCallSender(target, { controller: "service", dryRun: report });
  const result = await send("shop/web", NEW);
  await send("shop/web", NEW);
  assert.deepEqual(sent, []);
  assert.equal(result.sent, 0);
  assert.deepEqual(report.actions.map((a) => [a.controller, a.object, a.action]), [
    ["service", "shop/web", "create_load_balancer"],
    ["service", "shop/web", "create_load_balancer_backend"],
    ["service", "shop/web", "replace_load_balancer_members"],
    ["service", "shop/web", "create_load_balancer_frontend"],
  ]);
});

Deno.test("400 and 422 are refusals of an invalid request; a quota, a reused key, 404 and outages are not", () => {
  const error = (kind: ConstructorParameters<typeof CloudApiError>[0], status: number) =>
    new CloudApiError(kind, { operation: "replace_members", status });
  assert.ok(refusedAsInvalid(error("bad_request", 400)));
  assert.ok(refusedAsInvalid(error("unprocessable", 422)));
  for (
    const [kind, status] of [
      ["quota_exceeded", 422],
      ["idempotency_key_reused", 422],
      ["not_found", 404],
      ["unavailable", 503],
      ["rate_limited", 429],
    ] as const
  ) assert.ok(!refusedAsInvalid(error(kind, status)), kind);
  assert.ok(!refusedAsInvalid(new Error("network")));
});
