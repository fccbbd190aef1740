/**
 * The load balancers of the customer API with their backends, frontends and members: `list_load_balancers` (newest
 * first, filtered by `label`), `get_load_balancer`, `create_load_balancer` (a keyed create), `update_…` and
 * `delete_load_balancer`; `create_…`, `update_…` and `delete_load_balancer_backend`; `create_…` and
 * `delete_load_balancer_frontend`; `replace_load_balancer_members`, `create_…`, `update_…` and
 * `delete_load_balancer_member`.
 *
 * @module
 */
import { Hono } from "hono";
import type { BackendState } from "../load_balancer_state.ts";
import { addOperation } from "../operation_route.ts";
import { newestFirstKey, paginate, parseLimit } from "../pagination.ts";
import { parsed, parseLabels } from "../request_input.ts";
import {
  CreateBackendBody,
  CreateFrontendBody,
  CreateLoadBalancerBody,
  MemberInput,
  ReplaceMembersBody,
  UpdateBackendBody,
  UpdateLoadBalancerBody,
  UpdateMemberBody,
} from "../request_schemas.ts";
import type { Simulator } from "../simulator.ts";
import { operationDocument } from "../world_documents.ts";

/** The router of `/load-balancers` and its sub-resources (mounted under `/v1`). */
export function loadBalancersRouter(sim: Simulator): Hono {
  const router = new Hono();
  const lbs = () => sim.loadBalancers;
  addOperation(router, sim, "GET", "/load-balancers", "list_load_balancers", ({ query, queries }) => {
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
  addOperation(router, sim, "POST", "/load-balancers", "create_load_balancer", ({ body }) => {
    const { lb, operation } = lbs().create(parsed(CreateLoadBalancerBody, body));
    return {
      status: 202,
      body: { load_balancer: lbs().document(lb, true), operation: operationDocument(operation) },
    };
  });
  addOperation(router, sim, "GET", "/load-balancers/:id", "get_load_balancer", ({ params }) => ({
    status: 200,
    body: { load_balancer: lbs().document(lbs().get(params.id), true) },
  }));
  addOperation(router, sim, "PATCH", "/load-balancers/:id", "update_load_balancer", ({ params, body }) => ({
    status: 200,
    body: { load_balancer: lbs().document(lbs().update(params.id, parsed(UpdateLoadBalancerBody, body)), true) },
  }));
  addOperation(router, sim, "DELETE", "/load-balancers/:id", "delete_load_balancer", ({ params }) => ({
    status: 202,
    body: { operation: operationDocument(lbs().delete(params.id)) },
  }));

  // --- backends ----------------------------------------------------------------------------------------------------
  addOperation(
    router,
    sim,
    "POST",
    "/load-balancers/:id/backends",
    "create_load_balancer_backend",
    ({ params, body }) => {
      const backend = lbs().createBackend(params.id, parsed(CreateBackendBody, body));
      return { status: 201, body: { backend: backendDocument(backend) } };
    },
  );
  addOperation(
    router,
    sim,
    "PATCH",
    "/load-balancers/:id/backends/:backend",
    "update_load_balancer_backend",
    ({ params, body }) => {
      const backend = lbs().updateBackend(params.id, params.backend, parsed(UpdateBackendBody, body));
      return { status: 200, body: { backend: backendDocument(backend) } };
    },
  );
  addOperation(
    router,
    sim,
    "DELETE",
    "/load-balancers/:id/backends/:backend",
    "delete_load_balancer_backend",
    ({ params }) => {
      lbs().deleteBackend(params.id, params.backend);
      return { status: 204 };
    },
  );

  // --- frontends ---------------------------------------------------------------------------------------------------
  addOperation(
    router,
    sim,
    "POST",
    "/load-balancers/:id/frontends",
    "create_load_balancer_frontend",
    ({ params, body }) => {
      const lb = lbs().get(params.id);
      const frontend = lbs().createFrontend(params.id, parsed(CreateFrontendBody, body));
      const mode = lb.backends.find((b) => b.id === frontend.backend_id)?.mode ?? "tcp";
      return { status: 201, body: { frontend: { ...frontend, mode } } };
    },
  );
  addOperation(
    router,
    sim,
    "DELETE",
    "/load-balancers/:id/frontends/:frontend",
    "delete_load_balancer_frontend",
    ({ params }) => {
      lbs().deleteFrontend(params.id, params.frontend);
      return { status: 204 };
    },
  );

  // --- members -----------------------------------------------------------------------------------------------------
  addOperation(
    router,
    sim,
    "PUT",
    "/load-balancers/:id/backends/:backend/members",
    "replace_load_balancer_members",
    ({ params, body }) => {
      const members = lbs().replaceMembers(params.id, params.backend, parsed(ReplaceMembersBody, body).members);
      return { status: 200, body: { members: members.map((m) => ({ ...m })) } };
    },
  );
  addOperation(
    router,
    sim,
    "POST",
    "/load-balancers/:id/backends/:backend/members",
    "create_load_balancer_member",
    ({ params, body }) => {
      const member = lbs().addMember(params.id, params.backend, parsed(MemberInput, body));
      return { status: 201, body: { member: { ...member } } };
    },
  );
  addOperation(
    router,
    sim,
    "PATCH",
    "/load-balancers/:id/backends/:backend/members/:member",
    "update_load_balancer_member",
    ({ params, body }) => {
      const member = lbs().updateMember(params.id, params.backend, params.member, parsed(UpdateMemberBody, body));
      return { status: 200, body: { member: { ...member } } };
    },
  );
  addOperation(
    router,
    sim,
    "DELETE",
    "/load-balancers/:id/backends/:backend/members/:member",
    "delete_load_balancer_member",
    ({ params }) => {
      lbs().deleteMember(params.id, params.backend, params.member);
      return { status: 204 };
    },
  );
  return router;
}

/** A backend as the API answers it: a copy, plus `health_check_path` (the HTTP check's path; "" for another check). */
function backendDocument(backend: BackendState): Record<string, unknown> {
  return {
    ...backend,
    health_check: { ...backend.health_check },
    health_check_path: backend.health_check.type === "http" ? backend.health_check.path : "",
    members: backend.members.map((m) => ({ ...m })),
  };
}
