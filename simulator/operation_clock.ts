/**
 * The life of the simulator's asynchronous operations on the world's clock. An operation may wait `pending` before it
 * runs; it may pass through named steps, each making its change to the world when its time comes (a server turning
 * `stopping`); and it ends at its finish time, `succeeded` — or `failed`, when it was made to — applying what it
 * finishes with. Nothing runs on a timer: {@linkcode advanceOperations} applies everything whose time has come, in
 * clock order, on every request.
 *
 * @module
 */
import type { OperationState } from "./world_state.ts";

/** How a new operation unfolds, relative to its creation. */
export interface OperationTimeline {
  /** How long it runs before it finishes (after it stops waiting). */
  delayMs: number;
  /** How long it waits `pending` first (default 0: it runs at once). */
  pendingMs?: number;
  /**
   * Its steps, each `afterMs` after it starts running and applying its change then; the first (at 0) is the step it
   * runs in from its start, and changes nothing. Absent: one step.
   */
  steps?: { name: string; afterMs: number; apply?: (at: number) => void }[];
  /** Set: it ends `failed` with this error. */
  failWith?: string;
  /** Applied when it finishes (succeeded or failed), with its finish time. */
  onFinish?: (at: number) => void;
}

/** What the new operation names besides its kind. */
interface OperationSubject {
  loadBalancerId?: string;
  edgeId?: string;
  serverId?: string;
}

/** A new operation `id` (`seq`) of `kind`, created at `now` (clock milliseconds), as `timeline` says it unfolds. */
export function newOperation(
  identity: { id: string; seq: number; kind: string },
  subject: OperationSubject,
  timeline: OperationTimeline,
  now: number,
): OperationState {
  const at = (ms: number) => new Date(now + ms).toISOString();
  const pendingMs = timeline.pendingMs ?? 0;
  const pending = pendingMs > 0;
  return {
    ...identity,
    status: pending ? "pending" : "running",
    load_balancer_id: subject.loadBalancerId ?? null,
    edge_id: subject.edgeId ?? null,
    server_id: subject.serverId ?? null,
    error: "",
    created_at: at(0),
    started_at: pending ? null : at(0),
    finished_at: null,
    deadline_at: at(30 * 60_000),
    events: [{
      at: at(0),
      kind: pending ? "queued" : "started",
      message: `${identity.kind} ${pending ? "queued" : "started"}`,
      data: {},
    }],
    startAt: now + pendingMs,
    finishAt: now + pendingMs + timeline.delayMs,
    steps: timeline.steps?.map((step, index) => ({
      name: step.name,
      at: now + pendingMs + step.afterMs,
      apply: index > 0 ? step.apply : undefined,
    })),
    stepIndex: 0,
    failWith: timeline.failWith,
    onFinish: timeline.onFinish,
  };
}

/** True while `op` is pending or running. */
export function isActive(op: OperationState): boolean {
  return op.status === "pending" || op.status === "running";
}

/** Applies, in clock order, every start, step and finish of `operations` whose time is at or before `now`. */
export function advanceOperations(operations: Iterable<OperationState>, now: number): void {
  const due: { at: number; order: number; apply: () => void }[] = [];
  for (const op of operations) {
    if (!isActive(op)) continue;
    if (op.status === "pending" && op.startAt <= now) due.push({ at: op.startAt, order: 0, apply: () => start(op) });
    op.steps?.forEach((step, index) => {
      if (index > op.stepIndex && step.at <= now) {
        due.push({
          at: step.at,
          order: 1,
          apply: () => enterStep(op, index),
        });
      }
    });
    if (op.finishAt <= now) due.push({ at: op.finishAt, order: 2, apply: () => finish(op) });
  }
  due.sort((a, b) => a.at - b.at || a.order - b.order);
  for (const { apply } of due) apply();
}

function start(op: OperationState): void {
  op.status = "running";
  op.started_at = new Date(op.startAt).toISOString();
  op.events.push({ at: op.started_at, kind: "started", message: `${op.kind} started`, data: {} });
}

function enterStep(op: OperationState, index: number): void {
  const step = op.steps![index];
  op.stepIndex = index;
  op.events.push({ at: new Date(step.at).toISOString(), kind: "step", message: step.name, data: { step: step.name } });
  step.apply?.(step.at);
}

function finish(op: OperationState): void {
  op.status = op.failWith === undefined ? "succeeded" : "failed";
  op.error = op.failWith ?? "";
  op.finished_at = new Date(op.finishAt).toISOString();
  op.events.push({ at: op.finished_at, kind: "finished", message: `${op.kind} ${op.status}`, data: {} });
  op.onFinish?.(op.finishAt);
}
