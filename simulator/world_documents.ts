/**
 * The API documents of the simulator's world, rendered from its state as the customer API answers them: `Zone`,
 * `ZoneCapabilities` (derived from the zone's nodes), `Network`, `Server` and `Operation`.
 *
 * @module
 */
import type { NetworkState, OperationState, ServerState, ZoneState } from "./world_state.ts";

const PLANS: Record<string, { cores: number; memory: number; storage: number }> = {
  "starter-1c-1g": { cores: 1, memory: 1024, storage: 20 },
  "standard-2c-4g": { cores: 2, memory: 4096, storage: 40 },
  "standard-4c-8g": { cores: 4, memory: 8192, storage: 80 },
};

/** True when the zone can place an HA pair (two compute nodes). */
export function zoneHasLoadBalancerHa(zone: ZoneState): boolean {
  return zone.compute_nodes >= 2;
}

/** True when a server can be live-migrated (two compute nodes and Ankra Storage, `ceph`). */
export function zoneHasLiveMigration(zone: ZoneState): boolean {
  return zone.compute_nodes >= 2 && zone.storage_backends.includes("ceph");
}

/** True when edges can be placed on separate VMs (three servers). */
export function zoneHasSeparateEdges(zone: ZoneState): boolean {
  return zone.servers >= 3;
}

/** The `Zone` document. */
export function zoneDocument(zone: ZoneState): Record<string, unknown> {
  return {
    name: zone.name,
    region: zone.region,
    display_name: zone.display_name,
    created_at: zone.created_at,
    underlay: "fabric",
    country: "DE",
    position: zone.position,
    customer_visible: true,
    is_private_cloud: false,
  };
}

/** The `ZoneCapabilities` document, derived from the zone's nodes as the API documents. */
export function zoneCapabilities(zone: ZoneState, publicIpv4Free: number): Record<string, unknown> {
  const ceph = zone.storage_backends.includes("ceph");
  const features = {
    compute: zone.compute_nodes >= 1,
    live_migration: zoneHasLiveMigration(zone),
    ha_restart: zone.compute_nodes >= 2 && ceph,
    load_balancer_ha: zoneHasLoadBalancerHa(zone),
    separate_edges: zoneHasSeparateEdges(zone),
  };
  const reasons: Record<string, string> = {};
  if (!features.compute) reasons.compute = "the zone has no compute node; it is a network-only location";
  if (!features.load_balancer_ha) {
    reasons.load_balancer_ha = `the zone has ${zone.compute_nodes} compute node(s); it needs 2`;
  }
  if (!features.live_migration) reasons.live_migration = "needs 2 compute nodes and Ankra Storage (ceph)";
  if (!features.ha_restart) reasons.ha_restart = "needs 2 compute nodes and Ankra Storage (ceph)";
  if (!features.separate_edges) {
    reasons.separate_edges = `the zone has ${zone.servers} server(s); edges on separate VMs start at 3`;
  }
  return {
    stage: Math.min(zone.servers, 3),
    servers: zone.servers,
    gateways: zone.servers > 0 ? 1 : 0,
    compute_nodes: zone.compute_nodes,
    storage_backends: zone.storage_backends,
    features,
    reasons,
    underlay: "fabric",
    datacenters: [{
      name: null,
      nodes: zone.servers,
      storage_nodes: ceph ? zone.servers : 0,
      compute_nodes: zone.compute_nodes,
    }],
    latency_budget: [],
    storage_durability: ceph && zone.servers >= 2 ? "replicated" : "single_copy",
    storage_durability_reason: null,
    default_storage_tier: ceph ? "standard" : "local-nvme",
    ceph_tiers_offered: ceph,
    ceph_tiers_unavailable_reason: ceph ? null : "Ankra Storage is not active in this zone",
    public_ipv4: { total: 254, free: publicIpv4Free },
    cpu_pools: [],
    backup_targets: [],
    local_storage: { accepts_new_volumes: true, reason: null },
    warnings: [],
    recovery: "none",
    recovery_reason: null,
    gateway_redundancy: "single",
    gateway_redundancy_reason: null,
    uplink_redundancy: "unknown",
    uplink_redundancy_reason: null,
    object_storage_durability: "none",
    offsite_backups: false,
    offsite_backups_reason: null,
    default_backup: null,
  };
}

/** The `Network` document; with `servers`, also its `members` (their legs on it), as `get_network` answers. */
export function networkDocument(
  network: NetworkState,
  servers?: Iterable<ServerState>,
): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    id: network.id,
    zone: network.zone,
    region: network.region,
    zones: network.zones,
    name: network.name,
    cidr: network.cidr,
    ula_prefix: network.ula_prefix,
    gateway: network.gateway,
    router_id: null,
    created_at: network.created_at,
  };
  if (servers) {
    doc.members = [...servers].flatMap((s) => s.interfaces)
      .filter((i) => i.network_id === network.id).map((i) => ({ ...i }));
  }
  return doc;
}

/** The `Server` document. */
export function serverDocument(server: ServerState, zones: ReadonlyMap<string, ZoneState>): Record<string, unknown> {
  const plan = PLANS[server.plan] ?? { cores: 2, memory: 4096, storage: 40 };
  const op = server.active_operation;
  const active = op && (op.status === "pending" || op.status === "running") ? op : undefined;
  return {
    id: server.id,
    zone: server.zone,
    region: zones.get(server.zone)?.region,
    hostname: server.hostname,
    title: server.title,
    plan: server.plan,
    cores: plan.cores,
    memory_mebibytes: plan.memory,
    storage_gibibytes: plan.storage,
    template: "debian-12",
    state: server.state,
    // A stop asked for is the desired power at once; the state follows when the operation gets there.
    desired_power: ["stopped", "stopping"].includes(server.state) || active?.kind === "server.stop"
      ? "stopped"
      : "running",
    state_detail: server.state === "error" ? "the hypervisor reported a failure" : "",
    public_ipv4: server.public_ipv4,
    public_ipv6: server.public_ipv6,
    public_ipv6_prefix: server.public_ipv6_prefix,
    public_ipv6_is_private: server.public_ipv6_is_private,
    ipv6_renumber_available: server.ipv6_renumber_available,
    ssh_command: server.public_ipv4 ? `ssh root@${server.public_ipv4}` : null,
    mac_address: server.mac_address,
    labels: server.labels,
    server_group_id: null,
    ha_policy: "restart",
    migration_policy: "default",
    cpu_pool: null,
    active_operation: active ? operationDocument(active) : null,
    created_at: server.created_at,
    updated_at: server.updated_at,
    managed_by: null,
  };
}

/**
 * Where an operation is: its step's machine name, that step's number (from 1) and how many there are, `done` the
 * last; `pending` (0) while it waits. An operation without named steps has one, `configure`.
 */
function operationStep(op: OperationState): { step: string; step_index: number; step_count: number } {
  const names = op.steps?.map((s) => s.name) ?? ["configure"];
  const count = names.length + 1;
  if (op.status === "pending") return { step: "pending", step_index: 0, step_count: count };
  if (op.status === "running") return { step: names[op.stepIndex], step_index: op.stepIndex + 1, step_count: count };
  return { step: "done", step_index: count, step_count: count };
}

/** The API document of an operation. */
export function operationDocument(op: OperationState, withEvents = false): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    id: op.id,
    kind: op.kind,
    server_id: op.server_id,
    storage_id: null,
    backup_id: null,
    template_id: null,
    router_id: null,
    floating_ip_id: null,
    load_balancer_id: op.load_balancer_id,
    edge_id: op.edge_id,
    status: op.status,
    ...operationStep(op),
    error: op.error,
    created_at: op.created_at,
    started_at: op.started_at,
    finished_at: op.finished_at,
    deadline_at: op.deadline_at,
    actor: "token:simulator",
  };
  if (withEvents) doc.events = op.events.slice(-100);
  return doc;
}
