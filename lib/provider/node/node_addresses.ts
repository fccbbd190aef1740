/**
 * Node addresses from a server, IPv6 first, exactly as the Go controller orders them, and the
 * framework's rules for the kubelet's `--node-ip` (`alpha.kubernetes.io/provided-node-ip`, single and dual-stack,
 * KEP-3705) and its Hostname.
 *
 * @module
 */
import { parseIp, parseIpSloppy } from "../../ip_address.ts";
import type { NodeAddress } from "../../kube/slim.ts";

/** The server fields addresses come from. */
interface AddressSource {
  /** Becomes the Node's `Hostname` address; skipped when empty. */
  hostname: string;
  /** Public IPv6 (first address of the /64). */
  public_ipv6?: string | null;
  /** True when `public_ipv6` is a ULA reachable only inside Ankra Cloud: then it is an InternalIP. */
  public_ipv6_is_private?: boolean;
  /** IPv4 add-on. */
  public_ipv4?: string | null;
}

/** A private leg. */
export interface LegSource {
  /** RFC 1918 address. */
  address: string;
  /** ULA address. */
  address6: string;
}

/**
 * The server's addresses: ExternalIP public IPv6 (InternalIP when the server's `public_ipv6_is_private`: a ULA that
 * nothing outside Ankra Cloud reaches), ExternalIP public IPv4, InternalIP each leg's ULA, InternalIP each leg's IPv4,
 * Hostname. Values are read as Kubernetes reads cloud addresses (`ParseIPSloppy`: an octet's leading zeros are
 * decimal) and written canonical (no leading zeros, no IPv4-mapped IPv6, RFC 5952 IPv6), as Kubernetes 1.36's strict
 * validation wants them; unparsable or wrong-family values (an IPv4-mapped `public_ipv6`) are skipped; duplicates are
 * dropped (first wins).
 */
export function serverAddresses(server: AddressSource, legs: LegSource[]): NodeAddress[] {
  const out: NodeAddress[] = [];
  const seen = new Set<string>();
  const add = (type: string, value: string | null | undefined, family: 4 | 6) => {
    if (!value) return;
    const ip = parseIpSloppy(value);
    if (!ip || ip.family !== family || seen.has(ip.text)) return;
    seen.add(ip.text);
    out.push({ type, address: ip.text });
  };
  add(server.public_ipv6_is_private ? "InternalIP" : "ExternalIP", server.public_ipv6, 6);
  add("ExternalIP", server.public_ipv4, 4);
  for (const leg of legs) add("InternalIP", leg.address6, 6);
  for (const leg of legs) add("InternalIP", leg.address, 4);
  if (server.hostname) out.push({ type: "Hostname", address: server.hostname });
  return out;
}

/** Keeps the kubelet's Hostname entries when the cloud gives none (the framework's rule). */
export function withKubeletHostname(cloud: NodeAddress[], existing: readonly NodeAddress[]): NodeAddress[] {
  if (cloud.some((a) => a.type === "Hostname")) return cloud;
  return [...cloud, ...existing.filter((a) => a.type === "Hostname")];
}

/** The result of applying the provided node IP. */
type ProvidedIpResult = { ok: true; addresses: NodeAddress[] } | { ok: false; missing: string[] };

/**
 * Applies `alpha.kubernetes.io/provided-node-ip` (one IP or a dual-stack pair `a,b`): each node IP must be among the
 * cloud addresses; matching addresses go first (in node-IP order), other addresses of a matched type are dropped, the
 * rest follow in cloud order. When an IP matches none of the cloud addresses, nothing is applied.
 */
export function applyProvidedNodeIp(cloud: NodeAddress[], providedNodeIp: string | undefined): ProvidedIpResult {
  if (!providedNodeIp) return { ok: true, addresses: cloud };
  const wanted = providedNodeIp.split(",").map((s) => s.trim()).filter(Boolean);
  const ips = wanted.map((w) => parseIp(w)?.text ?? w);
  const missing = ips.filter((ip) => !cloud.some((a) => a.address === ip));
  if (missing.length > 0) return { ok: false, missing };
  const first: NodeAddress[] = [];
  const matchedTypes = new Set<string>();
  for (const ip of ips) {
    for (const address of cloud) {
      if (address.address === ip && !first.includes(address)) {
        first.push(address);
        matchedTypes.add(address.type);
      }
    }
  }
  const rest = cloud.filter((a) => !first.includes(a) && !matchedTypes.has(a.type));
  return { ok: true, addresses: [...first, ...rest] };
}

/** True when two address lists are equal as lists (order matters). */
export function sameAddresses(a: readonly NodeAddress[], b: readonly NodeAddress[]): boolean {
  return a.length === b.length && a.every((x, i) => x.type === b[i].type && x.address === b[i].address);
}
