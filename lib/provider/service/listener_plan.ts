/**
 * A load balancer's listeners for a Service's TCP ports: per port a `tcp-<port>` backend with its members and a
 * frontend with its TLS and redirect options ({@linkcode listenerCalls}: stale frontends first, backends created or
 * updated, members replaced in one call per backend, frontends remade when their port, backend or TLS options changed,
 * stale backends last). Only listeners this controller makes (`tcp-<port>`) are changed or deleted; a port a
 * hand-made frontend serves is left as it is ({@linkcode portsHeldByHand}); on a shared load balancer the other
 * Services' listeners are never touched. Pure.
 *
 * @module
 */
import type { LoadBalancer } from "../../cloud/schemas.ts";
import type { MemberInput } from "../../cloud/load_balancers.ts";
import type { LoadBalancerSettings } from "./annotations.ts";
import type { BackendRef, CloudCall, LoadBalancerRef } from "./cloud_calls.ts";
import { isManagedListener, listenerName } from "./load_balancer_names.ts";
import { backendMembers, membersDiffer } from "./member_drain.ts";
import type { LoadBalancerIntent, Notice } from "./service_plan.ts";

/** How frontends are set up. */
type FrontendSettings = Pick<
  LoadBalancerSettings,
  "protocol" | "tlsPorts" | "certificateIds" | "redirectHttpToHttps"
>;

/** A port's frontend options: TLS with the certificates on the TLS ports; the HTTPS redirect on the others. */
function frontendSettings(
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

/** What the listener plan reads of a Service's intent. */
export type ListenerIntent = Pick<LoadBalancerIntent, "ports" | "members"> & {
  settings: Pick<LoadBalancerSettings, "healthCheck" | "balance"> & Partial<FrontendSettings>;
  /** Each backend's members to send, by listener name, where they are more than `members` (draining ones). */
  memberLists?: ReadonlyMap<string, MemberInput[]>;
  /** On a shared load balancer: the listeners of the other Services, never changed or deleted by this one's pass. */
  othersListeners?: ReadonlySet<string>;
};

/**
 * The ports of the Service that a frontend this controller did not make already serves (on a load balancer adopted
 * with `load-balancer.ankra.cloud/load-balancer-id`), with that frontend's name: they are left as they are.
 */
function portsHeldByHand(
  lb: Pick<LoadBalancer, "frontends">,
  intent: Pick<LoadBalancerIntent, "ports">,
): Map<number, string> {
  const held = new Map<number, string>();
  for (const frontend of lb.frontends) {
    if (!isManagedListener(frontend.name) && intent.ports.some((p) => p.port === frontend.port)) {
      held.set(frontend.port, frontend.name);
    }
  }
  return held;
}

/** The `PortInUse` notice: Service ports a hand-made frontend serves, which this controller does not forward. */
export function handMadePortsNotice(
  lb: Pick<LoadBalancer, "id" | "frontends">,
  intent: Pick<LoadBalancerIntent, "ports">,
): Notice {
  const held = [...portsHeldByHand(lb, intent)];
  return {
    topic: "hand-made-ports",
    reason: "PortInUse",
    message: held.length
      ? `load balancer ${lb.id} already serves ${
        held.map(([port, name]) => `port ${port} (frontend ${name})`).join(", ")
      } with a frontend this controller did not make; it is left as it is and the Service's port is not forwarded: ` +
        "free the port on the load balancer or change the Service's port"
      : undefined,
  };
}

/**
 * The calls that bring a load balancer's listeners to the Service's TCP ports. `lb` is the full document (empty
 * `frontends`/`backends` for one the plan creates) and `ref` how calls name it. Only the listeners this controller
 * makes (`tcp-<port>`) are changed or deleted; a port a hand-made frontend serves is skipped ({@linkcode portsHeldByHand}).
 */
export function listenerCalls(
  lb: Pick<LoadBalancer, "frontends" | "backends">,
  intent: ListenerIntent,
  ref: LoadBalancerRef,
): CloudCall[] {
  const calls: CloudCall[] = [];
  const { settings } = intent;
  const held = portsHeldByHand(lb, intent);
  const wanted = new Map(intent.ports.filter((p) => !held.has(p.port)).map((p) => [listenerName(p.port), p]));
  const protocol = settings.protocol ?? "tcp";
  const others = intent.othersListeners ?? new Set<string>();
  const isStale = (name: string) => !wanted.has(name) && isManagedListener(name) && !others.has(name);
  for (const frontend of lb.frontends) {
    if (isStale(frontend.name)) {
      calls.push({
        operation: "delete_load_balancer_frontend",
        loadBalancer: ref,
        frontendId: frontend.id,
        name: frontend.name,
      });
    }
  }
  for (const [name, port] of wanted) {
    let backend = lb.backends.find((b) => b.name === name);
    let frontend = lb.frontends.find((f) => f.name === name);
    if (backend && backend.mode !== protocol) {
      // A backend's mode cannot change: its frontend and the backend are made again.
      if (frontend) {
        calls.push({ operation: "delete_load_balancer_frontend", loadBalancer: ref, frontendId: frontend.id, name });
      }
      calls.push({ operation: "delete_load_balancer_backend", loadBalancer: ref, backend: { id: backend.id }, name });
      backend = undefined;
      frontend = undefined;
    }
    const backendRef: BackendRef = backend ? { id: backend.id } : { createdName: name };
    if (!backend) {
      calls.push({
        operation: "create_load_balancer_backend",
        loadBalancer: ref,
        body: { name, mode: protocol, balance: settings.balance, health_check: settings.healthCheck },
      });
    } else {
      const hc = backend.health_check;
      const want = settings.healthCheck;
      const healthDiffers = hc.type !== want.type || hc.interval_seconds !== want.interval_seconds ||
        hc.rise !== want.rise || hc.fall !== want.fall ||
        // Path and expected status only matter for http checks (an API may normalise them for tcp ones).
        (want.type === "http" && (hc.path !== want.path || hc.expected_status !== want.expected_status));
      if (healthDiffers || backend.balance !== settings.balance) {
        calls.push({
          operation: "update_load_balancer_backend",
          loadBalancer: ref,
          backend: backendRef,
          name,
          body: { balance: settings.balance, health_check: settings.healthCheck },
        });
      }
    }
    const members = intent.memberLists?.get(name) ?? backendMembers(intent.members, port.nodePort);
    if (!backend || membersDiffer(backend.members, members)) {
      calls.push({
        operation: "replace_load_balancer_members",
        loadBalancer: ref,
        backend: backendRef,
        name,
        body: { members },
      });
    }
    const options = frontendSettings(port.port, settings);
    const optionsDiffer = frontend !== undefined &&
      (Boolean(frontend.tls) !== options.tls || Boolean(frontend.redirect_to_https) !== options.redirect_to_https ||
        (frontend.certificate_ids ?? []).join(",") !== options.certificate_ids.join(","));
    const stale = frontend !== undefined &&
      (frontend.port !== port.port || (backend !== undefined && frontend.backend_id !== backend.id) || optionsDiffer);
    if (frontend && stale) {
      calls.push({ operation: "delete_load_balancer_frontend", loadBalancer: ref, frontendId: frontend.id, name });
    }
    if (!frontend || stale) {
      calls.push({
        operation: "create_load_balancer_frontend",
        loadBalancer: ref,
        backend: backendRef,
        body: { name, port: port.port, ...options },
      });
    }
  }
  for (const backend of lb.backends) {
    if (isStale(backend.name)) {
      calls.push({
        operation: "delete_load_balancer_backend",
        loadBalancer: ref,
        backend: { id: backend.id },
        name: backend.name,
      });
    }
  }
  return calls;
}
