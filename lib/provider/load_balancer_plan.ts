/**
 * What a Service's dedicated load balancer should look like, and the smallest set of API calls that gets it there.
 * Pure functions: ports, eligible nodes, members per IP family (IPv6 first, private addresses first), the listener
 * diff (`reference-behaviour.md` §3.5–3.7) and the Service status.
 *
 * @module
 */
import { parseIp } from "../ip_address.ts";
import type { SlimNode, SlimService } from "../kube/slim.ts";
import type { LoadBalancer } from "../cloud/schemas.ts";
import type { LoadBalancerSettings } from "./annotations.ts";
import { listenerName } from "./load_balancer_names.ts";

/** A forwarded port. */
export interface ForwardedPort {
  /** Service port (frontend port). */
  port: number;
  /** Node port (member port). */
  nodePort: number;
}

/** The ports of a Service as the load balancer sees them. */
export interface PortPlan {
  /** TCP ports with their node ports, in Service order. */
  tcp: ForwardedPort[];
  /** Ports not forwarded (`53/UDP`). */
  unsupported: string[];
  /** TCP ports without a node port. */
  withoutNodePort: number[];
}

/** Splits a Service's ports: TCP with node ports, other protocols, TCP without node port. */
export function portPlan(service: SlimService): PortPlan {
  const plan: PortPlan = { tcp: [], unsupported: [], withoutNodePort: [] };
  const seen = new Set<number>();
  for (const port of service.ports) {
    const protocol = (port.protocol || "TCP").toUpperCase();
    if (protocol !== "TCP") {
      plan.unsupported.push(`${port.port}/${protocol}`);
      continue;
    }
    if (seen.has(port.port)) continue;
    seen.add(port.port);
    if (!port.nodePort) plan.withoutNodePort.push(port.port);
    else plan.tcp.push({ port: port.port, nodePort: port.nodePort });
  }
  return plan;
}

/** The exclusion label of the framework. */
export const EXCLUDE_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers";
/** The cluster autoscaler's taint on nodes it is removing. */
export const AUTOSCALER_TAINT = "ToBeDeletedByClusterAutoscaler";

/** The framework's stable node set: not being deleted, not excluded, not being removed by the autoscaler. */
export function eligibleNodes(nodes: SlimNode[]): SlimNode[] {
  return nodes.filter((node) => {
    if (node.deletionTimestamp) return false;
    const exclude = node.labels[EXCLUDE_LABEL];
    if (exclude !== undefined && exclude.toLowerCase() !== "false") return false;
    return !node.taints.some((t) => t.key === AUTOSCALER_TAINT);
  }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The Service's IP families, IPv6 first; both when none are set. */
export function serviceFamilies(service: SlimService): (4 | 6)[] {
  const families = service.ipFamilies.map((f) => (f === "IPv6" ? 6 : 4) as 4 | 6);
  if (families.length === 0) return [6, 4];
  return [...new Set(families)].sort((a, b) => b - a);
}

/** A member to send. */
export interface DesiredMember {
  /** Node the member stands for. */
  node: string;
  /** Address. */
  address: string;
}

/**
 * Member addresses for a load balancer on a private network: per family (IPv6 first), per node (by name), the
 * node's first InternalIP of that family, else its first ExternalIP.
 */
export function memberAddresses(nodes: SlimNode[], families: (4 | 6)[]): DesiredMember[] {
  const members: DesiredMember[] = [];
  for (const family of families) {
    for (const node of nodes) {
      const pick = (type: string) =>
        node.addresses.filter((a) => a.type === type).map((a) => parseIp(a.address)).find((ip) =>
          ip?.family === family
        );
      const ip = pick("InternalIP") ?? pick("ExternalIP");
      if (ip) members.push({ node: node.name, address: ip.text });
    }
  }
  return members;
}

/** A member with its name and port. */
export interface NamedMember {
  /** Member name. */
  name: string;
  /** Address. */
  address: string;
  /** Node port. */
  port: number;
}

/** Members of one backend differ from the desired ones (compared as multisets of name, address, port). */
export function membersDiffer(current: { name: string; address: string; port: number }[], desired: NamedMember[]) {
  const key = (m: { name: string; address: string; port: number }) =>
    `${m.name}|${parseIp(m.address)?.text ?? m.address}|${m.port}`;
  const a = current.map(key).sort();
  const b = desired.map(key).sort();
  return a.length !== b.length || a.some((k, i) => k !== b[i]);
}

/** One step of the listener plan. */
export type ListenerStep =
  | { kind: "delete-frontend"; frontendId: string; name: string }
  | { kind: "create-backend"; name: string; port: number }
  | { kind: "update-backend"; backendId: string; name: string }
  | { kind: "replace-members"; backendName: string; port: number }
  | { kind: "create-frontend"; name: string; port: number }
  | { kind: "delete-backend"; backendId: string; name: string };

/**
 * The steps that bring the load balancer's listeners to the Service's TCP ports: stale frontends go first; each port
 * gets a `tcp-<port>` backend (created, or its health check or balance updated) and members; a frontend whose port
 * or backend is wrong is recreated; stale backends go last. Members are decided by the caller per backend.
 */
export function listenerSteps(
  lb: LoadBalancer,
  ports: ForwardedPort[],
  settings: Pick<LoadBalancerSettings, "healthCheck" | "balance"> & Partial<FrontendSettings>,
): ListenerStep[] {
  const steps: ListenerStep[] = [];
  const wanted = new Map(ports.map((p) => [listenerName(p.port), p]));
  const protocol = settings.protocol ?? "tcp";
  for (const frontend of lb.frontends) {
    if (!wanted.has(frontend.name)) {
      steps.push({ kind: "delete-frontend", frontendId: frontend.id, name: frontend.name });
    }
  }
  for (const [name, port] of wanted) {
    let backend = lb.backends.find((b) => b.name === name);
    let frontend = lb.frontends.find((f) => f.name === name);
    if (backend && backend.mode !== protocol) {
      // A backend's mode cannot change: its frontend and the backend are made again.
      if (frontend) steps.push({ kind: "delete-frontend", frontendId: frontend.id, name });
      steps.push({ kind: "delete-backend", backendId: backend.id, name });
      backend = undefined;
      frontend = undefined;
    }
    if (!backend) steps.push({ kind: "create-backend", name, port: port.port });
    else {
      const hc = backend.health_check;
      const want = settings.healthCheck;
      const healthDiffers = hc.type !== want.type || hc.interval_seconds !== want.interval_seconds ||
        hc.rise !== want.rise || hc.fall !== want.fall ||
        // Path and expected status only matter for http checks (an API may normalise them for tcp ones).
        (want.type === "http" && (hc.path !== want.path || hc.expected_status !== want.expected_status));
      if (healthDiffers || backend.balance !== settings.balance) {
        steps.push({ kind: "update-backend", backendId: backend.id, name });
      }
    }
    steps.push({ kind: "replace-members", backendName: name, port: port.nodePort });
    const backendId = backend?.id;
    const options = frontendSettings(port.port, settings);
    const optionsDiffer = frontend !== undefined &&
      (Boolean(frontend.tls) !== options.tls || Boolean(frontend.redirect_to_https) !== options.redirect_to_https ||
        (frontend.certificate_ids ?? []).join(",") !== options.certificate_ids.join(","));
    if (
      frontend && (frontend.port !== port.port || (backendId && frontend.backend_id !== backendId) || optionsDiffer)
    ) {
      steps.push({ kind: "delete-frontend", frontendId: frontend.id, name });
      steps.push({ kind: "create-frontend", name, port: port.port });
    } else if (!frontend) {
      steps.push({ kind: "create-frontend", name, port: port.port });
    }
  }
  for (const backend of lb.backends) {
    if (!wanted.has(backend.name)) steps.push({ kind: "delete-backend", backendId: backend.id, name: backend.name });
  }
  return steps;
}

/** How frontends are set up. */
export type FrontendSettings = Pick<
  LoadBalancerSettings,
  "protocol" | "tlsPorts" | "certificateIds" | "redirectHttpToHttps"
>;

/** A port's frontend options: TLS with the certificates on the TLS ports; the HTTPS redirect on the others. */
export function frontendSettings(
  port: number,
  settings: Partial<FrontendSettings>,
): { tls: boolean; certificate_ids: string[]; redirect_to_https: boolean } {
  const tls = (settings.tlsPorts ?? []).includes(port);
  return {
    tls,
    certificate_ids: tls ? [...(settings.certificateIds ?? [])] : [],
    redirect_to_https: !tls && settings.protocol === "http" && Boolean(settings.redirectHttpToHttps),
  };
}

/**
 * The Service's ingress: every public IPv6 of the load balancer (both VMs of a pair), then its IPv4. No `ipMode`
 * (as the Go controller): clusters without the field would strip it and every pass would look like a change.
 */
export function loadBalancerIngress(lb: LoadBalancer): { ip: string }[] {
  const ips = [...new Set([...(lb.public_ipv6_addresses ?? []), ...(lb.public_ipv6 ? [lb.public_ipv6] : [])])];
  if (lb.public_ipv4) ips.push(lb.public_ipv4);
  return ips.map((ip) => ({ ip }));
}

/** True when two ingress lists hold the same addresses in the same order. */
export function sameIngress(a: { ip?: string }[], b: { ip?: string }[]): boolean {
  return a.length === b.length && a.every((x, i) => x.ip === b[i].ip);
}

/** The zone of a new load balancer: annotation, configured default, then the first node (by name) that has one. */
export function chooseZone(
  settings: Pick<LoadBalancerSettings, "zone">,
  defaultZone: string | undefined,
  nodes: SlimNode[],
): string | undefined {
  if (settings.zone) return settings.zone;
  if (defaultZone) return defaultZone;
  for (const node of [...nodes].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const label = node.labels["topology.kubernetes.io/zone"];
    if (label) return label;
    const match = /^ankracloud:\/\/([^/]+)\/[^/]+$/.exec(node.providerID ?? "");
    if (match) return match[1];
  }
  return undefined;
}
