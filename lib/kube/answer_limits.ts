/**
 * How much of a Kubernetes API answer the client reads: an answer read whole at most
 * {@linkcode ANSWER_LIMIT_BYTES}, an error answer at most {@linkcode ERROR_LIMIT_BYTES} (only its Status message is
 * used), and a watch at most `DEFAULTS.watchIdleGraceMs` longer than its own `timeoutSeconds` without a byte — the
 * server ends every watch at that timeout, so a watch silent beyond it sits on a dead connection.
 *
 * @module
 */
import { AnswerTooLargeError, MIB, readBoundedText } from "../runtime/bounded_body.ts";

/** The largest answer read whole (a page of 500 Nodes with their images is far smaller): 32 MiB. */
export const ANSWER_LIMIT_BYTES = 32 * MIB;

/** The largest error answer read: 1 MiB. */
const ERROR_LIMIT_BYTES = MIB;

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
  /** Starts the timer again: bytes of the watch's body arrived. */
  restart(): void;
  /** Stops the timer. */
  stop(): void;
}

/**
 * Aborts `controller` once the watch's body has been silent for `idleMs` (its `timeoutSeconds` plus
 * `DEFAULTS.watchIdleGraceMs`); the timer starts now and restarts whenever bytes of the body arrive.
 */
export function watchIdleTimer(idleMs: number, controller: AbortController): WatchIdleTimer {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const restart = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new Error(`the watch sent nothing for ${idleMs / 1000} s`)), idleMs);
  };
  restart();
  return { restart, stop: () => clearTimeout(timer) };
}
