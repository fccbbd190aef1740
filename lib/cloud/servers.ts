/**
 * Servers of the Ankra Cloud API: one server, every server (by hostname and labels), and a server's private network
 * interfaces.
 *
 * @module
 */
import { type CloudApi, hasLabels, labelQuery, type Listed, pathId } from "./cloud_api.ts";
import { type Interface, RESPONSE_SCHEMAS, type Server } from "./schemas.ts";

/** A filter of `list_servers`. */
interface ServerFilter {
  /** Exact hostname. */
  hostname?: string;
  /** Labels every server must carry. */
  labels?: Record<string, string>;
}

/** The server verbs of the client. */
export interface ServerCalls {
  /** `get_server`: one server. */
  getServer(serverId: string, signal?: AbortSignal): Promise<Server>;
  /**
   * `list_servers`: every server across all pages, optionally filtered by exact `hostname` and by labels. The
   * filters are also applied here, so an API that ignores them cannot return a wrong match.
   */
  listServers(filter?: ServerFilter, signal?: AbortSignal): Promise<Listed<Server>>;
  /** `list_server_interfaces`: the server's private network legs in device order. */
  listServerInterfaces(serverId: string, signal?: AbortSignal): Promise<Interface[]>;
}

/** The server verbs over `api`. */
export function serverCalls(api: CloudApi): ServerCalls {
  return {
    async getServer(serverId, signal) {
      const answer = await api.call({
        operation: "get_server",
        method: "GET",
        path: `/v1/servers/${pathId(serverId)}`,
        schema: RESPONSE_SCHEMAS.get_server,
        signal,
      });
      return answer.server;
    },

    async listServers(filter = {}, signal) {
      const query = labelQuery(filter.labels);
      if (filter.hostname !== undefined) query.push(["hostname", filter.hostname]);
      const listed = await api.listAll("list_servers", { path: "/v1/servers", query, signal });
      return {
        items: listed.items.filter((s) =>
          (filter.hostname === undefined || s.hostname === filter.hostname) && hasLabels(s, filter.labels)
        ),
        skipped: listed.skipped,
      };
    },

    async listServerInterfaces(serverId, signal) {
      const answer = await api.call({
        operation: "list_server_interfaces",
        method: "GET",
        path: `/v1/servers/${pathId(serverId)}/networks`,
        schema: RESPONSE_SCHEMAS.list_server_interfaces,
        signal,
      });
      return answer.items;
    },
  };
}
