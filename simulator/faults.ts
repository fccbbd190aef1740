/**
 * Scripted faults per operation, for tests and demos: an error status (with `reason`, `Retry-After`), latency, a
 * hang (no answer until the client gives up), a malformed body (not JSON, or a field of the wrong type), a dropped
 * connection, or a create whose answer is not kept. Faults of one operation are consumed in order.
 *
 * @module
 */
import * as v from "valibot";

/** A fault as the control API accepts it. */
export const FaultSchema = v.strictObject({
  /** operationId the fault applies to, or `*` for every operation. */
  operation: v.string(),
  /** Answer with this status (a problem document) instead of the real answer. */
  status: v.optional(v.pipe(v.number(), v.integer(), v.minValue(400), v.maxValue(599))),
  /** `reason` of the problem document. */
  reason: v.optional(v.string()),
  /** `detail` of the problem document. */
  detail: v.optional(v.string()),
  /** `Retry-After` seconds on the error answer. */
  retry_after: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  /** Wait this long before answering. */
  latency_ms: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(600_000))),
  /** Never answer (until the simulator stops or the client disconnects). */
  hang: v.optional(v.boolean()),
  /**
   * Answer 200 with a body that is not JSON (`json`), has a field of the wrong type (`shape`), or — for a list
   * answer — has one item with a field of the wrong type (`item`: the item keeps its `id`; the rest are intact).
   */
  malformed: v.optional(v.picklist(["json", "shape", "item"])),
  /** With `malformed: "item"`: which item of the page is spoiled (default 0; past the end: the last). */
  item_index: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  /** Break the connection while sending the answer. */
  drop: v.optional(v.boolean()),
  /** For keyed creates: the create succeeds but its answer is not kept. */
  forget_answer: v.optional(v.boolean()),
  /** `before` (default): the request has no effect. `after`: the request runs, then the fault replaces the answer. */
  phase: v.optional(v.picklist(["before", "after"])),
  /** How many requests it hits (default 1; 0 = until cleared). */
  times: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 1),
});

/** A scripted fault. */
export type Fault = v.InferOutput<typeof FaultSchema>;

/** The queue of scripted faults. */
export class FaultPlan {
  #faults: { fault: Fault; left: number }[] = [];

  /** Adds a fault at the end of the queue. */
  add(fault: Fault): void {
    this.#faults.push({ fault, left: fault.times === 0 ? Infinity : fault.times });
  }

  /** Takes the next fault for `operation`, if any. */
  take(operation: string): Fault | undefined {
    const entry = this.#faults.find((f) => f.fault.operation === operation || f.fault.operation === "*");
    if (!entry) return undefined;
    entry.left--;
    if (entry.left <= 0) this.#faults = this.#faults.filter((f) => f !== entry);
    return entry.fault;
  }

  /** The faults still queued. */
  pending(): Fault[] {
    return this.#faults.map((f) => f.fault);
  }

  /** Removes every fault. */
  clear(): void {
    this.#faults = [];
  }
}
