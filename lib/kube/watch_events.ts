/**
 * The events of a Kubernetes watch, read from the answer's text stream one JSON document per line as they arrive
 * (the answer is never buffered whole). An ERROR event ends the watch with a {@linkcode KubeApiError} of the kind its
 * code means (410: `gone`, so the caller lists again); an event longer than {@linkcode EVENT_LIMIT_CHARS} ends it as
 * an `invalid_answer` (the caller watches again), so one endless line cannot fill the memory.
 *
 * @module
 */
import { causeChain } from "../error_text.ts";
import { KubeApiError, kubeErrorKind } from "./errors.ts";

/** The status of a watch error that carries none: a server error (retried). */
const UNKNOWN_STATUS = 500;

/** The longest event line read: 8 Mi characters (etcd keeps objects below 1.5 MiB). */
const EVENT_LIMIT_CHARS = 8 * 1024 * 1024;

/** A watch event. */
export interface WatchEvent<T> {
  /** ADDED, MODIFIED, DELETED, BOOKMARK or ERROR. */
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  /** The object (a Status for ERROR). */
  object: T;
}

/**
 * Yields the events on `reader` until the stream ends or `signal` aborts (then quietly). Lines may be split across
 * chunks and chunks may hold several lines; blank lines are skipped. `path` names the watch in errors.
 *
 * @throws {KubeApiError} for an ERROR event, or a `network` one when the stream breaks without an abort.
 */
export async function* watchEvents<T>(
  reader: Pick<ReadableStreamDefaultReader<string>, "read">,
  options: { path: string; signal?: AbortSignal; limitChars?: number },
): AsyncGenerator<WatchEvent<T>> {
  const { path, signal } = options;
  const limit = options.limitChars ?? EVENT_LIMIT_CHARS;
  // The text of the event being read, as it arrived: joined once its newline is in (appending to one string and
  // searching it on every chunk would copy a long event over and over).
  let pending: string[] = [];
  let pendingLength = 0;
  while (true) {
    let chunk: ReadableStreamReadResult<string>;
    try {
      chunk = await reader.read();
    } catch (cause) {
      if (signal?.aborted) return;
      throw new KubeApiError("network", `WATCH ${path}: stream broke: ${causeChain(cause)}`);
    }
    if (chunk.done) return;
    let text = chunk.value;
    let newline: number;
    while ((newline = text.indexOf("\n")) >= 0) {
      const line = (pending.join("") + text.slice(0, newline)).trim();
      pending = [];
      pendingLength = 0;
      text = text.slice(newline + 1);
      if (!line) continue;
      const event = JSON.parse(line) as WatchEvent<T>;
      if (event.type === "ERROR") {
        const status = event.object as { code?: number; reason?: string; message?: string };
        throw new KubeApiError(
          kubeErrorKind(status.code ?? UNKNOWN_STATUS),
          `WATCH ${path}: ${status.message ?? "error event"}`,
          { status: status.code, reason: status.reason },
        );
      }
      yield event;
      if (signal?.aborted) return;
    }
    if (text) {
      pending.push(text);
      pendingLength += text.length;
    }
    if (pendingLength > limit) {
      throw new KubeApiError("invalid_answer", `WATCH ${path}: an event is larger than ${limit} characters`);
    }
  }
}
