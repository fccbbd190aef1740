/**
 * How much of a Kubernetes API answer the client reads: an answer read whole at most
 * {@linkcode ANSWER_LIMIT_BYTES}, an error answer at most {@linkcode ERROR_LIMIT_BYTES} (only its Status message is
 * used), and a watch at most {@linkcode WATCH_IDLE_GRACE_MS} longer than its own `timeoutSeconds` without a byte —
 * the server ends every watch at that timeout, so a watch silent beyond it sits on a dead connection.
 *
 * @module
 */
import { AnswerTooLargeError, MIB, readBoundedText } from "../runtime/bounded_body.ts";

/** The largest answer read whole (a page of 500 Nodes with their images is far smaller): 32 MiB. */
export const ANSWER_LIMIT_BYTES = 32 * MIB;

/** The largest error answer read: 1 MiB. */
const ERROR_LIMIT_BYTES = MIB;

/** How long past its `timeoutSeconds` a silent watch is trusted before it counts as a dead connection. */
export const WATCH_IDLE_GRACE_MS = 30_000;

/** The text of an error answer, at most {@linkcode ERROR_LIMIT_BYTES} (a larger one is named, not read). */
export async function errorText(response: Response): Promise<string> {
  try {
    return await readBoundedText(response, ERROR_LIMIT_BYTES);
  } catch (cause) {
    if (cause instanceof AnswerTooLargeError) return "(an error answer too large to read)";
    throw cause;
  }
}

/** A watch's dead-connection timer: {@linkcode watchIdleTimer}. */
interface WatchIdleTimer {
  /** A pass-through stream for the watch's body that restarts the timer on every chunk. */
  stream(): TransformStream<Uint8Array, Uint8Array>;
  /** Stops the timer. */
  stop(): void;
}

/**
 * Aborts `controller` once the watch's body has been silent for `idleMs` (its `timeoutSeconds` plus
 * {@linkcode WATCH_IDLE_GRACE_MS}); the timer starts now and restarts on every chunk that passes its stream.
 */
export function watchIdleTimer(idleMs: number, controller: AbortController): WatchIdleTimer {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const restart = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new Error(`the watch sent nothing for ${idleMs / 1000} s`)), idleMs);
  };
  restart();
  return {
    stream: () =>
      new TransformStream({
        transform(chunk, stream) {
          restart();
          stream.enqueue(chunk);
        },
      }),
    stop: () => clearTimeout(timer),
  };
}
