/**
 * What a Service's `status.loadBalancer.ingress` says: the load balancer's addresses (those of the Service's primary
 * IP family first: every public IPv6 of a pair, and the IPv4), and the `ipMode` telling kube-proxy whether in-cluster
 * traffic to them goes through the load balancer. Pure functions.
 *
 * @module
 */
import type { LoadBalancer } from "../../cloud/schemas.ts";
import type { SlimService } from "../../kube/slim.ts";
import type { LoadBalancerSettings } from "./annotations.ts";
import { parseIpSloppy } from "../../ip_address.ts";

/** A Service status ingress entry. */
export interface Ingress {
  /** A public IPv6 or IPv4 address of the load balancer, as its document gives it. */
  ip: string;
  /** `Proxy`: traffic to the address goes through the load balancer, also from pods; `VIP`: kube-proxy may take it. */
  ipMode?: "Proxy" | "VIP";
}

/**
 * How a Service's ingress is written. The addresses of its primary IP family come first: `ingress[0]` is what tools,
 * scripts and Kubernetes' own e2e tests call, and kube-proxy takes over (ipMode `VIP`) only the addresses of the
 * Service's own family — an IPv4 Service listing its IPv6 address first sends pods of an IPv4 cluster to an address
 * they cannot reach.
 */
export interface IngressStyle {
  /** The Service's primary family (`spec.ipFamilies[0]`); 6 when it has none (the Go controller's order). */
  firstFamily: 4 | 6;
  /** The `ipMode` of every entry ({@linkcode ingressIpMode}); none for API servers that strip the field. */
  ipMode?: "Proxy" | "VIP";
}

/** The ingress style of `service`: its primary family first, with `ipMode` when one is given. */
export function ingressStyle(service: Pick<SlimService, "ipFamilies">, ipMode?: "Proxy" | "VIP"): IngressStyle {
  return { firstFamily: service.ipFamilies[0] === "IPv4" ? 4 : 6, ...(ipMode ? { ipMode } : {}) };
}

/**
 * The ingress entries for `ipv6` and `ipv4` addresses in `style`: the first family's addresses first, each with the
 * style's `ipMode`. Without a style, IPv6 first and no `ipMode`.
 *
 * Whatever the Ankra API answered, the entries are canonical, as Kubernetes 1.36's strict validation of
 * `status.loadBalancer.ingress[].ip` demands: an octet's leading zeros read as decimal and dropped, an IPv4-mapped IPv6
 * (`::ffff:a.b.c.d`) written as the IPv4 it is (after the IPv4s), IPv6 as RFC 5952; an unparsable address is
 * left out and a repeated one listed once.
 */
export function orderedIngress(ipv6: readonly string[], ipv4: readonly string[], style?: IngressStyle): Ingress[] {
  const byFamily: Record<4 | 6, string[]> = { 4: [], 6: [] };
  for (const text of [...ipv4, ...ipv6]) {
    const ip = parseIpSloppy(text);
    if (ip && !byFamily[ip.family].includes(ip.text)) byFamily[ip.family].push(ip.text);
  }
  const ips = style?.firstFamily === 4 ? [...byFamily[4], ...byFamily[6]] : [...byFamily[6], ...byFamily[4]];
  const ipMode = style?.ipMode;
  return ips.map((ip): Ingress => (ipMode ? { ip, ipMode } : { ip }));
}

/**
 * The ingress `ipMode` of a Service: the `ip-mode` annotation, else `Proxy` where the load balancer does what
 * kube-proxy's shortcut would skip for in-cluster clients (TLS termination, http mode and its redirect), else `VIP`.
 * Ankra load balancers are HAProxy, so with `VIP` a pod calling the address reaches the Service's pods directly.
 */
export function ingressIpMode(
  settings: Pick<LoadBalancerSettings, "ipMode" | "tlsPorts" | "protocol">,
): "Proxy" | "VIP" {
  if (settings.ipMode) return settings.ipMode;
  return settings.tlsPorts.length > 0 || settings.protocol === "http" ? "Proxy" : "VIP";
}

/**
 * True when the API server keeps an ingress `ipMode` (Kubernetes 1.30 and later, where the field is on by default;
 * GA in 1.32): older ones strip it, so it is not sent there. An unknown version counts as new.
 */
export function keepsIpMode(gitVersion: string | undefined): boolean {
  const match = /^v?(\d+)\.(\d+)/.exec(gitVersion ?? "");
  if (!match) return true;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > 1 || (major === 1 && minor >= 30);
}

/**
 * The Service's ingress: every public IPv6 of the load balancer (both VMs of a pair) and its IPv4, in `style`
 * ({@linkcode orderedIngress}; the controller gives no `ipMode` to API servers older than 1.30, which strip the field:
 * every pass would look like a change there).
 */
export function loadBalancerIngress(
  lb: Pick<LoadBalancer, "public_ipv6_addresses" | "public_ipv6" | "public_ipv4">,
  style?: IngressStyle,
): Ingress[] {
  const ipv6 = [...new Set([...(lb.public_ipv6_addresses ?? []), ...(lb.public_ipv6 ? [lb.public_ipv6] : [])])];
  return orderedIngress(ipv6, lb.public_ipv4 ? [lb.public_ipv4] : [], style);
}

/** True when two ingress lists hold the same addresses in the same order, with the same `ipMode` where `b` has one. */
export function sameIngress(
  a: readonly { ip?: string; ipMode?: string }[],
  b: readonly { ip?: string; ipMode?: string }[],
): boolean {
  return a.length === b.length && a.every((x, i) => x.ip === b[i].ip && (!b[i].ipMode || x.ipMode === b[i].ipMode));
}
