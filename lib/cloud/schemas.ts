/**
 * valibot schemas of every Ankra Cloud API document this controller reads. Unknown fields are accepted and dropped
 * (`v.object`): the API adds fields, and the zone capabilities document has ~35 the controller never reads, so a
 * cached server, network, load balancer or edge holds only the fields declared here. Wrong types are rejected. Field
 * rules follow the Ankra Cloud API document (v1).
 *
 * @module
 */
import * as v from "valibot";

const nullableString = v.nullable(v.string());
const optionalNullableString = v.optional(v.nullable(v.string()), null);

/** RFC 7807 problem document. */
export const ProblemSchema = v.object({
  type: v.optional(v.string(), "about:blank"),
  title: v.optional(v.string(), ""),
  status: v.optional(v.number()),
  detail: v.optional(v.string()),
  reason: v.optional(v.string()),
});

/** `Labels`: string values by key. */
const LabelsSchema = v.record(v.string(), v.string());

/**
 * `Operation` (the fields a controller reads; the rest is dropped). `kind` is any string: the API's `OperationKind` has
 * ~70 values and grows; a reader matches the few it acts on (`server.stop`, …) and passes over the others.
 */
const OperationSchema = v.object({
  id: v.string(),
  kind: v.string(),
  status: v.picklist(["pending", "running", "succeeded", "failed", "cancelled"]),
  error: v.optional(v.string(), ""),
  load_balancer_id: optionalNullableString,
  edge_id: optionalNullableString,
  server_id: optionalNullableString,
  created_at: v.string(),
  started_at: optionalNullableString,
  finished_at: optionalNullableString,
});
/** An asynchronous operation. */
export type Operation = v.InferOutput<typeof OperationSchema>;

/** `Server`. */
const ServerSchema = v.object({
  id: v.string(),
  zone: v.string(),
  region: v.optional(v.string()),
  hostname: v.string(),
  title: v.optional(v.string(), ""),
  plan: v.string(),
  // Unknown future states are kept as strings: the controller treats them as "exists, running".
  state: v.string(),
  state_detail: v.optional(v.string(), ""),
  public_ipv4: optionalNullableString,
  public_ipv6: optionalNullableString,
  public_ipv6_prefix: optionalNullableString,
  public_ipv6_is_private: v.optional(v.boolean(), false),
  // The server's /64 comes from a pool Ankra Cloud is draining: its public IPv6 is due to change (the doctor warns).
  ipv6_renumber_available: v.optional(v.boolean(), false),
  labels: v.optional(LabelsSchema, {}),
  // The operation running on it (a stop, delete or live migration announced before the state changes). One the
  // controller cannot read counts as none, rather than costing the whole server: its state still tells what it is.
  active_operation: v.optional(v.fallback(v.nullable(OperationSchema), null)),
  created_at: v.optional(v.string()),
  updated_at: v.optional(v.string()),
});
/** A server. */
export type Server = v.InferOutput<typeof ServerSchema>;

/** `Interface`: a server's leg on a private network. */
const InterfaceSchema = v.object({
  id: v.string(),
  server_id: v.string(),
  network_id: v.string(),
  address: v.string(),
  address6: v.string(),
  mac_address: v.optional(v.string()),
  device_index: v.optional(v.number()),
});
/** A server's private network interface. */
export type Interface = v.InferOutput<typeof InterfaceSchema>;

/** `Zone`. */
const ZoneSchema = v.object({
  name: v.string(),
  region: v.string(),
  display_name: v.optional(v.string(), ""),
  position: v.optional(v.number()),
});
/** A zone. */
export type Zone = v.InferOutput<typeof ZoneSchema>;

/** `ZoneCapabilities`: only the fields the controller decodes are checked and kept. */
const ZoneCapabilitiesSchema = v.object({
  stage: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(3)),
  servers: v.pipe(v.number(), v.integer(), v.minValue(0)),
  compute_nodes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  features: v.object({
    compute: v.boolean(),
    live_migration: v.boolean(),
    ha_restart: v.boolean(),
    load_balancer_ha: v.boolean(),
    separate_edges: v.boolean(),
  }),
  reasons: v.optional(v.record(v.string(), v.string()), {}),
});
/** What a zone can do. */
export type ZoneCapabilities = v.InferOutput<typeof ZoneCapabilitiesSchema>;

/** `Network`. */
const NetworkSchema = v.object({
  id: v.string(),
  zone: v.string(),
  region: v.string(),
  zones: v.optional(v.array(v.string()), []),
  name: v.string(),
  cidr: v.string(),
  ula_prefix: v.string(),
  gateway: v.string(),
  members: v.optional(v.array(InterfaceSchema)),
  created_at: v.optional(v.string()),
});
/** A private network. */
export type Network = v.InferOutput<typeof NetworkSchema>;

/** `LoadBalancerHealthCheck` (output). */
const HealthCheckSchema = v.object({
  type: v.picklist(["tcp", "http", "none"]),
  path: v.string(),
  expected_status: v.string(),
  interval_seconds: v.number(),
  rise: v.number(),
  fall: v.number(),
});
/** A backend health check as the API reports it. */
export type HealthCheck = v.InferOutput<typeof HealthCheckSchema>;

/** `LoadBalancerMember`. */
const MemberSchema = v.object({
  id: v.string(),
  backend_id: v.optional(v.string(), ""),
  name: v.string(),
  address: v.string(),
  port: v.number(),
  weight: v.optional(v.number(), 100),
  enabled: v.optional(v.boolean(), true),
});
/** A backend member. */
export type Member = v.InferOutput<typeof MemberSchema>;

/** `LoadBalancerBackend`. */
const BackendSchema = v.object({
  id: v.string(),
  name: v.string(),
  mode: v.picklist(["tcp", "http"]),
  balance: v.optional(v.string(), "roundrobin"),
  health_check_path: v.optional(v.string(), ""),
  health_check: HealthCheckSchema,
  members: v.optional(v.array(MemberSchema), []),
});
/** A load balancer backend. */
export type Backend = v.InferOutput<typeof BackendSchema>;

/** `LoadBalancerFrontend`. */
const FrontendSchema = v.object({
  id: v.string(),
  name: v.string(),
  port: v.number(),
  mode: v.optional(v.picklist(["tcp", "http"])),
  backend_id: v.string(),
  tls: v.optional(v.boolean(), false),
  certificate_ids: v.optional(v.array(v.string()), []),
  redirect_to_https: v.optional(v.boolean(), false),
});
/** A load balancer frontend. */
export type Frontend = v.InferOutput<typeof FrontendSchema>;

function isIpv4(text: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(text);
}

/**
 * `LoadBalancer`. List items come without `nodes`, `frontends` and `backends` (empty arrays here). An older API
 * only had `address`: when `public_ipv4` / `public_ipv6` are absent it fills the empty one of its family, as the
 * reference controller does.
 */
const LoadBalancerSchema = v.pipe(
  v.object({
    id: v.string(),
    zone: v.string(),
    region: v.optional(v.string()),
    name: v.string(),
    network_id: v.optional(v.string(), ""),
    state: v.string(),
    labels: v.optional(v.nullable(LabelsSchema), {}),
    high_availability: v.optional(v.boolean()),
    public_ipv4: optionalNullableString,
    public_ipv6: optionalNullableString,
    public_ipv6_addresses: v.optional(v.nullable(v.array(v.string())), []),
    address: optionalNullableString,
    configuration_generation: v.optional(v.number(), 0),
    is_configuration_applied: v.optional(v.boolean(), true),
    nodes: v.optional(v.array(v.object({ id: v.string(), name: v.string(), state: v.string() })), []),
    frontends: v.optional(v.array(FrontendSchema), []),
    backends: v.optional(v.array(BackendSchema), []),
    active_operation: v.optional(v.nullable(OperationSchema), null),
    created_at: v.optional(v.string(), ""),
  }),
  v.transform((lb) => {
    const legacy = lb.address?.trim();
    let publicIpv4 = lb.public_ipv4 ?? null;
    let publicIpv6 = lb.public_ipv6 ?? null;
    if (legacy) {
      if (isIpv4(legacy) && !publicIpv4) publicIpv4 = legacy;
      else if (legacy.includes(":") && !legacy.toLowerCase().startsWith("::ffff:") && !publicIpv6) {
        publicIpv6 = legacy;
      }
    }
    return {
      ...lb,
      labels: lb.labels ?? {},
      public_ipv4: publicIpv4,
      public_ipv6: publicIpv6,
      public_ipv6_addresses: lb.public_ipv6_addresses ?? [],
    };
  }),
);
/** A load balancer (summary from a list, or the full document). */
export type LoadBalancer = v.InferOutput<typeof LoadBalancerSchema>;

/** `EdgeMachine`. */
const EdgeMachineSchema = v.object({
  id: v.string(),
  name: v.string(),
  roles: v.array(v.string()),
  state: v.optional(v.string(), ""),
  public_ipv4: optionalNullableString,
  public_ipv6: optionalNullableString,
  private_ipv4: optionalNullableString,
  private_ipv6: optionalNullableString,
});

/** `EdgeMember`. */
const EdgeMemberSchema = v.object({
  id: v.optional(v.string(), ""),
  name: v.string(),
  frontend_port: v.number(),
  address: v.string(),
  port: v.number(),
  weight: v.optional(v.number(), 100),
  enabled: v.optional(v.boolean(), true),
});

/** `Edge`. */
const EdgeSchema = v.object({
  id: v.string(),
  zone: v.string(),
  name: v.string(),
  network_id: v.string(),
  roles: v.array(v.string()),
  placement: v.string(),
  state: v.string(),
  public_ipv4: optionalNullableString,
  load_balancer_id: optionalNullableString,
  configuration_generation: v.optional(v.number(), 0),
  machines: v.optional(v.array(EdgeMachineSchema), []),
  members: v.optional(v.array(EdgeMemberSchema), []),
  active_operation: v.optional(v.nullable(OperationSchema), null),
  created_at: v.optional(v.string(), ""),
});
/** An edge. */
export type Edge = v.InferOutput<typeof EdgeSchema>;

/** `Quota`. */
const QuotaSchema = v.object({
  limits: v.record(v.string(), v.number()),
  usage: v.record(v.string(), v.number()),
});

/** A list envelope `{items, next_cursor}` of `item`. */
function listSchema<T extends v.GenericSchema>(item: T) {
  return v.object({ items: v.array(item), next_cursor: v.optional(nullableString, null) });
}

/** Envelope `{<key>: <schema>}`. */
function envelopeSchema<K extends string, T extends v.GenericSchema>(key: K, schema: T) {
  return v.object({ [key]: schema } as { [P in K]: T });
}

/** A list page whose items are decoded one by one (a bad item costs that item only). */
export const ListPageSchema = v.object({
  items: v.array(v.unknown()),
  next_cursor: v.optional(nullableString, null),
});

/** The item schema of every paginated list the client reads. */
export const LIST_ITEM_SCHEMAS = {
  list_servers: ServerSchema,
  list_load_balancers: LoadBalancerSchema,
  list_networks: NetworkSchema,
  list_edges: EdgeSchema,
} as const;

/** Response schemas by operation, used by the client and by the simulator's contract tests. */
export const RESPONSE_SCHEMAS = {
  get_server: envelopeSchema("server", ServerSchema),
  list_servers: listSchema(ServerSchema),
  list_server_interfaces: listSchema(InterfaceSchema),
  list_zones: listSchema(ZoneSchema),
  get_zone_capabilities: ZoneCapabilitiesSchema,
  list_networks: listSchema(NetworkSchema),
  get_network: envelopeSchema("network", NetworkSchema),
  list_load_balancers: listSchema(LoadBalancerSchema),
  get_load_balancer: envelopeSchema("load_balancer", LoadBalancerSchema),
  create_load_balancer: v.object({ load_balancer: LoadBalancerSchema, operation: OperationSchema }),
  update_load_balancer: envelopeSchema("load_balancer", LoadBalancerSchema),
  delete_load_balancer: envelopeSchema("operation", OperationSchema),
  create_load_balancer_backend: envelopeSchema("backend", BackendSchema),
  update_load_balancer_backend: envelopeSchema("backend", BackendSchema),
  create_load_balancer_frontend: envelopeSchema("frontend", FrontendSchema),
  replace_load_balancer_members: envelopeSchema("members", v.array(MemberSchema)),
  list_edges: listSchema(EdgeSchema),
  get_edge: envelopeSchema("edge", EdgeSchema),
  update_edge: v.object({ edge: EdgeSchema, operation: OperationSchema }),
  create_edge: v.object({ edge: EdgeSchema, operation: OperationSchema }),
  delete_edge: envelopeSchema("operation", OperationSchema),
  get_operation: envelopeSchema("operation", OperationSchema),
  // Not called by the controller (the server list carries each server's active operation); the contract tests'.
  list_operations: listSchema(OperationSchema),
  get_quotas: QuotaSchema,
} as const;
