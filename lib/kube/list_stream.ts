/**
 * Decodes a Kubernetes list answer as it streams in, read through one buffer (`textChunks`): the list's metadata
 * (which the API server writes before `items`) and then each item, handed over one at a time as soon as its closing
 * brace arrives. The page is never held as one string or one parsed tree, so a large first list costs little more
 * memory than its slim copies. Bounded whatever the server sends: an item larger than
 * {@linkcode ListStreamLimits.itemChars} (or a list header, or what follows the items, larger than that) or a page of
 * more than {@linkcode ListStreamLimits.items} items ends the read with a {@linkcode ListTooLargeError}, and the rest
 * of the body is not read.
 *
 * @module
 */
import { textChunks } from "../runtime/text_chunks.ts";

/** The metadata of a list page. */
interface ListMetadata {
  /** resourceVersion to watch from. */
  resourceVersion: string;
  /** Token of the next page. */
  continue?: string;
}

/** How much one page may hold. */
interface ListStreamLimits {
  /** Most characters of one item (and of the list's header or tail); default 8 Mi. */
  itemChars?: number;
  /** Most items of one page; default unlimited (the caller passes the `limit` it asked for). */
  items?: number;
}

/** A page beyond its {@linkcode ListStreamLimits}. */
export class ListTooLargeError extends Error {
  /** Creates the error with its message (what passed which limit). */
  constructor(message: string) {
    super(message);
    this.name = "ListTooLargeError";
  }
}

/** The default {@linkcode ListStreamLimits.itemChars}: 8 Mi characters (etcd keeps objects below 1.5 MiB). */
const ITEM_LIMIT_CHARS = 8 * 1024 * 1024;

/**
 * Reads a list body, calling `onItem` with each parsed item, and returns the list metadata.
 *
 * @throws {ListTooLargeError} when the page passes `limits` (the body is cancelled then); another error when the body
 * is not a Kubernetes list.
 */
export async function decodeListStream(
  body: ReadableStream<Uint8Array>,
  onItem: (item: unknown) => void,
  limits: ListStreamLimits = {},
): Promise<ListMetadata> {
  const itemChars = limits.itemChars ?? ITEM_LIMIT_CHARS;
  const maxItems = limits.items ?? Infinity;
  let count = 0;
  const tooLarge = (what: string) => new ListTooLargeError(`${what} is larger than ${itemChars} characters`);
  const reader = textChunks(body);
  let header = "";
  let inItems = false;
  let afterItems = "";
  let item = "";
  let depth = 0;
  let inString = false;
  let escaped = false;
  const marker = '"items":[';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      let chunk = value;
      if (!inItems) {
        header += chunk;
        const at = header.indexOf(marker);
        if (at < 0) {
          if (header.length > itemChars) throw tooLarge("the list's header");
          continue;
        }
        chunk = header.slice(at + marker.length);
        header = header.slice(0, at);
        inItems = true;
      }
      if (depth === 0 && item === "" && afterItems !== "") {
        afterItems += chunk;
        if (afterItems.length > itemChars) throw tooLarge("what follows the list's items");
        continue;
      }
      let start = 0;
      for (let i = 0; i < chunk.length; i++) {
        const c = chunk.charCodeAt(i);
        if (inString) {
          if (escaped) escaped = false;
          else if (c === 92 /* \ */) escaped = true;
          else if (c === 34 /* " */) inString = false;
          continue;
        }
        if (c === 34) {
          inString = true;
        } else if (c === 123 /* { */) {
          if (depth === 0) start = i;
          depth++;
        } else if (c === 125 /* } */) {
          depth--;
          if (depth === 0) {
            if (++count > maxItems) throw new ListTooLargeError(`a page of more than the ${maxItems} items asked for`);
            if (item.length + i + 1 - start > itemChars) throw tooLarge(`item ${count}`);
            onItem(JSON.parse(item + chunk.slice(start, i + 1)));
            item = "";
          }
        } else if (c === 93 /* ] */ && depth === 0) {
          afterItems = chunk.slice(i + 1) || " ";
          break;
        }
      }
      if (depth > 0) {
        item += chunk.slice(item === "" ? start : 0);
        if (item.length > itemChars) throw tooLarge(`item ${count + 1}`);
      }
    }
  } catch (cause) {
    await reader.cancel().catch(() => {});
    throw cause;
  } finally {
    reader.releaseLock();
  }
  if (!inItems) {
    // Not the expected shape (an empty list may omit items): parse what came.
    const whole = JSON.parse(header) as { metadata?: ListMetadata; items?: unknown[] };
    for (const each of whole.items ?? []) onItem(each);
    return { resourceVersion: whole.metadata?.resourceVersion ?? "", continue: whole.metadata?.continue || undefined };
  }
  const parsed = JSON.parse(`${header}"items":[]${afterItems.trim() || "}"}`) as { metadata?: ListMetadata };
  return {
    resourceVersion: parsed.metadata?.resourceVersion ?? "",
    continue: parsed.metadata?.continue || undefined,
  };
}
