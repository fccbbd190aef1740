/**
 * The events of a Kubernetes watch, read from the answer's text stream one JSON document per line as they arrive
 * (the answer is never buffered whole). An ERROR event ends the watch with a {@linkcode KubeApiError} of the kind its
 * code means (410: `gone`, so the caller lists again).
 *
 * @module
 */
import { causeChain } from "../error_text.ts";
import { KubeApiError, kubeErrorKind } from "./errors.ts";

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
  reader: ReadableStreamDefaultReader<string>,
  options: { path: string; signal?: AbortSignal },
): AsyncGenerator<WatchEvent<T>> {
  const { path, signal } = options;
  let buffer = "";
  while (true) {
    let chunk: ReadableStreamReadResult<string>;
    try {
      chunk = await reader.read();
    } catch (cause) {
      if (signal?.aborted) return;
      throw new KubeApiError("network", `WATCH ${path}: stream broke: ${causeChain(cause)}`);
    }
    if (chunk.done) return;
    buffer += chunk.value;
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (!line) continue;
      const event = JSON.parse(line) as WatchEvent<T>;
      if (event.type === "ERROR") {
        const status = event.object as { code?: number; reason?: string; message?: string };
        throw new KubeApiError(
          kubeErrorKind(status.code ?? 500),
          `WATCH ${path}: ${status.message ?? "error event"}`,
          { status: status.code, reason: status.reason },
        );
      }
      yield event;
      if (signal?.aborted) return;
    }
  }
}
