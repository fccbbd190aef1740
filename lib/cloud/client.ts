/**
 * The Ankra Cloud API client: one small verb per operation, every answer validated, lists read across all pages.
 * List items are decoded one by one: an item of the wrong shape is left out and reported (a warning naming it, a
 * metric, and the `skipped` part of the answer), so it costs that item only. All requests go through one
 * {@linkcode CloudTransport} (budget, retries, timeouts, metrics).
 *
 * @module
 */
import * as v from "valibot";
import * as log from "../log.ts";
import type { MetricsRegistry } from "../runtime/metrics.ts";
import { CloudApiError } from "./errors.ts";
import { CloudRequestBudget } from "./request_budget.ts";
import { type CallSpec, CloudTransport, type CredentialProblem, type RetryPolicy } from "./transport.ts";
import {
  type Backend,
  type Edge,
  type EdgeMember,
  type Frontend,
  type HealthCheck,
  type Interface,
  LIST_ITEM_SCHEMAS,
  ListPageSchema,
  type LoadBalancer,
  type Member,
  type Network,
  type Operation,
  RESPONSE_SCHEMAS,
  type Server,
  type Zone,
  type ZoneCapabilities,
} from "./schemas.ts";

/** Page size used for every list (the API's maximum). */
export const PAGE_LIMIT = 100;
/** Safety stop for a list whose cursors never end. */
const MAX_PAGES = 1_000;

/** Body of `create_load_balancer`. */
export interface CreateLoadBalancerInput {
  /** Zone. */
  zone: string;
  /** Name, at most 64 characters. */
  name: string;
  /** Private network. */
  network_id: string;
  /** Labels. */
  labels?: Record<string, string>;
  /** HA pair (true) or single VM (false); omitted lets the API decide from the zone. */
  high_availability?: boolean;
  /** The IPv4 add-on; the API defaults to true, so always send it. */
  public_ipv4: boolean;
}

/** Health check fields accepted on input; omitted fields keep their value (or take the API default). */
export type HealthCheckInput = Partial<HealthCheck>;

/** Body of `create_load_balancer_backend`. */
export interface CreateBackendInput {
  /** Name, `^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`. */
  name: string;
  /** Mode. */
  mode: "tcp" | "http";
  /** Balance algorithm. */
  balance?: "roundrobin" | "leastconn" | "source";
  /** Health check. */
  health_check?: HealthCheckInput;
}

/** Body of `update_load_balancer_backend`. */
export interface UpdateBackendInput {
  /** Balance algorithm. */
  balance?: "roundrobin" | "leastconn" | "source";
  /** Health check fields to change. */
  health_check?: HealthCheckInput;
}

/** Body of `create_load_balancer_frontend`. */
export interface CreateFrontendInput {
  /** Name. */
  name: string;
  /** Listening port. */
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
  /** Port. */
  port: number;
  /** Weight 0–256. */
  weight?: number;
  /** Enabled. */
  enabled?: boolean;
}

/** A member in `update_edge`. */
export interface EdgeMemberInput {
  /** Name. */
  name: string;
  /** Port the edge listens on. */
  frontend_port: number;
  /** Address. */
  address: string;
  /** Port. */
  port: number;
  /** Weight. */
  weight?: number;
  /** Enabled. */
  enabled?: boolean;
}

/** Body of `update_edge`. */
export interface UpdateEdgeInput {
  /** New name. */
  name?: string;
  /** Roles (combined edges). */
  roles?: string[];
  /** The `load_balancer` role's whole member list. */
  members?: EdgeMemberInput[];
}

/** Where the API is and how to reach it. */
export interface ClientConfig {
  /** API token (never logged). */
  token: string;
  /** Base URL of the API, without a trailing slash. */
  apiUrl: string;
  /** PEM text of extra certificate authorities trusted besides the system roots. */
  caBundle?: string;
  /** Optional upper bound on requests per minute (the API's own limit is followed in any case). */
  maxRequestsPerMinute?: number;
  /** Burst of the upper bound. */
  requestBurst?: number;
  /** Timeout of one HTTP request, in milliseconds (default 30 s). */
  requestTimeoutMs?: number;
}

/** Options of {@linkcode AnkraCloudClient}. */
export interface ClientOptions {
  /** Metrics registry for request metrics. */
  metrics?: MetricsRegistry;
  /** Retry limits. */
  retry?: Partial<RetryPolicy>;
  /** A budget to share; a new one from the configuration otherwise. */
  budget?: CloudRequestBudget;
}

/** A list item left out because it did not have the expected shape. */
export interface SkippedItem {
  /** Its `id`, when that much could be read. */
  id?: string;
  /** Its position in the whole list. */
  index: number;
  /** What was wrong: the field and the rule. */
  problem: string;
}

/** A complete list: the items, and those left out because of their shape. */
export interface Listed<T> {
  /** Items that decoded. */
  items: T[];
  /** Items left out. */
  skipped: SkippedItem[];
}

function id(value: string): string {
  return encodeURIComponent(value);
}

function labelQuery(labels: Record<string, string> | undefined): [string, string][] {
  return Object.entries(labels ?? {}).map(([key, value]) => ["label", `${key}=${value}`]);
}

function hasLabels(item: { labels?: Record<string, string> | null }, labels: Record<string, string> | undefined) {
  return Object.entries(labels ?? {}).every(([key, value]) => item.labels?.[key] === value);
}

/** The Ankra Cloud API client. */
export class AnkraCloudClient {
  readonly #transport: CloudTransport;
  readonly #invalidItems?: ReturnType<MetricsRegistry["counter"]>;

  /** Creates a client. */
  constructor(config: ClientConfig, options: ClientOptions = {}) {
    const budget = options.budget ?? new CloudRequestBudget({
      maxRequestsPerMinute: config.maxRequestsPerMinute,
      burst: config.requestBurst,
    });
    this.#invalidItems = options.metrics?.counter(
      "ankra_cloud_invalid_list_items_total",
      "List items left out because they did not have the expected shape, by operation.",
    );
    this.#transport = new CloudTransport({
      apiUrl: config.apiUrl,
      token: config.token,
      caBundle: config.caBundle,
      timeoutMs: config.requestTimeoutMs,
      budget,
      metrics: options.metrics,
      retry: options.retry,
    });
  }

  /** Why the API refuses the token, while it does; undefined otherwise. */
  get credentialProblem(): CredentialProblem | undefined {
    return this.#transport.credentialProblem;
  }

  /** The shared request budget. */
  get budget(): CloudRequestBudget {
    return this.#transport.budget;
  }

  /** Releases the HTTP client. */
  close(): void {
    this.#transport.close();
  }

  #call<S extends v.GenericSchema | undefined>(spec: CallSpec<S>) {
    return this.#transport.call(spec);
  }

  async #listAll<K extends keyof typeof LIST_ITEM_SCHEMAS>(
    operation: K,
    path: string,
    query: [string, string][],
    signal?: AbortSignal,
    priority?: "high" | "normal",
  ): Promise<Listed<v.InferOutput<(typeof LIST_ITEM_SCHEMAS)[K]>>> {
    type T = v.InferOutput<(typeof LIST_ITEM_SCHEMAS)[K]>;
    const schema = LIST_ITEM_SCHEMAS[operation] as v.GenericSchema;
    const listed: Listed<T> = { items: [], skipped: [] };
    let index = 0;
    let cursor: string | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const pageQuery: [string, string][] = [...query, ["limit", String(PAGE_LIMIT)]];
      if (cursor) pageQuery.push(["cursor", cursor]);
      const answer = await this.#call({
        operation,
        method: "GET",
        path,
        query: pageQuery,
        schema: ListPageSchema,
        signal,
        priority,
      });
      for (const raw of answer.items) {
        const parsed = v.safeParse(schema, raw);
        if (parsed.success) listed.items.push(parsed.output as T);
        else listed.skipped.push(this.#skip(operation, raw, index, parsed.issues[0]));
        index++;
      }
      if (!answer.next_cursor || answer.next_cursor === cursor) return listed;
      cursor = answer.next_cursor;
    }
    throw new CloudApiError("invalid_answer", {
      operation,
      cause: `more than ${MAX_PAGES} pages: the cursor never ends`,
    });
  }

  #skip(operation: string, raw: unknown, index: number, issue: v.BaseIssue<unknown>): SkippedItem {
    const rawId = (raw as { id?: unknown } | null)?.id;
    const id = typeof rawId === "string" ? rawId : undefined;
    const problem = `field ${v.getDotPath(issue) ?? "(item)"}: ${issue.message}`;
    this.#invalidItems?.inc({ operation });
    log.warn("a list item from the Ankra Cloud API has the wrong shape; it is left out, the rest is used", {
      operation,
      item: id ?? `#${index}`,
      problem,
    });
    return { id, index, problem };
  }

  // --- servers ---------------------------------------------------------------------------------------------------

  /** `get_server`: one server. */
  async getServer(serverId: string, signal?: AbortSignal): Promise<Server> {
    const answer = await this.#call({
      operation: "get_server",
      method: "GET",
      path: `/v1/servers/${id(serverId)}`,
      schema: RESPONSE_SCHEMAS.get_server,
      signal,
    });
    return answer.server;
  }

  /**
   * `list_servers`: every server across all pages, optionally filtered by exact `hostname` and by labels. The
   * filters are also applied here, so an API that ignores them cannot return a wrong match.
   */
  async listServers(
    filter: { hostname?: string; labels?: Record<string, string> } = {},
    signal?: AbortSignal,
  ): Promise<Listed<Server>> {
    const query = labelQuery(filter.labels);
    if (filter.hostname !== undefined) query.push(["hostname", filter.hostname]);
    const listed = await this.#listAll("list_servers", "/v1/servers", query, signal);
    return {
      items: listed.items.filter((s) =>
        (filter.hostname === undefined || s.hostname === filter.hostname) && hasLabels(s, filter.labels)
      ),
      skipped: listed.skipped,
    };
  }

  /** `list_server_interfaces`: the server's private network legs in device order. */
  async listServerInterfaces(serverId: string, signal?: AbortSignal): Promise<Interface[]> {
    const answer = await this.#call({
      operation: "list_server_interfaces",
      method: "GET",
      path: `/v1/servers/${id(serverId)}/networks`,
      schema: RESPONSE_SCHEMAS.list_server_interfaces,
      signal,
    });
    return answer.items;
  }

  // --- zones and networks ----------------------------------------------------------------------------------------

  /** `list_zones`: every zone visible to the account. */
  async listZones(signal?: AbortSignal): Promise<Zone[]> {
    const answer = await this.#call({
      operation: "list_zones",
      method: "GET",
      path: "/v1/zones",
      schema: RESPONSE_SCHEMAS.list_zones,
      signal,
    });
    return answer.items;
  }

  /** `get_zone_capabilities`: what the zone can do (HA load balancers, …). */
  getZoneCapabilities(zone: string, signal?: AbortSignal): Promise<ZoneCapabilities> {
    return this.#call({
      operation: "get_zone_capabilities",
      method: "GET",
      path: `/v1/zones/${id(zone)}/capabilities`,
      schema: RESPONSE_SCHEMAS.get_zone_capabilities,
      signal,
    });
  }

  /** `list_networks`: every private network across all pages. */
  listNetworks(signal?: AbortSignal): Promise<Listed<Network>> {
    return this.#listAll("list_networks", "/v1/networks", [], signal);
  }

  /** `get_network`: one network with its members. */
  async getNetwork(networkId: string, signal?: AbortSignal): Promise<Network> {
    const answer = await this.#call({
      operation: "get_network",
      method: "GET",
      path: `/v1/networks/${id(networkId)}`,
      schema: RESPONSE_SCHEMAS.get_network,
      signal,
    });
    return answer.network;
  }

  // --- load balancers --------------------------------------------------------------------------------------------

  /**
   * `list_load_balancers`: every load balancer across all pages (summaries without frontends and backends),
   * filtered by labels with the API's `label` query and again here.
   */
  async listLoadBalancers(
    filter: { labels?: Record<string, string> } = {},
    signal?: AbortSignal,
    options: { priority?: "high" | "normal" } = {},
  ): Promise<Listed<LoadBalancer>> {
    const listed = await this.#listAll(
      "list_load_balancers",
      "/v1/load-balancers",
      labelQuery(filter.labels),
      signal,
      options.priority,
    );
    return { items: listed.items.filter((lb) => hasLabels(lb, filter.labels)), skipped: listed.skipped };
  }

  /** `get_load_balancer`: the full document with frontends, backends and members. */
  async getLoadBalancer(
    loadBalancerId: string,
    signal?: AbortSignal,
    options: { priority?: "high" | "normal" } = {},
  ): Promise<LoadBalancer> {
    const answer = await this.#call({
      operation: "get_load_balancer",
      method: "GET",
      path: `/v1/load-balancers/${id(loadBalancerId)}`,
      schema: RESPONSE_SCHEMAS.get_load_balancer,
      signal,
      priority: options.priority,
    });
    return answer.load_balancer;
  }

  /**
   * `create_load_balancer` with an `Idempotency-Key` reused by every retry, so a lost answer never creates a second
   * billable load balancer. A `conflict` with reason `idempotency_key_outcome_unknown` or
   * `idempotency_key_answer_not_stored` means: look the load balancer up by its labels before creating again.
   */
  async createLoadBalancer(
    input: CreateLoadBalancerInput,
    signal?: AbortSignal,
  ): Promise<{ loadBalancer: LoadBalancer; operation: Operation }> {
    const answer = await this.#call({
      operation: "create_load_balancer",
      method: "POST",
      path: "/v1/load-balancers",
      body: input,
      idempotent: true,
      schema: RESPONSE_SCHEMAS.create_load_balancer,
      signal,
    });
    return { loadBalancer: answer.load_balancer, operation: answer.operation };
  }

  /** `update_load_balancer`: change the name and/or replace all labels. */
  async updateLoadBalancer(
    loadBalancerId: string,
    input: { name?: string; labels?: Record<string, string> },
    signal?: AbortSignal,
  ): Promise<LoadBalancer> {
    const answer = await this.#call({
      operation: "update_load_balancer",
      method: "PATCH",
      path: `/v1/load-balancers/${id(loadBalancerId)}`,
      body: input,
      schema: RESPONSE_SCHEMAS.update_load_balancer,
      signal,
    });
    return answer.load_balancer;
  }

  /** `delete_load_balancer`: starts the deletion; the load balancer passes through `deleting`. */
  async deleteLoadBalancer(loadBalancerId: string, signal?: AbortSignal): Promise<Operation> {
    const answer = await this.#call({
      operation: "delete_load_balancer",
      method: "DELETE",
      path: `/v1/load-balancers/${id(loadBalancerId)}`,
      schema: RESPONSE_SCHEMAS.delete_load_balancer,
      signal,
    });
    return answer.operation;
  }

  /** `create_load_balancer_backend`. */
  async createBackend(loadBalancerId: string, input: CreateBackendInput, signal?: AbortSignal): Promise<Backend> {
    const answer = await this.#call({
      operation: "create_load_balancer_backend",
      method: "POST",
      path: `/v1/load-balancers/${id(loadBalancerId)}/backends`,
      body: input,
      schema: RESPONSE_SCHEMAS.create_load_balancer_backend,
      signal,
    });
    return answer.backend;
  }

  /** `update_load_balancer_backend`: balance and health check only. */
  async updateBackend(
    loadBalancerId: string,
    backendId: string,
    input: UpdateBackendInput,
    signal?: AbortSignal,
  ): Promise<Backend> {
    const answer = await this.#call({
      operation: "update_load_balancer_backend",
      method: "PATCH",
      path: `/v1/load-balancers/${id(loadBalancerId)}/backends/${id(backendId)}`,
      body: input,
      schema: RESPONSE_SCHEMAS.update_load_balancer_backend,
      signal,
    });
    return answer.backend;
  }

  /** `delete_load_balancer_backend` (409 while a frontend forwards to it). */
  async deleteBackend(loadBalancerId: string, backendId: string, signal?: AbortSignal): Promise<void> {
    await this.#call({
      operation: "delete_load_balancer_backend",
      method: "DELETE",
      path: `/v1/load-balancers/${id(loadBalancerId)}/backends/${id(backendId)}`,
      schema: undefined,
      signal,
    });
  }

  /** `create_load_balancer_frontend`. */
  async createFrontend(loadBalancerId: string, input: CreateFrontendInput, signal?: AbortSignal): Promise<Frontend> {
    const answer = await this.#call({
      operation: "create_load_balancer_frontend",
      method: "POST",
      path: `/v1/load-balancers/${id(loadBalancerId)}/frontends`,
      body: input,
      schema: RESPONSE_SCHEMAS.create_load_balancer_frontend,
      signal,
    });
    return answer.frontend;
  }

  /** `delete_load_balancer_frontend`. */
  async deleteFrontend(loadBalancerId: string, frontendId: string, signal?: AbortSignal): Promise<void> {
    await this.#call({
      operation: "delete_load_balancer_frontend",
      method: "DELETE",
      path: `/v1/load-balancers/${id(loadBalancerId)}/frontends/${id(frontendId)}`,
      schema: undefined,
      signal,
    });
  }

  /** `replace_load_balancer_members`: the backend's whole member list in one configuration change. */
  async replaceMembers(
    loadBalancerId: string,
    backendId: string,
    members: MemberInput[],
    signal?: AbortSignal,
  ): Promise<Member[]> {
    const answer = await this.#call({
      operation: "replace_load_balancer_members",
      method: "PUT",
      path: `/v1/load-balancers/${id(loadBalancerId)}/backends/${id(backendId)}/members`,
      body: { members },
      schema: RESPONSE_SCHEMAS.replace_load_balancer_members,
      signal,
    });
    return answer.members;
  }

  // --- edges -----------------------------------------------------------------------------------------------------

  /** `list_edges`: every edge (without machines and members). */
  listEdges(signal?: AbortSignal): Promise<Listed<Edge>> {
    return this.#listAll("list_edges", "/v1/edges", [], signal);
  }

  /** `get_edge`: the edge with machines, addresses and members. */
  async getEdge(edgeId: string, signal?: AbortSignal): Promise<Edge> {
    const answer = await this.#call({
      operation: "get_edge",
      method: "GET",
      path: `/v1/edges/${id(edgeId)}`,
      schema: RESPONSE_SCHEMAS.get_edge,
      signal,
    });
    return answer.edge;
  }

  /** `update_edge`: one `edge.sync` operation; `members` replaces the whole list (send `[]` to empty it). */
  async updateEdge(
    edgeId: string,
    input: UpdateEdgeInput,
    signal?: AbortSignal,
  ): Promise<{ edge: Edge; operation: Operation }> {
    const answer = await this.#call({
      operation: "update_edge",
      method: "PATCH",
      path: `/v1/edges/${id(edgeId)}`,
      body: input,
      schema: RESPONSE_SCHEMAS.update_edge,
      signal,
    });
    return { edge: answer.edge, operation: answer.operation };
  }

  /** `get_operation`. */
  async getOperation(operationId: string, signal?: AbortSignal): Promise<Operation> {
    const answer = await this.#call({
      operation: "get_operation",
      method: "GET",
      path: `/v1/operations/${id(operationId)}`,
      schema: RESPONSE_SCHEMAS.get_operation,
      signal,
    });
    return answer.operation;
  }
}

export type {
  Backend,
  Edge,
  EdgeMember,
  Frontend,
  Interface,
  LoadBalancer,
  Member,
  Network,
  Operation,
  Server,
  Zone,
  ZoneCapabilities,
};
