/**
 * `Idempotency-Key` semantics of billable creates, as the API documents them: the same key and request within 24 h
 * replays the first answer (`Idempotent-Replayed: true`); a request still running answers 409
 * `idempotency_key_in_progress`; a different request with the key 422 `idempotency_key_reused`; a 4xx frees the key;
 * a 5xx (or unfinished) first request holds it and answers 409 `idempotency_key_outcome_unknown`; a create whose
 * answer was not kept answers 409 `idempotency_key_answer_not_stored`.
 *
 * @module
 */
import { badRequest, conflict, ProblemError } from "./problem.ts";

const KEY = /^[\x21-\x7e]{1,255}$/;
const TTL_MS = 24 * 3_600_000;

interface Record {
  fingerprint: string;
  state: "in_progress" | "done" | "unknown" | "not_stored";
  status?: number;
  body?: unknown;
  at: number;
}

/** What to do with a keyed request. */
export type IdempotencyDecision =
  | { kind: "run" }
  | { kind: "replay"; status: number; body: unknown };

/** Idempotency records per account (one account here), per operation and key. */
export class IdempotencyStore {
  #records = new Map<string, Record>();
  readonly #now: () => number;

  /** Creates an empty store using `now` as clock. */
  constructor(now: () => number) {
    this.#now = now;
  }

  /**
   * Decides for a request with `key` (validated here) and the request's `fingerprint`; marks it in progress when it
   * is to run.
   *
   * @throws {ProblemError} for a malformed key or one of the documented refusals.
   */
  begin(operation: string, key: string, fingerprint: string): IdempotencyDecision {
    if (!KEY.test(key)) {
      throw badRequest("header Idempotency-Key: must be 1-255 visible ASCII characters");
    }
    const id = `${operation}\u0000${key}`;
    const existing = this.#records.get(id);
    if (existing && this.#now() - existing.at > TTL_MS) this.#records.delete(id);
    const record = this.#records.get(id);
    if (!record) {
      this.#records.set(id, { fingerprint, state: "in_progress", at: this.#now() });
      return { kind: "run" };
    }
    if (record.fingerprint !== fingerprint) {
      throw new ProblemError(422, "this Idempotency-Key was used with a different request", {
        reason: "idempotency_key_reused",
      });
    }
    switch (record.state) {
      case "in_progress":
        throw new ProblemError(409, "the first request with this Idempotency-Key is still running", {
          reason: "idempotency_key_in_progress",
          retryAfterSeconds: 1,
        });
      case "unknown":
        throw conflict(
          "the first request with this Idempotency-Key failed or never finished: list the resource and retry " +
            "with a new key only if it is absent",
          "idempotency_key_outcome_unknown",
        );
      case "not_stored":
        throw conflict(
          "the create succeeded but its answer was not kept: read the resource",
          "idempotency_key_answer_not_stored",
        );
      case "done":
        return { kind: "replay", status: record.status!, body: record.body };
    }
  }

  /** Records the outcome of a request that ran: 2xx kept (or marked not stored), 4xx frees the key, 5xx holds it. */
  finish(operation: string, key: string, outcome: { status: number; body: unknown; keepAnswer?: boolean }): void {
    const id = `${operation}\u0000${key}`;
    const record = this.#records.get(id);
    if (!record) return;
    if (outcome.status >= 400 && outcome.status < 500) {
      this.#records.delete(id);
    } else if (outcome.status >= 500) {
      record.state = "unknown";
    } else if (outcome.keepAnswer === false) {
      record.state = "not_stored";
    } else {
      Object.assign(record, { state: "done", status: outcome.status, body: outcome.body });
    }
  }

  /** Forgets every record. */
  clear(): void {
    this.#records.clear();
  }
}
