/**
 * Edges and operations of the Ankra Cloud API: combined edges whose `load_balancer` role serves Services, and the
 * operations that creates, deletes and edge updates start.
 *
 * @module
 */
import { type CloudApi, type Listed, pathId } from "./cloud_api.ts";
import { type Edge, type Operation, RESPONSE_SCHEMAS } from "./schemas.ts";

/** A member in `update_edge`. */
export interface EdgeMemberInput {
  /** Unique in the list; this cluster's start with its own prefix (`edgeMemberName`), as members carry no labels. */
  name: string;
  /** Port the edge listens on. */
  frontend_port: number;
  /** IPv4 or IPv6 address connections go to (a node's, for this controller's members). */
  address: string;
  /** Port on the member the edge forwards to: the Service's node port. */
  port: number;
  /** 0–256 (the API's default 100); 0 takes no new connections. */
  weight?: number;
  /** False keeps the member but sends it no new connections; the API's default is true. */
  enabled?: boolean;
}

/** Body of `update_edge`. */
interface UpdateEdgeInput {
  /** At most 64 characters; omitted: unchanged. */
  name?: string;
  /** Roles (combined edges). */
  roles?: string[];
  /** The `load_balancer` role's whole member list. */
  members?: EdgeMemberInput[];
}

/** The edge and operation verbs of the client. */
export interface EdgeCalls {
  /** `list_edges`: every edge (without machines and members). */
  listEdges(signal?: AbortSignal): Promise<Listed<Edge>>;
  /** `get_edge`: the edge with machines, addresses and members. */
  getEdge(edgeId: string, signal?: AbortSignal): Promise<Edge>;
  /** `update_edge`: one `edge.sync` operation; `members` replaces the whole list (send `[]` to empty it). */
  updateEdge(
    edgeId: string,
    input: UpdateEdgeInput,
    signal?: AbortSignal,
  ): Promise<{ edge: Edge; operation: Operation }>;
  /** `get_operation`. */
  getOperation(operationId: string, signal?: AbortSignal): Promise<Operation>;
}

/** The edge and operation verbs over `api`. */
export function edgeCalls(api: CloudApi): EdgeCalls {
  return {
    listEdges(signal) {
      return api.listAll("list_edges", { path: "/v1/edges", signal });
    },

    async getEdge(edgeId, signal) {
      const answer = await api.call({
        operation: "get_edge",
        method: "GET",
        path: `/v1/edges/${pathId(edgeId)}`,
        schema: RESPONSE_SCHEMAS.get_edge,
        signal,
      });
      return answer.edge;
    },

    async updateEdge(edgeId, input, signal) {
      const answer = await api.call({
        operation: "update_edge",
        method: "PATCH",
        path: `/v1/edges/${pathId(edgeId)}`,
        body: input,
        schema: RESPONSE_SCHEMAS.update_edge,
        signal,
      });
      return { edge: answer.edge, operation: answer.operation };
    },

    async getOperation(operationId, signal) {
      const answer = await api.call({
        operation: "get_operation",
        method: "GET",
        path: `/v1/operations/${pathId(operationId)}`,
        schema: RESPONSE_SCHEMAS.get_operation,
        signal,
      });
      return answer.operation;
    },
  };
}
