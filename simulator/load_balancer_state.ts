/**
 * Load balancers as the simulator stores them (with their backends, health checks, members and frontends), the API's
 * health check defaults, and the `LoadBalancer` document rendered from that state.
 *
 * @module
 */
import { operationDocument } from "./world_documents.ts";
import type { OperationState, ZoneState } from "./world_state.ts";

/** A health check as stored. */
export interface HealthCheckState {
  type: "tcp" | "http" | "none";
  path: string;
  expected_status: string;
  interval_seconds: number;
  rise: number;
  fall: number;
}

/** A backend member as stored. */
export interface MemberState {
  id: string;
  backend_id: string;
  name: string;
  address: string;
  port: number;
  weight: number;
  enabled: boolean;
}

/** A backend as stored. */
export interface BackendState {
  id: string;
  name: string;
  mode: "tcp" | "http";
  balance: "roundrobin" | "leastconn" | "source";
  health_check: HealthCheckState;
  members: MemberState[];
}

/** A frontend as stored. */
export interface FrontendState {
  id: string;
  name: string;
  port: number;
  backend_id: string;
  tls: boolean;
  certificate_ids: string[];
  redirect_to_https: boolean;
}

/** A load balancer as stored. */
export interface LoadBalancerState {
  id: string;
  seq: number;
  zone: string;
  name: string;
  network_id: string;
  state: "creating" | "running" | "error" | "deleting";
  labels: Record<string, string>;
  high_availability: boolean;
  wants_ipv4: boolean;
  public_ipv4: string | null;
  public_ipv6_addresses: string[];
  configuration_generation: number;
  applied_generation: number;
  frontends: FrontendState[];
  backends: BackendState[];
  active_operation: OperationState | null;
  created_at: string;
}

/** The API's health check defaults. */
export const DEFAULT_HEALTH_CHECK: HealthCheckState = {
  type: "tcp",
  path: "/",
  expected_status: "200-399",
  interval_seconds: 2,
  rise: 2,
  fall: 3,
};

/** The `LoadBalancer` document; list items come without nodes, frontends and backends. */
export function loadBalancerDocument(
  lb: LoadBalancerState,
  options: { full: boolean; zones: ReadonlyMap<string, ZoneState> },
): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    id: lb.id,
    zone: lb.zone,
    region: options.zones.get(lb.zone)?.region,
    name: lb.name,
    network_id: lb.network_id,
    state: lb.state,
    labels: lb.labels,
    high_availability: lb.high_availability,
    public_ipv4: lb.public_ipv4,
    public_ipv6: lb.public_ipv6_addresses[0] ?? null,
    public_ipv6_addresses: lb.public_ipv6_addresses,
    address: lb.public_ipv4,
    configuration_generation: lb.configuration_generation,
    is_configuration_applied: lb.applied_generation === lb.configuration_generation,
    active_operation: lb.active_operation && lb.active_operation.status === "running"
      ? operationDocument(lb.active_operation)
      : null,
    created_at: lb.created_at,
  };
  if (options.full) {
    const vms = lb.high_availability ? 2 : 1;
    doc.nodes = Array.from({ length: vms }, (_, i) => ({
      id: `${lb.id}-vm${i}`,
      name: `lb-${lb.id}-${i}`,
      state: lb.state === "running" ? "running" : lb.state,
      is_active: lb.state === "running" && i === 0,
      is_healthy: lb.state === "running",
      health_detail: lb.state === "running" ? "" : `load balancer is ${lb.state}`,
      is_configuration_applied: lb.applied_generation === lb.configuration_generation,
    }));
    doc.frontends = lb.frontends.map((f) => ({
      ...f,
      mode: lb.backends.find((b) => b.id === f.backend_id)?.mode ?? "tcp",
    }));
    doc.backends = lb.backends.map((b) => ({
      id: b.id,
      name: b.name,
      mode: b.mode,
      balance: b.balance,
      health_check_path: b.health_check.type === "http" ? b.health_check.path : "",
      health_check: { ...b.health_check },
      members: b.members.map((m) => ({ ...m })),
    }));
  }
  return doc;
}
