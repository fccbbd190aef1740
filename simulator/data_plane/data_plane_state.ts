/**
 * What the control API's `/_simulator/state` shows of the data plane: its mode and every listener (listening, failed
 * with the error, or not served with the reason, and the connections it accepted); on each load balancer frontend
 * its `connections_total` and `listeners`; on each member (of load balancer backends and of combined edges) its
 * `health` (`up`, `down`, or null while nothing serves it), `last_check` (`{result, at, detail}` or null) and
 * `connections_total` / `connections_active`; on each edge its `listeners`. Without a data plane: `{mode: "off"}`
 * and the documents unchanged.
 *
 * @module
 */
import type { EdgeState } from "../edges.ts";
import type { LoadBalancerState } from "../load_balancer_state.ts";
import { edgeBackends, loadBalancerBackends } from "./backend_view.ts";
import type { DataPlane, ListenerEntry } from "./data_plane.ts";

type Doc = Record<string, unknown>;

/** One listener as the state shows it. */
export function listenerDocument(entry: ListenerEntry): Doc {
  const route = entry.spec.route;
  return {
    address: entry.spec.address,
    port: entry.spec.port,
    ...(route.kind === "load_balancer"
      ? { load_balancer_id: route.loadBalancerId, frontend_id: route.frontendId }
      : { edge_id: route.edgeId, frontend_port: route.frontendPort }),
    tls: Boolean(entry.spec.tls),
    state: entry.status,
    ...(entry.error ? { error: entry.error } : {}),
    ...(entry.spec.reason ? { reason: entry.spec.reason } : {}),
    connections_total: entry.connectionsTotal,
  };
}

/** The state's top-level `data_plane`. */
export function dataPlaneDocument(dataPlane: DataPlane | undefined): Doc {
  if (!dataPlane) return { mode: "off" };
  return { mode: dataPlane.mode, listeners: dataPlane.listeners().map(listenerDocument) };
}

function memberFields(dataPlane: DataPlane, key: string | undefined): Doc {
  const runtime = key ? dataPlane.member(key) : undefined;
  return {
    health: runtime ? (runtime.health.up ? "up" : "down") : null,
    last_check: runtime?.lastCheck ? { ...runtime.lastCheck } : null,
    connections_total: runtime?.connectionsTotal ?? 0,
    connections_active: runtime?.connectionsActive ?? 0,
  };
}

/** A full `LoadBalancer` document with the data plane's fields on its frontends and members. */
export function decorateLoadBalancer(doc: Doc, lb: LoadBalancerState, dataPlane: DataPlane | undefined): Doc {
  if (!dataPlane) return doc;
  const listeners = dataPlane.listeners();
  const keys = new Map(
    loadBalancerBackends(lb).flatMap((b) => b.members.map((m) => [`${b.key}|${m.id}`, m.key] as const)),
  );
  return {
    ...doc,
    frontends: (doc.frontends as Doc[]).map((frontend) => ({
      ...frontend,
      connections_total: dataPlane.frontendConnections(`${lb.id}|${frontend.id}`),
      listeners: listeners.filter((e) =>
        e.spec.route.kind === "load_balancer" && e.spec.route.loadBalancerId === lb.id &&
        e.spec.route.frontendId === frontend.id
      ).map(listenerDocument),
    })),
    backends: (doc.backends as Doc[]).map((backend) => ({
      ...backend,
      members: (backend.members as Doc[]).map((member) => ({
        ...member,
        ...memberFields(dataPlane, keys.get(`${lb.id}|${backend.id}|${member.id}`)),
      })),
    })),
  };
}

/** A full `Edge` document with the data plane's fields on its members and its `listeners`. */
export function decorateEdge(doc: Doc, edge: EdgeState, dataPlane: DataPlane | undefined): Doc {
  if (!dataPlane) return doc;
  const keys = new Map(
    edgeBackends(edge, dataPlane.edgeMembers(edge.id)).flatMap((b) =>
      b.members.map((m) => [`${m.name}|${b.key}`, m.key] as const)
    ),
  );
  return {
    ...doc,
    listeners: dataPlane.listeners().filter((e) => e.spec.route.kind === "edge" && e.spec.route.edgeId === edge.id)
      .map(listenerDocument),
    members: (doc.members as Doc[]).map((member) => ({
      ...member,
      ...memberFields(dataPlane, keys.get(`${member.name}|${edge.id}|${member.frontend_port}`)),
    })),
  };
}
