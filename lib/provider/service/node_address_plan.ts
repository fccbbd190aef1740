/**
 * Node-address mode: a Service served on its nodes' own public addresses instead of an Ankra load balancer. Its
 * `status.loadBalancer.ingress` lists the public IPv6 and IPv4 of the servers of the nodes that serve it, in the
 * Service's families, with `ipMode: VIP`, and kube-proxy (or any service proxy) answers on them. Nothing is written to
 * Ankra Cloud. This module decides, purely:
 *
 * (The mode of a Service is decided in `serving_mode.ts`.)
 *
 * - **which nodes** serve ({@linkcode servingNodes}): the Service's eligible nodes (exclusion label, unmanaged nodes,
 *   node selector, and for `externalTrafficPolicy: Local` those holding a ready endpoint — as members are chosen),
 *   further only Ready, not shut down and not being deleted; when none is, every eligible node (never no address while
 *   an eligible node exists);
 * - the **ingress** ({@linkcode planNodeAddresses}), with a node that stops serving kept for the drain period (it
 *   leaves last), and the refusals: a port of `--node-address-reserved-ports`, and an address and port another
 *   node-address Service claimed first.
 *
 * @module
 */
import { ANNOTATION_PREFIX } from "../../ankra_names.ts";
import type { SlimNode, SlimService } from "../../kube/slim.ts";
import { rangeText, type ReservedRange, reservedRangeOf } from "./reserved_ports.ts";
import { type Ingress, type IngressStyle, orderedIngress } from "./service_ingress.ts";
import { serviceFamilies } from "./service_plan.ts";
import { drainWindow } from "./drain_window.ts";
import { SHUTDOWN_TAINT, UNINITIALIZED_TAINT } from "../node/node_plan.ts";

/** True when the node may answer on its address now: Ready, not shut down, not being deleted, initialised. */
function canServe(node: SlimNode): boolean {
  return node.ready === "True" && !node.deletionTimestamp &&
    !node.taints.some((t) => t.key === SHUTDOWN_TAINT || t.key === UNINITIALIZED_TAINT);
}

/**
 * The nodes that serve, from the Service's eligible nodes (`candidates`): those that can serve now, or all of them
 * when none can (the Service keeps an address while an eligible node exists). By name.
 */
export function servingNodes(candidates: readonly SlimNode[]): SlimNode[] {
  const ready = candidates.filter(canServe);
  return [...(ready.length > 0 ? ready : candidates)].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A server's public addresses. */
export interface PublicAddresses {
  ipv4?: string;
  ipv6?: string;
}

/** The fields of a server (`list_servers`) its public addresses come from. */
interface PublicAddressSource {
  /** The IPv4 add-on; null without it. */
  public_ipv4?: string | null;
  /** The first address of the server's /64; null without IPv6. */
  public_ipv6?: string | null;
  /** True when `public_ipv6` is a ULA only Ankra Cloud reaches. */
  public_ipv6_is_private?: boolean;
}

/**
 * The server's public addresses as node-address mode publishes them (and the doctor checks them): its public IPv6
 * unless that is a ULA only Ankra Cloud reaches (`public_ipv6_is_private`), and its IPv4 add-on.
 */
export function publicAddressesOf(server: PublicAddressSource): PublicAddresses {
  return {
    ...(server.public_ipv6 && !server.public_ipv6_is_private ? { ipv6: server.public_ipv6 } : {}),
    ...(server.public_ipv4 ? { ipv4: server.public_ipv4 } : {}),
  };
}

/**
 * How a Service's published addresses changed, per family, IPv6 first: `IPv4 198.51.100.7 → 198.51.100.9 (node a)` —
 * the addresses gone, the addresses new and the nodes now behind the new ones (`nodeOf`); empty when none changed.
 */
export function ingressChange(
  before: readonly string[],
  after: readonly string[],
  nodeOf: (ip: string) => string | undefined,
): string {
  const parts: string[] = [];
  for (const family of [6, 4]) {
    const of = (ips: readonly string[]) => ips.filter((ip) => (ip.includes(":") ? 6 : 4) === family);
    const gone = of(before).filter((ip) => !after.includes(ip));
    const come = of(after).filter((ip) => !before.includes(ip));
    if (gone.length + come.length === 0) continue;
    const nodes = [...new Set(come.flatMap((ip) => nodeOf(ip) ?? []))];
    parts.push(
      `IPv${family} ${gone.join(", ") || "none"} → ${come.join(", ") || "none"}` +
        (nodes.length > 0 ? ` (node${nodes.length > 1 ? "s" : ""} ${nodes.join(", ")})` : ""),
    );
  }
  return parts.join("; ");
}

/** Another node-address Service, as far as a claim on an address and port goes. */
export interface ClaimingService {
  /** `<namespace>/<name>`. */
  key: string;
  /** RFC 3339; the earlier Service keeps a contested port. */
  creationTimestamp?: string;
  ports: readonly { port: number; protocol: string }[];
  /** The addresses it is published on (its status ingress). */
  ingress: readonly { ip?: string }[];
}

/** What {@linkcode planNodeAddresses} decides from. */
export interface NodeAddressInput {
  /** The Service. */
  service: Pick<SlimService, "namespace" | "name" | "creationTimestamp" | "ports" | "ipFamilies" | "ingress">;
  /** Its eligible nodes (after the node selector and, for Local, the endpoint rule). */
  candidates: readonly SlimNode[];
  /** The public addresses of a node's server, by node name (also of a node no longer eligible); undefined: unknown. */
  addressesOf: (node: string) => PublicAddresses | undefined;
  /** `--node-address-reserved-ports`. */
  reserved: readonly ReservedRange[];
  /** The other node-address Services. */
  others: readonly ClaimingService[];
  /** How the ingress is written (`ipMode: VIP` where the API server keeps it). */
  style: IngressStyle;
  /** The drain of nodes that stop serving. */
  drain: {
    /** `--member-drain-period`, milliseconds (0: a node leaves at once). */
    periodMs: number;
    /** Epoch milliseconds. */
    now: number;
    /** The nodes the last pass published. */
    published: readonly string[];
    /** Nodes kept while they drain, by name: since when (epoch ms). */
    leaving: ReadonlyMap<string, number>;
  };
}

/** Why a node-address Service is not served. */
type NodeAddressRefusal = "PortReserved" | "PortConflict" | "NoNodeAddresses";

/** The decision. */
export type NodeAddressPlan =
  | { ok: false; reason: NodeAddressRefusal; message: string }
  | {
    ok: true;
    /** The ingress to publish. */
    ingress: Ingress[];
    /** The nodes that serve, by name. */
    nodes: string[];
    /** Nodes still published while they drain, by name: since when. */
    leaving: Map<string, number>;
    /** When the first drain ends (epoch ms), if any node drains. */
    nextAtMs?: number;
    /** Serving nodes without an address of the Service's families (left out). */
    withoutAddress: string[];
  };

/** The first Service port that is reserved on the nodes, worded; undefined when none is. */
function reservedPortProblem(input: NodeAddressInput): string | undefined {
  for (const port of input.service.ports) {
    const range = reservedRangeOf(port.port, port.protocol, input.reserved);
    if (range) {
      return `port ${port.port}/${(port.protocol || "TCP").toUpperCase()} is reserved on the nodes' own addresses ` +
        `(--node-address-reserved-ports holds ${rangeText(range)}: the host or the cluster uses it): choose another ` +
        `port, or serve the Service with an Ankra load balancer (${ANNOTATION_PREFIX}mode: load-balancer)`;
    }
  }
  return undefined;
}

function earlier(a: { key: string; creationTimestamp?: string }, b: { key: string; creationTimestamp?: string }) {
  const [ta, tb] = [a.creationTimestamp ?? "", b.creationTimestamp ?? ""];
  return ta !== tb ? (ta && tb ? ta < tb : ta !== "") : a.key < b.key;
}

/** The first earlier Service claiming one of our ports on one of `addresses`, worded; undefined when none does. */
function conflictProblem(input: NodeAddressInput, addresses: ReadonlySet<string>): string | undefined {
  const self = {
    key: `${input.service.namespace}/${input.service.name}`,
    creationTimestamp: input.service.creationTimestamp,
  };
  for (const other of [...input.others].sort((a, b) => (earlier(a, b) ? -1 : 1))) {
    if (other.key === self.key || !earlier(other, self)) continue;
    // An earlier Service not yet published claims every node's address.
    const shared = other.ingress.length === 0
      ? [...addresses]
      : other.ingress.flatMap((i) => (i.ip && addresses.has(i.ip) ? [i.ip] : []));
    if (shared.length === 0) continue;
    for (const port of input.service.ports) {
      const protocol = (port.protocol || "TCP").toUpperCase();
      if (other.ports.some((p) => p.port === port.port && (p.protocol || "TCP").toUpperCase() === protocol)) {
        return `port ${port.port}/${protocol} on ${
          shared[0]
        } is already served by Service ${other.key} (node-address ` +
          "mode, created first): choose another port, or serve one of them with an Ankra load balancer " +
          `(${ANNOTATION_PREFIX}mode: load-balancer)`;
      }
    }
  }
  return undefined;
}

/** The ingress of a node-address Service and the nodes behind it, or why it is refused (see the module docs). */
export function planNodeAddresses(input: NodeAddressInput): NodeAddressPlan {
  const reserved = reservedPortProblem(input);
  if (reserved) return { ok: false, reason: "PortReserved", message: reserved };
  const families = serviceFamilies(input.service);
  const serving = servingNodes(input.candidates);
  const { periodMs, now, published, leaving } = input.drain;
  // A node that stops serving stays published for the drain period, if it still has an address.
  const servingNames = new Set(serving.map((n) => n.name));
  const { draining: stillLeaving, nextAtMs } = drainWindow(
    published.filter((name) => !servingNames.has(name)),
    leaving,
    { periodMs, now },
  );
  const addressesFor = (name: string) => {
    const found = input.addressesOf(name);
    return {
      ipv6: families.includes(6) && found?.ipv6 ? [found.ipv6] : [],
      ipv4: families.includes(4) && found?.ipv4 ? [found.ipv4] : [],
      name,
    };
  };
  const servingAddresses = serving.map((node) => addressesFor(node.name));
  const withoutAddress = servingAddresses.filter((a) => a.ipv6.length + a.ipv4.length === 0).map((a) => a.name);
  const published6: string[] = [];
  const published4: string[] = [];
  for (const name of [...servingNames, ...stillLeaving.keys()].sort()) {
    const a = addressesFor(name);
    published6.push(...a.ipv6);
    published4.push(...a.ipv4);
  }
  const ingress = orderedIngress(published6, published4, input.style);
  if (servingAddresses.every((a) => a.ipv6.length + a.ipv4.length === 0)) {
    return {
      ok: false,
      reason: "NoNodeAddresses",
      message: serving.length === 0
        ? "no eligible node serves this Service: add a node, or remove the exclusion label or node selector that " +
          "leaves every node out"
        : `no serving node (${serving.map((n) => n.name).join(", ")}) has a public address of the Service's IP ` +
          `famil${families.length > 1 ? "ies" : "y"} (${families.map((f) => `IPv${f}`).join(", ")}): give the ` +
          "servers a public address of that family, or change spec.ipFamilies",
    };
  }
  const conflict = conflictProblem(input, new Set(ingress.map((i) => i.ip)));
  if (conflict) return { ok: false, reason: "PortConflict", message: conflict };
  return {
    ok: true,
    ingress,
    nodes: [...servingNames].filter((name) => !withoutAddress.includes(name)),
    leaving: stillLeaving,
    nextAtMs,
    withoutAddress,
  };
}
