/**
 * Small objects for the doctor's unit tests: servers, networks, zone capabilities and slim nodes with defaults.
 *
 * @module
 */
import type { Network, Server, ZoneCapabilities } from "../../../lib/cloud/client.ts";
import type { SlimNode } from "../../../lib/kube/slim.ts";

/** A server with defaults (zone de-fsn1, started). */
export function server(id: string, hostname: string, zone = "de-fsn1"): Server {
  return {
    id,
    zone,
    hostname,
    title: "",
    plan: "standard-2c-4g",
    state: "started",
    state_detail: "",
    public_ipv4: null,
    public_ipv6: null,
    public_ipv6_prefix: null,
    public_ipv6_is_private: false,
    ipv6_renumber_available: false,
    labels: {},
  };
}

/** A network whose members are legs of `serverIds`. */
export function network(id: string, serverIds: string[], zones = ["de-fsn1", "de-fsn2"]): Network {
  return {
    id,
    zone: zones[0],
    region: "eu-central",
    zones,
    name: `name-${id}`,
    cidr: "10.0.0.0/16",
    ula_prefix: "fd64:1:0:1::/64",
    gateway: "10.0.0.1",
    members: serverIds.map((serverId, i) => ({
      id: `if-${id}-${i}`,
      server_id: serverId,
      network_id: id,
      address: `10.0.0.${10 + i}`,
      address6: `fd64:1:0:1::a00:${(10 + i).toString(16)}`,
    })),
  };
}

/** Zone capabilities of a zone with `computeNodes` compute nodes, as the simulator derives them. */
export function capabilities(computeNodes: number): ZoneCapabilities {
  return {
    stage: Math.min(3, computeNodes),
    servers: computeNodes,
    compute_nodes: computeNodes,
    features: {
      compute: computeNodes > 0,
      live_migration: false,
      ha_restart: false,
      load_balancer_ha: computeNodes >= 2,
      separate_edges: computeNodes >= 3,
    },
    reasons: computeNodes >= 2 ? {} : { load_balancer_ha: `the zone has ${computeNodes} compute node(s); it needs 2` },
  };
}

/** A slim node: by default without a providerID and with the uninitialized taint. */
export function node(name: string, extra: Partial<SlimNode> = {}): SlimNode {
  return {
    name,
    uid: `uid-${name}`,
    resourceVersion: "1",
    labels: {},
    taints: [{ key: "node.cloudprovider.kubernetes.io/uninitialized", value: "true", effect: "NoSchedule" }],
    addresses: [],
    ...extra,
  };
}

/** `k3s.io/node-args` of a k3s server or agent started with `args`. */
export function k3sArgs(role: "server" | "agent", ...args: string[]): string {
  return JSON.stringify([role, ...args]);
}
