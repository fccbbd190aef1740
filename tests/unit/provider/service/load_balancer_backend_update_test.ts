/** The branch of the listener plan that changes an existing backend: health check, balance, members. */
import assert from "node:assert/strict";
import type { Backend, Frontend } from "../../../../lib/cloud/schemas.ts";
import type { CloudCall } from "../../../../lib/provider/service/cloud_calls.ts";
import { listenerCalls } from "../../../../lib/provider/service/listener_plan.ts";
import { planLoadBalancer } from "../../../../lib/provider/service/load_balancer_plan.ts";
import { backendMembers } from "../../../../lib/provider/service/member_drain.ts";

const tcpCheck = { type: "tcp" as const, path: "/", expected_status: "200-399", interval_seconds: 2, rise: 2, fall: 3 };
const MEMBERS = [{ node: "worker-1", address: "10.0.0.5" }];
const PORT = { port: 80, nodePort: 30080 };

function backend(extra: Partial<Backend> = {}): Backend {
  return {
    id: "be-1",
    name: "tcp-80",
    mode: "tcp",
    balance: "roundrobin",
    health_check_path: "",
    health_check: tcpCheck,
    members: backendMembers(MEMBERS, 30080).map((m, i) => ({ ...m, id: `m${i}`, backend_id: "be-1" })),
    ...extra,
  } as Backend;
}

const frontend = { id: "fe-1", name: "tcp-80", port: 80, backend_id: "be-1", tls: false } as Frontend;

function calls(existing: Backend, settings: Record<string, unknown> = {}): CloudCall[] {
  return listenerCalls({ frontends: [frontend], backends: [existing] }, {
    ports: [PORT],
    members: MEMBERS,
    settings: { healthCheck: tcpCheck, balance: "roundrobin", ...settings },
  }, { id: "lb-1" });
}

Deno.test("an existing backend that matches needs no call", () => {
  assert.deepEqual(calls(backend()), []);
});

Deno.test("a changed health check or balance updates the backend in place, with both in the body", () => {
  const httpCheck = { ...tcpCheck, type: "http" as const, path: "/healthz", expected_status: "200" };
  for (
    const [existing, settings] of [
      [backend({ health_check: { ...tcpCheck, interval_seconds: 5 } }), {}],
      [backend({ health_check: { ...tcpCheck, rise: 3 } }), {}],
      [backend({ health_check: { ...tcpCheck, fall: 1 } }), {}],
      [backend(), { healthCheck: httpCheck }],
      [backend({ balance: "leastconn" }), {}],
    ] as [Backend, Record<string, unknown>][]
  ) {
    const planned = calls(existing, settings);
    assert.deepEqual(planned, [{
      operation: "update_load_balancer_backend",
      loadBalancer: { id: "lb-1" },
      backend: { id: "be-1" },
      name: "tcp-80",
      body: { balance: "roundrobin", health_check: (settings.healthCheck ?? tcpCheck) as typeof tcpCheck },
    }], JSON.stringify(existing));
  }
});

Deno.test("an http check's path and expected status count; a tcp check's, which an API may normalise, do not", () => {
  const httpCheck = { ...tcpCheck, type: "http" as const, path: "/healthz", expected_status: "200" };
  assert.equal(calls(backend({ health_check: { ...httpCheck, path: "/" } }), { healthCheck: httpCheck }).length, 1);
  assert.equal(
    calls(backend({ health_check: { ...httpCheck, expected_status: "200-399" } }), { healthCheck: httpCheck }).length,
    1,
  );
  assert.deepEqual(calls(backend({ health_check: { ...tcpCheck, path: "/other", expected_status: "" } })), []);
});

Deno.test("changed members are one replace of the whole list, after the backend update", () => {
  const planned = calls(backend({ balance: "leastconn", members: [] }));
  assert.deepEqual(planned.map((c) => c.operation), ["update_load_balancer_backend", "replace_load_balancer_members"]);
  const replace = planned[1];
  assert.deepEqual(
    replace.operation === "replace_load_balancer_members" ? replace.body.members : [],
    backendMembers(MEMBERS, 30080),
  );
});

Deno.test("a pass that only replaces members is marked members-only; one that also updates the backend is not", () => {
  const lb = {
    id: "lb-1",
    state: "running",
    labels: {},
    public_ipv6_addresses: ["2001:db8::1"],
    frontends: [frontend],
    backends: [backend({ members: [] })],
  };
  const intent = {
    ports: [PORT],
    members: MEMBERS,
    settings: { healthCheck: tcpCheck, balance: "roundrobin" as const },
  };
  const input = { intent, currentIngress: [{ ip: "2001:db8::1" }], ensuringOpen: false };
  // deno-lint-ignore no-explicit-any
  const membersOnly = planLoadBalancer({ ...input, target: { existing: lb as any } });
  assert.equal(membersOnly.membersOnly, true);
  assert.deepEqual(membersOnly.events.map((e) => e.reason), ["UpdatedLoadBalancer"]);
  const withUpdate = planLoadBalancer({
    ...input,
    // deno-lint-ignore no-explicit-any
    target: { existing: { ...lb, backends: [backend({ members: [], balance: "leastconn" })] } as any },
  });
  assert.equal(withUpdate.membersOnly, false);
  assert.deepEqual(withUpdate.events.map((e) => e.reason), ["EnsuringLoadBalancer", "EnsuredLoadBalancer"]);
  // deno-lint-ignore no-explicit-any
  const whileOpen = planLoadBalancer({ ...input, ensuringOpen: true, target: { existing: lb as any } });
  assert.equal(whileOpen.membersOnly, false, "an open Ensuring is closed by this pass, not reported as an update");
});
