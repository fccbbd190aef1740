/**
 * The simulator's seed: the world it starts with (zones, networks, servers with their interfaces, edges, tokens,
 * certificates, quota, timings and the data plane). JSON with the API's field names; documented in
 * `docs/simulator.md`.
 *
 * @module
 */
import * as v from "valibot";
import { LabelsInput } from "./request_schemas.ts";
import { parsePrefix } from "../lib/ip_address.ts";

const id = v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, "must be an id of letters, digits, . _ -"));
const hostname = v.pipe(
  v.string(),
  v.regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, "must match ^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"),
);

/** A token and its scope (`read`, `read_write`, or a comma list from read, operate, billing.read, …). */
export const SeedTokenSchema = v.strictObject({
  token: v.pipe(v.string(), v.minLength(8)),
  scope: v.optional(
    v.pipe(
      v.string(),
      v.regex(
        /^(read|read_write|(read|operate|billing\.read|billing\.manage|self)(,(read|operate|billing\.read|billing\.manage|self))*)$/,
        "must be read, read_write or a comma list of read, operate, billing.read, billing.manage, self",
      ),
    ),
    "read_write",
  ),
});

/** A zone and the platform nodes that decide its capabilities. */
export const SeedZoneSchema = v.strictObject({
  name: v.pipe(v.string(), v.regex(/^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/)),
  region: v.string(),
  display_name: v.optional(v.string()),
  position: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10000))),
  compute_nodes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 2),
  servers: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  storage_backends: v.optional(v.array(v.picklist(["ankra-local", "ceph", "ankra-s3-single"])), ["ankra-local"]),
});

/** A private network. */
export const SeedNetworkSchema = v.strictObject({
  id,
  name: v.string(),
  zone: v.string(),
  zones: v.optional(v.array(v.string())),
  cidr: v.string(),
  ula_prefix: v.string(),
});

/** A server's leg on a network; `address` is allocated when absent, `address6` is derived. */
export const SeedInterfaceSchema = v.strictObject({
  network_id: v.string(),
  address: v.optional(v.string()),
});

/** A server. */
export const SeedServerSchema = v.strictObject({
  id: v.optional(id),
  hostname,
  zone: v.string(),
  title: v.optional(v.string()),
  plan: v.optional(v.string(), "standard-2c-4g"),
  state: v.optional(
    v.picklist(["creating", "starting", "started", "stopping", "stopped", "deleting", "error"]),
    "started",
  ),
  public_ipv4: v.optional(v.nullable(v.string())),
  /** A public IPv6 address, `null` for none, or absent to allocate one. */
  public_ipv6: v.optional(v.nullable(v.string())),
  public_ipv6_is_private: v.optional(v.boolean()),
  /** The server's /64 comes from a pool being drained (its public IPv6 is due to be renumbered). */
  ipv6_renumber_available: v.optional(v.boolean()),
  /** The API's `Labels` rules (as the console sets them): at most 32, Ankra label keys, printable values. */
  labels: v.optional(LabelsInput, {}),
  interfaces: v.optional(v.array(SeedInterfaceSchema), []),
});

/** An edge member as in `EdgeMemberInput`. */
export const SeedEdgeMemberSchema = v.strictObject({
  name: v.string(),
  frontend_port: v.number(),
  address: v.string(),
  port: v.number(),
  weight: v.optional(v.number()),
  enabled: v.optional(v.boolean()),
});

/** An edge, created `running` with its addresses. */
export const SeedEdgeSchema = v.strictObject({
  id: v.optional(id),
  name: v.optional(v.string()),
  network_id: v.string(),
  roles: v.array(v.picklist(["bastion", "nat_gateway", "load_balancer"])),
  placement: v.optional(v.picklist(["separate", "combined"])),
  members: v.optional(v.array(SeedEdgeMemberSchema), []),
});

/** The data planes: `off` (nothing listens), `loopback` (unprivileged, 127.0.0.0/8) or `netns` (root, in a namespace). */
export const DATA_PLANE_MODES = ["off", "loopback", "netns"] as const;

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----/;
const PEM_PRIVATE_KEY = /-----BEGIN (RSA |EC )?PRIVATE KEY-----[\s\S]+-----END (RSA |EC )?PRIVATE KEY-----/;

/** A load balancer certificate of the account: what a TLS frontend's `certificate_ids` name (PEM; chain leaf first). */
export const SeedCertificateSchema = v.strictObject({
  id,
  certificate_pem: v.pipe(v.string(), v.regex(PEM_CERTIFICATE, "must hold a PEM CERTIFICATE block")),
  private_key_pem: v.pipe(
    v.string(),
    v.regex(PEM_PRIVATE_KEY, "must hold a PEM PRIVATE KEY block (PKCS#8, RSA or EC)"),
  ),
});

/** Timings and limits. */
export const SeedSettingsSchema = v.strictObject({
  load_balancer_quota: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 5),
  load_balancer_create_delay_ms: v.optional(v.pipe(v.number(), v.minValue(0)), 3000),
  load_balancer_delete_delay_ms: v.optional(v.pipe(v.number(), v.minValue(0)), 1000),
  edge_sync_delay_ms: v.optional(v.pipe(v.number(), v.minValue(0)), 1000),
  /**
   * How long an operation on a server (`server.stop`, `server.delete`, `server.migrate`) is announced — the server's
   * `active_operation`, its state unchanged — before the server's state changes (a request may give its own).
   */
  server_operation_delay_ms: v.optional(v.pipe(v.number(), v.minValue(0)), 5000),
  /** How long a server stays `stopping` or `deleting` before it is `stopped` or gone (a request may give its own). */
  server_transition_delay_ms: v.optional(v.pipe(v.number(), v.minValue(0)), 1000),
  rate_limit_per_minute: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 600),
  email_verified: v.optional(v.boolean(), true),
  payment: v.optional(
    v.picklist(["ok", "payment_method_required", "owner_approval_required", "account_suspended"]),
    "ok",
  ),
  /**
   * The data plane only: HAProxy's `hard-stop-after` — the process a reload replaces ends this long after the reload,
   * and with it every connection it still carries; absent, it lives until they close (see `docs/simulator.md`).
   */
  reload_hard_stop_after_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(3_600_000))),
  /** Whether load balancers and edges carry traffic (see `simulator/data_plane/`); fixed at start. */
  data_plane: v.optional(v.picklist(DATA_PLANE_MODES), "off"),
  /**
   * The ranges public IPv4 addresses are allocated from, in order (default the documentation ranges 203.0.113.0/24,
   * then 198.51.100.0/24), outside the `loopback` data plane; the `netns` data plane makes exactly these local. A
   * harness that routes them into its namespaces chooses ranges its machine uses for nothing else.
   */
  public_ipv4_ranges: v.optional(
    v.pipe(
      v.array(v.pipe(
        v.string(),
        v.check(
          (text) => parsePrefix(text)?.family === 4 && (parsePrefix(text)?.length ?? 0) <= 30,
          "must be an IPv4 prefix, /30 or wider",
        ),
      )),
      v.minLength(1, "must name at least one range"),
    ),
    ["203.0.113.0/24", "198.51.100.0/24"],
  ),
  /** The public IPv4 range of the `loopback` data plane (inside 127.0.0.0/8, /8 to /30); fixed at start. */
  loopback_ipv4_range: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}\/([89]|[12]\d|30)$/, "must be a prefix inside 127.0.0.0/8, /8 to /30"),
      v.check((text) => parsePrefix(text) !== undefined, "must be a prefix inside 127.0.0.0/8, /8 to /30"),
    ),
    "127.203.113.0/24",
  ),
});

/** The seed document. */
export const SeedSchema = v.strictObject({
  settings: v.optional(SeedSettingsSchema, {}),
  tokens: v.optional(v.array(SeedTokenSchema), []),
  zones: v.optional(v.array(SeedZoneSchema), []),
  networks: v.optional(v.array(SeedNetworkSchema), []),
  servers: v.optional(v.array(SeedServerSchema), []),
  edges: v.optional(v.array(SeedEdgeSchema), []),
  /** The account's load balancer certificates; when present, a frontend naming another id is refused (400). */
  certificates: v.optional(v.array(SeedCertificateSchema)),
});

/** A parsed seed. */
export type Seed = v.InferOutput<typeof SeedSchema>;
/** Settings of a parsed seed. */
export type SimulatorSettings = v.InferOutput<typeof SeedSettingsSchema>;
/** A certificate of a parsed seed. */
export type SeedCertificate = v.InferOutput<typeof SeedCertificateSchema>;
/** A data plane mode. */
export type DataPlaneMode = (typeof DATA_PLANE_MODES)[number];
/** A server of a parsed seed (also the control API's "add server" body). */
export type SeedServer = v.InferOutput<typeof SeedServerSchema>;

/** The world without a seed file: one zone with its region (two compute nodes) and one private network. */
export function defaultSeed(): Seed {
  return parseSeed({
    zones: [{ name: "de-fsn1", region: "eu-central", display_name: "Falkenstein 1", compute_nodes: 2 }],
    networks: [{
      id: "net-default",
      name: "default",
      zone: "de-fsn1",
      cidr: "10.0.0.0/16",
      ula_prefix: "fd64:0:0:1::/64",
    }],
  });
}

/** Validates a seed document; the error names the field. */
export function parseSeed(input: unknown): Seed {
  const parsed = v.safeParse(SeedSchema, input);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    throw new Error(`seed: field ${v.getDotPath(issue) ?? "(document)"}: ${issue.message}`);
  }
  return parsed.output;
}
