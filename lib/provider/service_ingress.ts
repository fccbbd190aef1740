/**
 * What a Service's `status.loadBalancer.ingress` says: the load balancer's addresses (every public IPv6 of a pair,
 * then the IPv4), and the `ipMode` telling kube-proxy whether in-cluster traffic to them goes through the load balancer.
 * Pure functions.
 *
 * @module
 */
import type { LoadBalancer } from "../cloud/schemas.ts";
import type { LoadBalancerSettings } from "./annotations.ts";

/** A Service status ingress entry. */
export interface Ingress {
  /** A public IPv6 or IPv4 address of the load balancer, as its document gives it. */
  ip: string;
  /** `Proxy`: traffic to the address goes through the load balancer, also from pods; `VIP`: kube-proxy may take it. */
  ipMode?: "Proxy" | "VIP";
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
 * The Service's ingress: every public IPv6 of the load balancer (both VMs of a pair), then its IPv4, each with
 * `ipMode` when one is given (the controller gives none to API servers older than 1.30, which strip the field: every
 * pass would look like a change there).
 */
export function loadBalancerIngress(
  lb: Pick<LoadBalancer, "public_ipv6_addresses" | "public_ipv6" | "public_ipv4">,
  ipMode?: "Proxy" | "VIP",
): Ingress[] {
  const ips = [...new Set([...(lb.public_ipv6_addresses ?? []), ...(lb.public_ipv6 ? [lb.public_ipv6] : [])])];
  if (lb.public_ipv4) ips.push(lb.public_ipv4);
  return ips.map((ip): Ingress => (ipMode ? { ip, ipMode } : { ip }));
}

/** True when two ingress lists hold the same addresses in the same order, with the same `ipMode` where `b` has one. */
export function sameIngress(a: { ip?: string; ipMode?: string }[], b: { ip?: string; ipMode?: string }[]): boolean {
  return a.length === b.length && a.every((x, i) => x.ip === b[i].ip && (!b[i].ipMode || x.ipMode === b[i].ipMode));
}
