/**
 * Where load balancers can go, from the Ankra Cloud API: zones and their capabilities, and private networks.
 *
 * @module
 */
import { type CloudApi, type Listed, pathId } from "./cloud_api.ts";
import { type Network, RESPONSE_SCHEMAS, type Zone, type ZoneCapabilities } from "./schemas.ts";

/** The zone and network verbs of the client. */
export interface NetworkCalls {
  /** `list_zones`: every zone visible to the account. */
  listZones(signal?: AbortSignal): Promise<Zone[]>;
  /** `get_zone_capabilities`: what the zone can do (HA load balancers, …). */
  getZoneCapabilities(zone: string, signal?: AbortSignal): Promise<ZoneCapabilities>;
  /** `list_networks`: every private network across all pages. */
  listNetworks(signal?: AbortSignal): Promise<Listed<Network>>;
  /** `get_network`: one network with its members. */
  getNetwork(networkId: string, signal?: AbortSignal): Promise<Network>;
}

/** The zone and network verbs over `api`. */
export function networkCalls(api: CloudApi): NetworkCalls {
  return {
    async listZones(signal) {
      const answer = await api.call({
        operation: "list_zones",
        method: "GET",
        path: "/v1/zones",
        schema: RESPONSE_SCHEMAS.list_zones,
        signal,
      });
      return answer.items;
    },

    getZoneCapabilities(zone, signal) {
      return api.call({
        operation: "get_zone_capabilities",
        method: "GET",
        path: `/v1/zones/${pathId(zone)}/capabilities`,
        schema: RESPONSE_SCHEMAS.get_zone_capabilities,
        signal,
      });
    },

    listNetworks(signal) {
      return api.listAll("list_networks", { path: "/v1/networks", signal });
    },

    async getNetwork(networkId, signal) {
      const answer = await api.call({
        operation: "get_network",
        method: "GET",
        path: `/v1/networks/${pathId(networkId)}`,
        schema: RESPONSE_SCHEMAS.get_network,
        signal,
      });
      return answer.network;
    },
  };
}
