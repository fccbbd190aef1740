/**
 * Load balancers of the Ankra Cloud API: the load balancer itself (list, read, keyed create, update, delete), its
 * backends, frontends and members, and the request bodies these verbs take.
 *
 * @module
 */
import { type CloudApi, hasLabels, labelQuery, type Listed, pathId } from "./cloud_api.ts";
import {
  type Backend,
  type Frontend,
  type HealthCheck,
  type LoadBalancer,
  type Member,
  type Operation,
  RESPONSE_SCHEMAS,
} from "./schemas.ts";

/** Body of `create_load_balancer`. */
export interface CreateLoadBalancerInput {
  /** Zone to create in, e.g. `de-fsn1`; cannot change later. */
  zone: string;
  /** Name, at most 64 characters. */
  name: string;
  /** Id of the private network the load balancer reaches its members on; cannot change later. */
  network_id: string;
  /** At most 32; this controller's (`ccm.ankra.cloud/…`) say which cluster and Service own it. */
  labels?: Record<string, string>;
  /** HA pair (true) or single VM (false); omitted lets the API decide from the zone. */
  high_availability?: boolean;
  /** The IPv4 add-on; the API defaults to true, so always send it. */
  public_ipv4: boolean;
}

/** Health check fields accepted on input; omitted fields keep their value (or take the API default). */
type HealthCheckInput = Partial<HealthCheck>;

/** Body of `create_load_balancer_backend`. */
export interface CreateBackendInput {
  /** Name, `^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`. */
  name: string;
  /** `tcp` or `http`; cannot change, so a new protocol means a new backend. */
  mode: "tcp" | "http";
  /** How members are picked; the API's default is `roundrobin`. */
  balance?: "roundrobin" | "leastconn" | "source";
  /** How members are checked; omitted fields take the API's defaults. */
  health_check?: HealthCheckInput;
}

/** Body of `update_load_balancer_backend`. */
export interface UpdateBackendInput {
  /** New algorithm; omitted: unchanged. */
  balance?: "roundrobin" | "leastconn" | "source";
  /** Health check fields to change. */
  health_check?: HealthCheckInput;
}

/** Body of `create_load_balancer_frontend`. */
export interface CreateFrontendInput {
  /** `^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`; this controller's are `tcp-<port>`. */
  name: string;
  /** Public port, 1–65535: the Service's port. */
  port: number;
  /** Backend to forward to. */
  backend_id: string;
  /** Terminate TLS. */
  tls?: boolean;
  /** Certificates for TLS. */
  certificate_ids?: string[];
  /** Redirect plain HTTP to HTTPS. */
  redirect_to_https?: boolean;
}

/** A member in `replace_load_balancer_members`. */
export interface MemberInput {
  /** Name, unique within the list. */
  name: string;
  /** IPv4 or IPv6 address. */
  address: string;
  /** Member port, 1–65535: the Service's node port. */
  port: number;
  /** Weight 0–256. */
  weight?: number;
  /** False keeps the member but sends it no new connections and no checks; the API's default is true. */
  enabled?: boolean;
}

/** Budget priority of a read. */
interface PriorityOption {
  /** `high` for reads a waiting user is behind; `normal` otherwise. */
  priority?: "high" | "normal";
}

/** The load balancer verbs of the client. */
export interface LoadBalancerCalls {
  /**
   * `list_load_balancers`: every load balancer across all pages (summaries without frontends and backends),
   * filtered by labels with the API's `label` query and again here.
   */
  listLoadBalancers(
    filter?: { labels?: Record<string, string> },
    signal?: AbortSignal,
    options?: PriorityOption,
  ): Promise<Listed<LoadBalancer>>;
  /** `get_load_balancer`: the full document with frontends, backends and members. */
  getLoadBalancer(loadBalancerId: string, signal?: AbortSignal, options?: PriorityOption): Promise<LoadBalancer>;
  /**
   * `create_load_balancer` with an `Idempotency-Key` reused by every retry, so a lost or unreadable answer never
   * creates a second billable load balancer: the API replays the first answer. An error with `outcomeUnknown` (the
   * retries ran out, or the API answered `idempotency_key_outcome_unknown` or `idempotency_key_answer_not_stored`)
   * means: look the load balancer up by its labels before creating again.
   */
  createLoadBalancer(
    input: CreateLoadBalancerInput,
    signal?: AbortSignal,
  ): Promise<{ loadBalancer: LoadBalancer; operation: Operation }>;
  /** `update_load_balancer`: change the name and/or replace all labels. */
  updateLoadBalancer(
    loadBalancerId: string,
    input: { name?: string; labels?: Record<string, string> },
    signal?: AbortSignal,
  ): Promise<LoadBalancer>;
  /** `delete_load_balancer`: starts the deletion; the load balancer passes through `deleting`. */
  deleteLoadBalancer(loadBalancerId: string, signal?: AbortSignal): Promise<Operation>;
  /** `create_load_balancer_backend`. */
  createBackend(loadBalancerId: string, input: CreateBackendInput, signal?: AbortSignal): Promise<Backend>;
  /** `update_load_balancer_backend`: balance and health check only. */
  updateBackend(
    loadBalancerId: string,
    backendId: string,
    input: UpdateBackendInput,
    signal?: AbortSignal,
  ): Promise<Backend>;
  /** `delete_load_balancer_backend` (409 while a frontend forwards to it). */
  deleteBackend(loadBalancerId: string, backendId: string, signal?: AbortSignal): Promise<void>;
  /** `create_load_balancer_frontend`. */
  createFrontend(loadBalancerId: string, input: CreateFrontendInput, signal?: AbortSignal): Promise<Frontend>;
  /** `delete_load_balancer_frontend`. */
  deleteFrontend(loadBalancerId: string, frontendId: string, signal?: AbortSignal): Promise<void>;
  /** `replace_load_balancer_members`: the backend's whole member list in one configuration change. */
  replaceMembers(
    loadBalancerId: string,
    backendId: string,
    members: MemberInput[],
    signal?: AbortSignal,
  ): Promise<Member[]>;
}

/** The load balancer verbs over `api`. */
export function loadBalancerCalls(api: CloudApi): LoadBalancerCalls {
  const path = (loadBalancerId: string, rest = "") => `/v1/load-balancers/${pathId(loadBalancerId)}${rest}`;
  /** The one shape of a part's deletion: `DELETE` of the part's path, no answer to read. */
  const deletePart = async (
    operation: "delete_load_balancer_backend" | "delete_load_balancer_frontend",
    loadBalancerId: string,
    part: string,
    signal?: AbortSignal,
  ) => {
    await api.call({ operation, method: "DELETE", path: path(loadBalancerId, part), schema: undefined, signal });
  };
  return {
    async listLoadBalancers(filter = {}, signal, options = {}) {
      const listed = await api.listAll("list_load_balancers", {
        path: "/v1/load-balancers",
        query: labelQuery(filter.labels),
        signal,
        priority: options.priority,
      });
      return { items: listed.items.filter((lb) => hasLabels(lb, filter.labels)), skipped: listed.skipped };
    },

    async getLoadBalancer(loadBalancerId, signal, options = {}) {
      const answer = await api.call({
        operation: "get_load_balancer",
        method: "GET",
        path: path(loadBalancerId),
        schema: RESPONSE_SCHEMAS.get_load_balancer,
        signal,
        priority: options.priority,
      });
      return answer.load_balancer;
    },

    async createLoadBalancer(input, signal) {
      const answer = await api.call({
        operation: "create_load_balancer",
        method: "POST",
        path: "/v1/load-balancers",
        body: input,
        idempotent: true,
        schema: RESPONSE_SCHEMAS.create_load_balancer,
        signal,
      });
      return { loadBalancer: answer.load_balancer, operation: answer.operation };
    },

    async updateLoadBalancer(loadBalancerId, input, signal) {
      const answer = await api.call({
        operation: "update_load_balancer",
        method: "PATCH",
        path: path(loadBalancerId),
        body: input,
        schema: RESPONSE_SCHEMAS.update_load_balancer,
        signal,
      });
      return answer.load_balancer;
    },

    async deleteLoadBalancer(loadBalancerId, signal) {
      const answer = await api.call({
        operation: "delete_load_balancer",
        method: "DELETE",
        path: path(loadBalancerId),
        schema: RESPONSE_SCHEMAS.delete_load_balancer,
        signal,
      });
      return answer.operation;
    },

    async createBackend(loadBalancerId, input, signal) {
      const answer = await api.call({
        operation: "create_load_balancer_backend",
        method: "POST",
        path: path(loadBalancerId, "/backends"),
        body: input,
        schema: RESPONSE_SCHEMAS.create_load_balancer_backend,
        signal,
      });
      return answer.backend;
    },

    async updateBackend(loadBalancerId, backendId, input, signal) {
      const answer = await api.call({
        operation: "update_load_balancer_backend",
        method: "PATCH",
        path: path(loadBalancerId, `/backends/${pathId(backendId)}`),
        body: input,
        schema: RESPONSE_SCHEMAS.update_load_balancer_backend,
        signal,
      });
      return answer.backend;
    },

    deleteBackend(loadBalancerId, backendId, signal) {
      return deletePart("delete_load_balancer_backend", loadBalancerId, `/backends/${pathId(backendId)}`, signal);
    },

    async createFrontend(loadBalancerId, input, signal) {
      const answer = await api.call({
        operation: "create_load_balancer_frontend",
        method: "POST",
        path: path(loadBalancerId, "/frontends"),
        body: input,
        schema: RESPONSE_SCHEMAS.create_load_balancer_frontend,
        signal,
      });
      return answer.frontend;
    },

    deleteFrontend(loadBalancerId, frontendId, signal) {
      return deletePart("delete_load_balancer_frontend", loadBalancerId, `/frontends/${pathId(frontendId)}`, signal);
    },

    async replaceMembers(loadBalancerId, backendId, members, signal) {
      const answer = await api.call({
        operation: "replace_load_balancer_members",
        method: "PUT",
        path: path(loadBalancerId, `/backends/${pathId(backendId)}/members`),
        body: { members },
        schema: RESPONSE_SCHEMAS.replace_load_balancer_members,
        signal,
      });
      return answer.members;
    },
  };
}
