/**
 * Opaque keyset cursors and `limit` handling for the simulator's lists: `limit` 1–100 (default 50); a malformed
 * cursor or out-of-range limit is a 400, as the API documents. Also the keys that sort a list oldest or newest first.
 *
 * @module
 */
import { decodeBase64UrlText, encodeBase64Url } from "./base64url.ts";
import { badRequest } from "./problem.ts";

/** Default page size. */
export const DEFAULT_LIMIT = 50;
/** Largest page size. */
export const MAX_LIMIT = 100;

/** One page and the cursor of the next. */
export interface Page<T> {
  /** Items of this page. */
  items: T[];
  /** Cursor of the next page; null on the last. */
  next_cursor: string | null;
}

/** Parses `limit` from a query value: 1 to `max` (default {@linkcode MAX_LIMIT}; `list_operations` allows 200). */
export function parseLimit(value: string | undefined, max = MAX_LIMIT): number {
  if (value === undefined) return DEFAULT_LIMIT;
  if (!/^\d+$/.test(value)) throw badRequest(`query limit: must be an integer from 1 to ${max}`);
  const limit = Number(value);
  if (limit < 1 || limit > max) throw badRequest(`query limit: must be an integer from 1 to ${max}`);
  return limit;
}

/** The key of an item listed oldest first: its sequence number, zero-padded so keys sort in list order. */
export function oldestFirstKey(seq: number): string {
  return String(seq).padStart(13, "0");
}

/** The key of an item listed newest first: keys sort in list order (a larger `seq` gets a smaller key). */
export function newestFirstKey(seq: number): string {
  return String(1e12 - seq).padStart(13, "0");
}

/**
 * Returns the page of `items` (already in list order) after the item whose key the cursor names. `keyOf` gives
 * an item's unique key; the cursor is that key, signed with the list name so cursors of other lists are refused.
 */
export function paginate<T>(
  items: T[],
  options: { list: string; keyOf: (item: T) => string; cursor?: string; limit: number },
): Page<T> {
  let start = 0;
  if (options.cursor !== undefined) {
    const key = decodeCursor(options.list, options.cursor);
    const index = items.findIndex((item) => options.keyOf(item) === key);
    // A cursor whose item is gone continues after where it would have been: keys sort in list order.
    start = index >= 0 ? index + 1 : items.findIndex((item) => options.keyOf(item) > key);
    if (start < 0) start = items.length;
  }
  const page = items.slice(start, start + options.limit);
  const more = start + options.limit < items.length;
  return {
    items: page,
    next_cursor: more && page.length > 0 ? encodeCursor(options.list, options.keyOf(page[page.length - 1])) : null,
  };
}

function encodeCursor(list: string, key: string): string {
  return encodeBase64Url(JSON.stringify({ l: list, k: key }));
}

function decodeCursor(list: string, cursor: string): string {
  try {
    const parsed = JSON.parse(decodeBase64UrlText(cursor));
    if (parsed && parsed.l === list && typeof parsed.k === "string") return parsed.k;
  } catch { /* fall through */ }
  throw badRequest("query cursor: is not a cursor of this list; pass back next_cursor unchanged");
}
