/**
 * What the control API's `/_simulator/state` shows of the data plane (docs/simulator.md, "What `/_simulator/state`
 * shows", is the table of fields and their sources), from one {@linkcode DataPlaneView}: the plans, the listeners'
 * states, and each HAProxy's runtime API read at one moment. Without a data plane: `{mode: "off"}` and the documents
 * unchanged. Pure functions; nothing here starts, reloads or asks a process.
 *
 * @module
 */
import type { EdgeState } from "../edges.ts";
import type { LoadBalancerState } from "../load_balancer_state.ts";
import { bindName } from "./haproxy_config.ts";
import { backendSection, edgeSection, type ListenerSpec, type ProxyPlan, serverName } from "./haproxy_plan.ts";
import type { RuntimeStats, StatRow } from "./haproxy_runtime.ts";
import type { ActiveDataPlaneMode } from "./local_addresses.ts";

/**
 * A planned listener and whether HAProxy serves it: `listening` (its HAProxy runs it), `opening`, `failed` (with
 * `error`) or `not_served` (with the spec's `reason`).
 */
export type ListenerView = ListenerSpec & { state: "listening" | "opening" | "failed" | "not_served"; error?: string };

/**
 * One owner's HAProxy now: the runtime API's figures, when HAProxy last reported a check of each `backend/server` (its
 * `option log-health-checks` lines), the master's PID and socket and the configuration file.
 */
export interface OwnerStats extends RuntimeStats {
  checks: ReadonlyMap<string, string>;
  process: { pid: number; masterSocket: string; configPath: string };
}

/**
 * What `/_simulator/state` shows of the data plane, read at one moment: its mode and, by owner in plan order, its
 * plan, every listener planned for it with its state, and its HAProxy's figures (absent while none runs or answers).
 */
export interface DataPlaneView {
  mode: ActiveDataPlaneMode;
  owners: ReadonlyMap<string, OwnerView>;
}

/** One owner in a {@linkcode DataPlaneView}. */
interface OwnerView {
  plan?: ProxyPlan;
  listeners: ListenerView[];
  stats?: OwnerStats;
}

type Doc = Record<string, unknown>;

/** The API's `health` of a server by its `status`: `up` (also at weight 0 or with no check), `down` otherwise. */
export function serverHealth(status: string): "up" | "down" {
  return /^(UP|NOLB|DRAIN|no check)/.test(status) ? "up" : "down";
}

/** The result and words of a server's last check, or undefined before its first (and with no check). */
export function lastCheckOf(row: StatRow): { result: "passed" | "failed"; detail: string } | undefined {
  const status = (row.check_status ?? "").replace(/^\* /, "");
  if (!status || status === "INI" || status === "UNK") return undefined;
  const passed = /^L[4-7]OK/.test(status);
  const words = [`${status} ${row.check_desc ?? ""}`.trim()];
  if (row.check_code) words.push(`code ${row.check_code}`);
  if (row.last_chk) words.push(row.last_chk);
  return { result: passed ? "passed" : "failed", detail: words.join(", ") };
}

function listenerDocument(listener: ListenerView, stats: OwnerStats | undefined): Doc {
  const { route } = listener;
  const bind = stats?.rows.find((row) => row.type === "3" && row.svname === bindName(listener));
  return {
    address: listener.address,
    port: listener.port,
    ...(route.kind === "load_balancer"
      ? { load_balancer_id: route.loadBalancerId, frontend_id: route.frontendId }
      : { edge_id: route.edgeId, frontend_port: route.frontendPort }),
    tls: Boolean(listener.tls),
    state: listener.state,
    ...(listener.error ? { error: listener.error } : {}),
    ...(listener.reason ? { reason: listener.reason } : {}),
    connections_total: Number(bind?.stot || 0),
  };
}

/** The state's top-level `data_plane`. */
export function dataPlaneDocument(view: DataPlaneView | undefined): Doc {
  if (!view) return { mode: "off" };
  const owners = [...view.owners.values()];
  return { mode: view.mode, listeners: owners.flatMap((o) => o.listeners.map((l) => listenerDocument(l, o.stats))) };
}

function processDocument(stats: OwnerStats | undefined): Doc | null {
  const process = stats?.process;
  return process ? { pid: process.pid, master_socket: process.masterSocket, config: process.configPath } : null;
}

/** A member's fields: its server `name` in `sections` (the first holds its checks); `unreachable`, the plan's. */
function memberFields(stats: OwnerStats | undefined, sections: string[], name: string, unreachable?: string): Doc {
  const rows = stats?.rows.filter((r) => r.type === "2" && sections.includes(r.pxname) && r.svname === name);
  const checked = rows?.find((r) => r.pxname === sections[0]);
  const check = checked ? lastCheckOf(checked) : undefined;
  return {
    health: checked ? serverHealth(checked.status ?? "") : null,
    last_check: unreachable
      ? { result: "failed", at: null, detail: `not checked: ${unreachable}` }
      : check
      ? { ...check, at: stats?.checks.get(`${sections[0]}/${name}`) ?? null }
      : null,
    connections_total: (rows ?? []).reduce((sum, r) => sum + Number(r.connect || 0), 0),
    connections_active: sections.reduce((sum, s) => sum + (stats?.active.get(`${s}/${name}`) ?? 0), 0),
  };
}

/** `doc` with its owner's `haproxy` process and the fields `more` reads from its plan, listeners and figures. */
function decorated(doc: Doc, id: string, view: DataPlaneView | undefined, more: (owner: OwnerView) => Doc): Doc {
  if (!view) return doc;
  const owner = view.owners.get(id) ?? { listeners: [] };
  return { ...doc, haproxy: processDocument(owner.stats), ...more(owner) };
}

/** A full `LoadBalancer` document with the data plane's fields on its frontends and members. */
export function decorateLoadBalancer(doc: Doc, lb: LoadBalancerState, view: DataPlaneView | undefined): Doc {
  return decorated(doc, lb.id, view, ({ plan, listeners, stats }) => ({
    frontends: (doc.frontends as Doc[]).map((frontend) => ({
      ...frontend,
      connections_total: (stats?.rows ?? []).filter((r) => r.type === "0" && r.pxname.startsWith(`${frontend.id}.vm`))
        .reduce((sum, r) => sum + Number(r.conn_tot || 0), 0),
      listeners: listeners.filter((l) => l.route.kind === "load_balancer" && l.route.frontendId === frontend.id)
        .map((l) => listenerDocument(l, stats)),
    })),
    backends: (doc.backends as Doc[]).map((backend) => {
      const first = backendSection(String(backend.id), 0);
      const others = (plan?.backends ?? []).map((b) => b.name)
        .filter((name) => name.startsWith(`${backend.id}.vm`) && name !== first);
      const servers = plan?.backends.find((b) => b.name === first)?.servers;
      const members = (backend.members as Doc[]).map((member) => {
        const name = serverName(member as { id: string; address: string; port: number });
        const unreachable = servers?.find((s) => s.name === name)?.unreachable;
        return { ...member, ...memberFields(stats, [first, ...others], name, unreachable) };
      });
      return { ...backend, members };
    }),
  }));
}

/** A full `Edge` document with the data plane's fields on its members (as its last finished sync applied them). */
export function decorateEdge(doc: Doc, edge: EdgeState, view: DataPlaneView | undefined): Doc {
  return decorated(doc, edge.id, view, ({ plan, listeners, stats }) => ({
    listeners: listeners.map((l) => listenerDocument(l, stats)),
    members: (doc.members as Doc[]).map((member) => {
      const section = edgeSection(Number(member.frontend_port));
      const server = plan?.backends.find((b) => b.name === section)?.servers.find((s) => s.member === member.name);
      if (!server) return { ...member, ...memberFields(undefined, [], "") };
      return { ...member, ...memberFields(stats, [section], server.name, server.unreachable) };
    }),
  }));
}
