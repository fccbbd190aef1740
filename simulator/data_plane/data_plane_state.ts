/**
 * What the control API's `/_simulator/state` shows of the data plane, from one {@linkcode DataPlaneView} (HAProxy's
 * runtime API read at one moment): its mode and every listener (listening, opening, failed with the error, or not
 * served with the reason, and the connections it accepted: its bind's `stot`); on each load balancer frontend its
 * `connections_total` (the frontends' `conn_tot`) and `listeners`; on each member (of load balancer backends and of
 * combined edges) its `health` (from its server's `status`: `up`, `down`, or null while no HAProxy serves it),
 * `last_check` (`check_status`, `check_desc`, `check_code`, `last_chk`; `at` when HAProxy last reported a check of it),
 * `connections_total` (`connect`) and `connections_active` (`scur`, old workers included); on each load balancer and
 * edge its `haproxy` process; on each edge its `listeners`. Without a data plane: `{mode: "off"}` and the documents
 * unchanged. Pure functions.
 *
 * @module
 */
import type { EdgeState } from "../edges.ts";
import type { LoadBalancerState } from "../load_balancer_state.ts";
import type { DataPlaneView, ListenerView, OwnerStats } from "./data_plane.ts";
import { bindName } from "./haproxy_config.ts";
import { lastCheckOf, serverHealth } from "./haproxy_status.ts";
import { backendSection, edgeSection, serverName, type ServerPlan } from "./proxy_plan.ts";

type Doc = Record<string, unknown>;

/** One listener as the state shows it. */
export function listenerDocument(view: ListenerView, stats: OwnerStats | undefined): Doc {
  const { spec } = view;
  const route = spec.route;
  const bind = stats?.rows.find((row) => row.type === "3" && row.svname === bindName(spec));
  return {
    address: spec.address,
    port: spec.port,
    ...(route.kind === "load_balancer"
      ? { load_balancer_id: route.loadBalancerId, frontend_id: route.frontendId }
      : { edge_id: route.edgeId, frontend_port: route.frontendPort }),
    tls: Boolean(spec.tls),
    state: view.state,
    ...(view.error ? { error: view.error } : {}),
    ...(spec.reason ? { reason: spec.reason } : {}),
    connections_total: Number(bind?.stot || 0),
  };
}

function ownerOf(view: ListenerView): string {
  return view.spec.route.kind === "load_balancer" ? view.spec.route.loadBalancerId : view.spec.route.edgeId;
}

/** The state's top-level `data_plane`. */
export function dataPlaneDocument(view: DataPlaneView | undefined): Doc {
  if (!view) return { mode: "off" };
  return { mode: view.mode, listeners: view.listeners.map((l) => listenerDocument(l, view.owners.get(ownerOf(l)))) };
}

function processDocument(stats: OwnerStats | undefined): Doc | null {
  if (!stats) return null;
  return { pid: stats.process.pid, master_socket: stats.process.masterSocket, config: stats.process.configPath };
}

/** A member's fields: its server in `sections` (the first holds its checks), `plan` as the owner's plan has it. */
function memberFields(
  stats: OwnerStats | undefined,
  where: { sections: string[]; server: string; plan: ServerPlan | undefined },
): Doc {
  const rows = stats?.rows.filter((r) =>
    r.type === "2" && where.sections.includes(r.pxname) && r.svname === where.server
  );
  const checked = rows?.find((r) => r.pxname === where.sections[0]);
  const check = checked ? lastCheckOf(checked) : undefined;
  const unreachable = where.plan?.unreachable;
  return {
    health: checked ? serverHealth(checked.status ?? "") : null,
    last_check: unreachable
      ? { result: "failed", at: null, detail: `not checked: ${unreachable}` }
      : check
      ? { ...check, at: stats?.checks.get(`${where.sections[0]}/${where.server}`) ?? null }
      : null,
    connections_total: (rows ?? []).reduce((sum, r) => sum + Number(r.connect || 0), 0),
    connections_active: where.sections.reduce((sum, s) => sum + (stats?.active.get(`${s}/${where.server}`) ?? 0), 0),
  };
}

/** A full `LoadBalancer` document with the data plane's fields on its frontends and members. */
export function decorateLoadBalancer(doc: Doc, lb: LoadBalancerState, view: DataPlaneView | undefined): Doc {
  if (!view) return doc;
  const stats = view.owners.get(lb.id);
  const plan = view.plans.get(lb.id);
  return {
    ...doc,
    haproxy: processDocument(stats),
    frontends: (doc.frontends as Doc[]).map((frontend) => ({
      ...frontend,
      connections_total: (stats?.rows ?? []).filter((r) => r.type === "0" && r.pxname.startsWith(`${frontend.id}.vm`))
        .reduce((sum, r) => sum + Number(r.conn_tot || 0), 0),
      listeners: view.listeners.filter((l) =>
        l.spec.route.kind === "load_balancer" && l.spec.route.loadBalancerId === lb.id &&
        l.spec.route.frontendId === frontend.id
      ).map((l) => listenerDocument(l, stats)),
    })),
    backends: (doc.backends as Doc[]).map((backend) => {
      const sections = (plan?.backends ?? []).map((b) => b.name).filter((name) => name.startsWith(`${backend.id}.vm`));
      if (!sections.includes(backendSection(String(backend.id), 0))) {
        sections.unshift(backendSection(String(backend.id), 0));
      }
      const servers = plan?.backends.find((b) => b.name === sections[0])?.servers;
      return {
        ...backend,
        members: (backend.members as Doc[]).map((member) => {
          const server = serverName(member as { id: string; address: string; port: number });
          return {
            ...member,
            ...memberFields(stats, { sections, server, plan: servers?.find((s) => s.name === server) }),
          };
        }),
      };
    }),
  };
}

/** A full `Edge` document with the data plane's fields on its members, its `listeners` and `haproxy`. */
export function decorateEdge(doc: Doc, edge: EdgeState, view: DataPlaneView | undefined): Doc {
  if (!view) return doc;
  const stats = view.owners.get(edge.id);
  const applied = view.edgeMembers.get(edge.id) ?? [];
  const plan = view.plans.get(edge.id);
  return {
    ...doc,
    haproxy: processDocument(stats),
    listeners: view.listeners.filter((l) => l.spec.route.kind === "edge" && l.spec.route.edgeId === edge.id)
      .map((l) => listenerDocument(l, stats)),
    members: (doc.members as Doc[]).map((member) => {
      const served = applied.find((m) => m.name === member.name && m.frontend_port === member.frontend_port);
      if (!served) return { ...member, ...memberFields(undefined, { sections: [], server: "", plan: undefined }) };
      const section = edgeSection(served.frontend_port);
      const server = serverName({ ...served, id: served.name });
      const servers = plan?.backends.find((b) => b.name === section)?.servers;
      return {
        ...member,
        ...memberFields(stats, { sections: [section], server, plan: servers?.find((s) => s.name === server) }),
      };
    }),
  };
}
