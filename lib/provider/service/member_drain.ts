/**
 * Graceful drain of the members a Service's load balancer loses (a node excluded, tainted for deletion by the
 * autoscaler, deleted, or — for `externalTrafficPolicy: Local` — no longer holding a ready endpoint): such a member
 * first stays with `weight: 0` — HAProxy sends it no new connection, open ones continue — and leaves once it has
 * drained for the drain period (`--member-drain-period`, default 30 s; `0` removes at once, as before). Members that
 * start draining together leave together, in one member replacement; a node that comes back while draining gets its
 * weight back without ever being removed. The drain never pushes a backend past the API's 256 members: the members
 * draining longest leave first.
 *
 * The window itself is the one rule of `drain_window.ts` (node-address mode drains its nodes by it too); this module
 * adds the members' weights, the cap, and the per-listener bookkeeping. Pure functions.
 *
 * @module
 */
import type { MemberInput } from "../../cloud/load_balancers.ts";
import type { LoadBalancer } from "../../cloud/schemas.ts";
import { listenerName, memberName } from "./load_balancer_names.ts";
import type { DesiredMember } from "./member_selection.ts";
import type { LoadBalancerIntent } from "./service_plan.ts";
import { parseIp } from "../../ip_address.ts";
import { MAX_MEMBERS } from "./member_selection.ts";
import { type DrainStarts, drainWindow, endOf } from "./drain_window.ts";

/** The API's weight of a member that names none. */
export const DEFAULT_WEIGHT = 100;

/** A backend's member as the API lists it. */
interface CurrentMember {
  /** `<node>-<hash>` from {@linkcode memberName}: stable for a node and address, so drains are tracked by it. */
  name: string;
  /** IPv4 or IPv6, as the API lists it; compared with the desired address in canonical form. */
  address: string;
  /** The Service's node port for this backend. */
  port: number;
  /** Weight (the API's default when absent). */
  weight?: number;
}

/** The members to send for one backend, the drains that go on, and when the next one ends. */
interface DrainPlan {
  /** The members: the desired ones, then those draining with weight 0. */
  members: MemberInput[];
  /** The drains still going on after this step, by member name. */
  draining: Map<string, number>;
  /** When the earliest drain ends (a pass is due then); absent when nothing drains. */
  nextAtMs?: number;
}

/** What {@linkcode drainMembers} decides from, besides the members. */
interface DrainOptions {
  /** The drain period; 0: members leave at once. */
  periodMs: number;
  /** Now, epoch milliseconds. */
  now: number;
  /** The drains known from earlier passes. */
  draining: DrainStarts;
}

/**
 * The members of one backend for this pass: every `desired` member (with the default weight given back to one that
 * was drained), and every `current` member that is no longer desired while its drain lasts, with weight 0.
 */
export function drainMembers(current: CurrentMember[], desired: MemberInput[], options: DrainOptions): DrainPlan {
  const wanted = new Set(desired.map((m) => m.name));
  const weights = new Map(current.map((m) => [m.name, m.weight ?? DEFAULT_WEIGHT]));
  const members: MemberInput[] = desired.map((m) => {
    const now = weights.get(m.name);
    return now !== undefined && now !== (m.weight ?? DEFAULT_WEIGHT) ? { ...m, weight: m.weight ?? DEFAULT_WEIGHT } : m;
  });
  const leaving = new Map(current.filter((m) => !wanted.has(m.name)).map((m) => [m.name, m]));
  const window = drainWindow(leaving.keys(), options.draining, options);
  // Within the API's cap: the members draining longest leave first (the window lists the most recent first).
  const room = Math.max(0, MAX_MEMBERS - members.length);
  const draining = new Map<string, number>();
  for (const [name, since] of [...window.draining].slice(0, room)) {
    const member = leaving.get(name)!;
    members.push({ name, address: member.address, port: member.port, weight: 0 });
    draining.set(name, since);
  }
  return { members, ...endOf(draining, options.periodMs) };
}

/** True when the members of one backend differ from the ones to send (name, address, port and weight). */
export function membersDiffer(
  current: { name: string; address: string; port: number; weight?: number }[],
  desired: { name: string; address: string; port: number; weight?: number }[],
): boolean {
  const key = (m: { name: string; address: string; port: number; weight?: number }) =>
    `${m.name}|${parseIp(m.address)?.text ?? m.address}|${m.port}|${m.weight ?? DEFAULT_WEIGHT}`;
  const a = current.map(key).sort();
  const b = desired.map(key).sort();
  return a.length !== b.length || a.some((k, i) => k !== b[i]);
}

/** The members of one backend: the chosen addresses on the port's node port, named as the Go controller names them. */
export function backendMembers(members: readonly DesiredMember[], nodePort: number): MemberInput[] {
  return members.map((m) => ({ name: memberName(m.node, m.address), address: m.address, port: nodePort }));
}

/** Each listener's members to send on `lb` with their drains, and when the next drain ends. */
export function drainPlans(
  lb: Pick<LoadBalancer, "backends">,
  intent: Pick<LoadBalancerIntent, "ports" | "members">,
  drain: { periodMs: number; now: number; draining: ReadonlyMap<string, DrainStarts> },
): {
  memberLists: Map<string, MemberInput[]>;
  drain: { draining: Map<string, Map<string, number>>; nextAtMs?: number };
} {
  const memberLists = new Map<string, MemberInput[]>();
  const draining = new Map<string, Map<string, number>>();
  let nextAtMs: number | undefined;
  for (const port of intent.ports) {
    const name = listenerName(port.port);
    const current = lb.backends.find((b) => b.name === name)?.members ?? [];
    const plan = drainMembers(current, backendMembers(intent.members, port.nodePort), {
      periodMs: drain.periodMs,
      now: drain.now,
      draining: drain.draining.get(name) ?? new Map(),
    });
    memberLists.set(name, plan.members);
    if (plan.draining.size > 0) draining.set(name, plan.draining);
    if (plan.nextAtMs !== undefined) nextAtMs = Math.min(nextAtMs ?? Infinity, plan.nextAtMs);
  }
  return { memberLists, drain: nextAtMs === undefined ? { draining } : { draining, nextAtMs } };
}
