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
  /** The server's /64 comes from a pool being drained: its public IPv6 is due to be renumbered. */
  ipv6_renumber_available: boolean;
  labels: Record<string, string>;
  mac_address: string;
  created_at: string;
  updated_at: string;
  interfaces: InterfaceState[];
  /** The operation on it that is pending or running (`server.stop`, `server.delete`, `server.migrate`), else null. */
  active_operation: OperationState | null;
  seq: number;
}

/** A step of an operation after its start: its machine name, when it begins, and the change it makes then. */
interface OperationStep {
  name: string;
  /** Clock time at which it begins. */
  at: number;
  /** Applied when it begins, with its clock time. */
  apply?: (at: number) => void;
}

/** An asynchronous operation. */
export interface OperationState {
  id: string;
  /** Creation order (lists of operations are newest first). */
  seq: number;
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
  /** Clock time at which it stops being `pending` and runs (its creation time for one that never waits). */
  startAt: number;
  /** Clock time at which it finishes. */
  finishAt: number;
  /** Its named steps, the first at `startAt`; absent: one step (`configure`). */
  steps?: OperationStep[];
  /** The step it is at (an index into `steps`; 0 before it runs). */
  stepIndex: number;
  /** Set: it ends `failed` with this error at its finish time, instead of `succeeded`. */
  failWith?: string;
  /** Applied when it finishes (succeeded or failed), with its clock time. */
  onFinish?: (at: number) => void;
}

/** Token scopes. */
export interface TokenState {
  token: string;
  scope: string;
}
