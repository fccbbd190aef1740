/**
 * `Idempotency-Key` semantics of billable creates, as the API documents them: a key is 1–255 visible ASCII characters
 * (400 otherwise, decided before the store is asked); the same key and request within 24 h replays the first answer
 * (`Idempotent-Replayed: true`); a request still running answers 409 `idempotency_key_in_progress`; a different
 * request with the key 422 `idempotency_key_reused`; a 4xx frees the key; a 5xx (or unfinished) first request holds
 * it and answers 409 `idempotency_key_outcome_unknown`; a create whose answer was not kept answers 409
 * `idempotency_key_answer_not_stored`. A refused request is never recorded: it leaves the key as it was.
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

/**
 * What to do with a keyed request: run it (and {@linkcode IdempotencyStore.finish} it), replay the first answer, or
 * refuse it with `problem` (one of the documented 409/422 refusals, or the 400 for a malformed key).
 */
export type IdempotencyDecision =
  | { kind: "run" }
  | { kind: "replay"; status: number; body: unknown }
  | { kind: "refuse"; problem: ProblemError };

/** The 400 for an `Idempotency-Key` header that is not 1–255 visible ASCII characters; undefined for a good key. */
export function idempotencyKeyProblem(key: string): ProblemError | undefined {
  return KEY.test(key) ? undefined : badRequest("header Idempotency-Key: must be 1-255 visible ASCII characters");
}

/** What identifies a request for its key: the same key with another fingerprint is a reuse (422). */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return `${method} ${path} ${JSON.stringify(body ?? null)}`;
}

/** Idempotency records per account (one account here), per operation and key. */
export class IdempotencyStore {
  #records = new Map<string, Record>();
  readonly #now: () => number;

  /** Creates an empty store using `now` as clock. */
  constructor(now: () => number) {
    this.#now = now;
  }

  /**
   * Decides for a request with a well-formed `key` (see {@linkcode idempotencyKeyProblem}) and the request's
   * `fingerprint`; marks it in progress when it is to run.
   */
  begin(operation: string, key: string, fingerprint: string): IdempotencyDecision {
    const id = `${operation}\u0000${key}`;
    const existing = this.#records.get(id);
    if (existing && this.#now() - existing.at > TTL_MS) this.#records.delete(id);
    const record = this.#records.get(id);
    if (!record) {
      this.#records.set(id, { fingerprint, state: "in_progress", at: this.#now() });
      return { kind: "run" };
    }
    if (record.fingerprint !== fingerprint) {
      return refuse(
        new ProblemError(422, "this Idempotency-Key was used with a different request", {
          reason: "idempotency_key_reused",
        }),
      );
    }
    switch (record.state) {
      case "in_progress":
        return refuse(
          new ProblemError(409, "the first request with this Idempotency-Key is still running", {
            reason: "idempotency_key_in_progress",
            retryAfterSeconds: 1,
          }),
        );
      case "unknown":
        return refuse(conflict(
          "the first request with this Idempotency-Key failed or never finished: list the resource and retry " +
            "with a new key only if it is absent",
          "idempotency_key_outcome_unknown",
        ));
      case "not_stored":
        return refuse(conflict(
          "the create succeeded but its answer was not kept: read the resource",
          "idempotency_key_answer_not_stored",
        ));
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

function refuse(problem: ProblemError): IdempotencyDecision {
  return { kind: "refuse", problem };
}
