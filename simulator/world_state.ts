/**
 * The shapes the simulator keeps its world in: zones, private networks, servers with their network legs, operations
 * and tokens. Load balancers and edges have theirs beside their own modules.
 *
 * @module
 */
import type { IpPrefix } from "../lib/ip_address.ts";

/** A zone and its platform nodes. */
export interface ZoneState {
  name: string;
  region: string;
  display_name: string;
  position: number;
  compute_nodes: number;
  servers: number;
  storage_backends: string[];
  created_at: string;
}

/** A private network. */
export interface NetworkState {
  id: string;
  name: string;
  zone: string;
  region: string;
  zones: string[];
  cidr: string;
  ula_prefix: string;
  gateway: string;
  prefix4: IpPrefix;
  prefix6: IpPrefix;
  created_at: string;
  seq: number;
}

/** A server's network leg. */
export interface InterfaceState {
  id: string;
  server_id: string;
  network_id: string;
  address: string;
  address6: string;
  mac_address: string;
  device_index: number;
}

/** A server. */
export interface ServerState {
  id: string;
  zone: string;
  hostname: string;
  title: string;
  plan: string;
  state: string;
  public_ipv4: string | null;
  public_ipv6: string | null;
  public_ipv6_prefix: string | null;
  public_ipv6_is_private: boolean;
  labels: Record<string, string>;
  mac_address: string;
  created_at: string;
  updated_at: string;
  interfaces: InterfaceState[];
  seq: number;
}

/** An asynchronous operation. */
export interface OperationState {
  id: string;
  kind: string;
  status: "pending" | "running" | "succeeded" | "failed" | "cancelled";
  load_balancer_id: string | null;
  edge_id: string | null;
  server_id: string | null;
  error: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  deadline_at: string;
  events: { at: string; kind: string; message: string; data: Record<string, unknown> }[];
  /** Clock time at which it finishes. */
  finishAt: number;
  /** Applied when it finishes. */
  onFinish?: () => void;
}

/** Token scopes. */
export interface TokenState {
  token: string;
  scope: string;
}
