/**
 * Reading an HTTP answer's body with a size limit, for every API answer the process reads whole: a `Content-Length`
 * above the limit is refused before a byte is read, and a body without one (or longer than it said) is read as it
 * streams in and cancelled as soon as it passes the limit. Memory therefore stays at the limit, whatever the server
 * sends; the text is decoded once the whole body is in.
 *
 * @module
 */

/** An answer body larger than the reader's limit. */
export class AnswerTooLargeError extends Error {
  /** The limit, bytes. */
  readonly limitBytes: number;
  /** The size the server announced (`Content-Length`), when it did. */
  readonly announcedBytes?: number;

  /** Creates the error; `announcedBytes` is the `Content-Length` when that is what exceeded the limit. */
  constructor(limitBytes: number, announcedBytes?: number) {
    super(
      announcedBytes !== undefined
        ? `answer too large: Content-Length ${announcedBytes} bytes is more than the limit of ${limitBytes} bytes`
        : `answer too large: more than the limit of ${limitBytes} bytes`,
    );
    this.name = "AnswerTooLargeError";
    this.limitBytes = limitBytes;
    this.announcedBytes = announcedBytes;
  }
}

/** 1 MiB, in bytes. */
export const MIB = 1024 * 1024;

/**
 * The body of `response` as text, at most `limitBytes` long.
 *
 * @throws {AnswerTooLargeError} when the body is longer (the rest is not read: the body is cancelled).
 */
export async function readBoundedText(response: Response, limitBytes: number): Promise<string> {
  const announced = response.headers.get("content-length");
  if (announced !== null && /^\d+$/.test(announced.trim()) && Number(announced) > limitBytes) {
    await response.body?.cancel().catch(() => {});
    throw new AnswerTooLargeError(limitBytes, Number(announced));
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limitBytes) {
        chunks.length = 0;
        await reader.cancel().catch(() => {});
        throw new AnswerTooLargeError(limitBytes);
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  // Decoded only once complete: a body that turns out too large never becomes a string.
  const decoder = new TextDecoder();
  const parts = chunks.map((chunk) => decoder.decode(chunk, { stream: true }));
  chunks.length = 0;
  parts.push(decoder.decode());
  return parts.join("");
}

/** Bytes of the buffer an unread answer is drained into. */
const DRAIN_BYTES = 4 * 1024;

/**
 * Reads and drops the body of an answer nobody reads (a write's echo of the object), keeping the connection usable:
 * through one small buffer of the caller's (a BYOB read), so no chunk buffer is allocated per read; a body that
 * cannot be read so is cancelled. At most `limitBytes` are read, the rest cancelled.
 */
export async function discardBody(response: Response, limitBytes: number): Promise<void> {
  if (!response.body) return;
  let reader: ReadableStreamBYOBReader;
  try {
    reader = response.body.getReader({ mode: "byob" });
  } catch {
    await response.body.cancel().catch(() => {});
    return;
  }
  try {
    let view = new Uint8Array(DRAIN_BYTES);
    for (let total = 0;;) {
      const { value, done } = await reader.read(view);
      if (done || !value) break;
      total += value.byteLength;
      if (total > limitBytes) {
        await reader.cancel().catch(() => {});
        break;
      }
      view = new Uint8Array(value.buffer);
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * True when the JSON `text` may hold more than `maxValues` values: a bound checked before parsing, since a small
 * body can parse into a large tree (8 MiB of `{},` is 2.8 million objects, about 250 MiB). Counts the commas and the
 * opening brackets, each a native scan; commas inside strings count too, so the bound errs on the safe side. A text
 * shorter than twice `maxValues` cannot exceed it and is not scanned.
 */
export function mayExceedJsonValues(text: string, maxValues: number): boolean {
  if (text.length <= 2 * maxValues) return false;
  let count = 0;
  for (const mark of [",", "{", "["]) {
    for (let at = text.indexOf(mark); at >= 0; at = text.indexOf(mark, at + 1)) {
      if (++count > maxValues) return true;
    }
  }
  return false;
}
