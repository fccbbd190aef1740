/**
 * The Service's `load-balancer.ankra.cloud/Ready` condition (KEP-4631's idea: a status people and tools can read,
 * `kubectl wait --for=condition=load-balancer.ankra.cloud/Ready svc/x`): `True` once the load balancer serves the
 * Service's address, `False` with a reason and the message the user is also told in an event, `observedGeneration`
 * the Service's generation the pass looked at. Written only when it changes: none at steady state.
 *
 * Reasons of `False`: `Creating` (created or being changed, not serving yet), `WaitingForNodes` (its nodes are still
 * being initialised), `NoEligibleNodes` (it exists but no node may be a member), `InvalidAnnotation`,
 * `ResourceNotAllowed`, `NoMatchingNodes` (the node selector matches no node), `UnsupportedPort`, `NoNodePort`,
 * `NoZone`, `NoNetwork` and `NoMemberAddress` (no zone, network or member address for a new load balancer),
 * `ClusterNameCollision`, `QuotaExceeded`, `PaymentRequired`, `InvalidRequest` (the API refused a request as invalid),
 * `Unauthorized` (the token), `WaitingForAPI` (an outage, a rate limit, a timeout: retried), `SyncFailed` (anything
 * else, retried). `True` has the reason `Serving`.
 *
 * Pure functions.
 *
 * @module
 */
import { READY_CONDITION_TYPE } from "../../ankra_names.ts";
import type { ServiceIntent } from "./service_plan.ts";

/** Most characters of a condition's message (the API's limit is 32,768; events are cut at 1,024 too). */
const MESSAGE_LIMIT = 1_024;

/** What a pass found: serving or not, why, in words. */
export interface ReadyState {
  /** `True` when the load balancer serves the Service's address. */
  status: "True" | "False";
  /** CamelCase reason (see the module documentation). */
  reason: string;
  /** What the user reads. */
  message: string;
}

/** The condition as the Service's status holds it (`metav1.Condition`). */
interface ReadyCondition extends ReadyState {
  /** The condition type, {@linkcode READY_CONDITION_TYPE}. */
  type: string;
  /** The Service generation this state was found for. */
  observedGeneration?: number;
  /** When `status` last changed (RFC 3339). */
  lastTransitionTime: string;
}

/** Serving: `what` (`load balancer lb-1`, `edge edge-1`) at `addresses` (when known). */
export function servingState(what: string, addresses: string[] = []): ReadyState {
  return {
    status: "True",
    reason: "Serving",
    message: addresses.length > 0 ? `${what} serves at ${addresses.join(", ")}` : `${what} serves the Service`,
  };
}

/** Not serving, for `reason`. */
export function notReady(reason: string, message: string): ReadyState {
  return { status: "False", reason, message };
}

/**
 * Why a pass that must wait for the user (`intent.waitFor`) stops: the notice that tells it (invalid or not allowed
 * annotations first, then a node selector that matches nothing, then ports), else the wait itself.
 */
export function waitingState(intent: Pick<ServiceIntent, "notices" | "waitFor">): ReadyState | undefined {
  if (!intent.waitFor) return undefined;
  for (const topic of ["annotations", "node-selector", "ports"]) {
    const told = intent.notices.find((n) => n.topic === topic && n.message);
    if (told?.message) return notReady(told.reason, told.message);
  }
  return notReady("NoNodePort", intent.waitFor.message);
}

/**
 * The condition to write for `state`, or undefined when `current` already says it (same status, reason, message and
 * generation): no write at steady state. `lastTransitionTime` moves only when the status changes.
 */
export function readyConditionUpdate(
  current: ReadyCondition | undefined,
  state: ReadyState,
  options: { generation?: number; now: Date },
): ReadyCondition | undefined {
  const message = state.message.length > MESSAGE_LIMIT
    ? `${state.message.slice(0, MESSAGE_LIMIT - 1)}…`
    : state.message;
  if (
    current && current.status === state.status && current.reason === state.reason && current.message === message &&
    current.observedGeneration === options.generation
  ) {
    return undefined;
  }
  return {
    type: READY_CONDITION_TYPE,
    status: state.status,
    reason: state.reason,
    message,
    ...(options.generation === undefined ? {} : { observedGeneration: options.generation }),
    lastTransitionTime: current && current.status === state.status
      ? current.lastTransitionTime
      : options.now.toISOString().replace(/\.\d+Z$/, "Z"),
  };
}
