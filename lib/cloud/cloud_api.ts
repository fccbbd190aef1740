/**
 * What every resource module of the Ankra Cloud client calls the API through: one {@linkcode CloudApi} over the shared
 * {@linkcode CloudTransport}, with single calls and whole lists read across all pages. List items are decoded one by
 * one: an item of the wrong shape is left out and reported (a warning naming it — the first
 * {@linkcode SKIPPED_ITEMS_LOGGED} of a list, then one summary —, a metric, and the `skipped` part of the answer), so
 * it costs that item only. A page holding more items than asked for ({@linkcode PAGE_LIMIT}) is refused as an
 * `invalid_answer`, as is a list longer than {@linkcode MAX_PAGES} pages: memory stays bounded whatever the API sends.
 *
 * @module
 */
import * as v from "valibot";
import * as log from "../log.ts";
import type { MetricsRegistry } from "../runtime/metrics.ts";
import { CloudApiError } from "./errors.ts";
import { ANKRA_ID_WORDS, isAnkraId } from "./ids.ts";
import { LIST_ITEM_SCHEMAS, ListPageSchema } from "./schemas.ts";
import type { CallResult, CallSpec, CloudTransport } from "./transport.ts";

/** Page size used for every list (the API's maximum). */
export const PAGE_LIMIT = 100;
/** Safety stop for a list whose cursors never end (at most 100,000 items). */
const MAX_PAGES = 1_000;
/** Items of one list logged one by one when they have the wrong shape; the rest are summed up in one line. */
const SKIPPED_ITEMS_LOGGED = 10;

/** A list item left out because it did not have the expected shape. */
interface SkippedItem {
  /** Its `id`, when that much could be read. */
  id?: string;
  /** Its position in the whole list. */
  index: number;
  /** What was wrong: the field and the rule. */
  problem: string;
}

/** A complete list: the items, and those left out because of their shape. */
export interface Listed<T> {
  /** Items that decoded. */
  items: T[];
  /** Items left out. */
  skipped: SkippedItem[];
}

/** The operationId of a paginated list. */
type ListOperation = keyof typeof LIST_ITEM_SCHEMAS;

/** One item of a list operation's answer. */
type ListItem<K extends ListOperation> = v.InferOutput<(typeof LIST_ITEM_SCHEMAS)[K]>;

/** A paginated list request. */
interface ListRequest {
  /** Path below the base URL, with path parameters already encoded. */
  path: string;
  /** Query parameters besides `limit` and `cursor`. */
  query?: [string, string][];
  /** Cancels the request. */
  signal?: AbortSignal;
  /** `high` goes first and may use the budget's reserve unpaced (default `normal`). */
  priority?: "high" | "normal";
}

/** Calls to the Ankra Cloud API, shared by the resource modules. */
export interface CloudApi {
  /** One call through the transport (budget, retries, timeouts, metrics, answer validation). */
  call<S extends v.GenericSchema | undefined>(spec: CallSpec<S>): Promise<CallResult<S>>;
  /** Every item of a list across all pages; items of the wrong shape are left out and reported. */
  listAll<K extends ListOperation>(operation: K, request: ListRequest): Promise<Listed<ListItem<K>>>;
}

/**
 * A path parameter, checked and encoded: the last line of defence against an id that would name another resource.
 *
 * @throws {RangeError} when `value` is not an Ankra Cloud id or zone name (`ANKRA_ID` in `ids.ts`): `.`, `..`, empty,
 * a `/` or anything else outside the shape; nothing is sent.
 */
export function pathId(value: string): string {
  if (!isAnkraId(value)) {
    throw new RangeError(
      `path parameter "${value.slice(0, 80)}" is not an Ankra Cloud id (${ANKRA_ID_WORDS}); no request is sent: ` +
        "fix the annotation, setting or providerID it came from",
    );
  }
  return encodeURIComponent(value);
}

/** The API's `label=key=value` query parameters for a label filter. */
export function labelQuery(labels: Record<string, string> | undefined): [string, string][] {
  return Object.entries(labels ?? {}).map(([key, value]) => ["label", `${key}=${value}`]);
}

/** Whether an item carries every label of the filter (the filter is applied again here, whatever the API did). */
export function hasLabels(
  item: { labels?: Record<string, string> | null },
  labels: Record<string, string> | undefined,
): boolean {
  return Object.entries(labels ?? {}).every(([key, value]) => item.labels?.[key] === value);
}

/** The {@linkcode CloudApi} over `transport`; items left out are counted in `metrics` when given. */
export function createCloudApi(transport: CloudTransport, metrics?: MetricsRegistry): CloudApi {
  const invalidItems = metrics?.counter(
    "ankra_cloud_invalid_list_items_total",
    "List items left out because they did not have the expected shape, by operation.",
  );

  function skip(
    operation: string,
    raw: unknown,
    index: number,
    issue: v.BaseIssue<unknown>,
    skippedBefore: number,
  ): SkippedItem {
    const rawId = (raw as { id?: unknown } | null)?.id;
    const id = typeof rawId === "string" ? rawId.slice(0, 100) : undefined;
    const problem = `field ${v.getDotPath(issue) ?? "(item)"}: ${issue.message}`;
    invalidItems?.inc({ operation });
    if (skippedBefore < SKIPPED_ITEMS_LOGGED) {
      log.warn("a list item from the Ankra Cloud API has the wrong shape; it is left out, the rest is used", {
        operation,
        item: id ?? `#${index}`,
        problem,
      });
    }
    return { id, index, problem };
  }

  async function listAll<K extends ListOperation>(operation: K, request: ListRequest): Promise<Listed<ListItem<K>>> {
    const schema = LIST_ITEM_SCHEMAS[operation] as v.GenericSchema;
    const listed: Listed<ListItem<K>> = { items: [], skipped: [] };
    let index = 0;
    let cursor: string | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const pageQuery: [string, string][] = [...(request.query ?? []), ["limit", String(PAGE_LIMIT)]];
      if (cursor) pageQuery.push(["cursor", cursor]);
      const answer = await transport.call({
        operation,
        method: "GET",
        path: request.path,
        query: pageQuery,
        schema: ListPageSchema,
        signal: request.signal,
        priority: request.priority,
      });
      if (answer.items.length > PAGE_LIMIT) {
        throw new CloudApiError("invalid_answer", {
          operation,
          cause: `a page of ${answer.items.length} items, more than the ${PAGE_LIMIT} asked for`,
        });
      }
      for (const raw of answer.items) {
        const parsed = v.safeParse(schema, raw);
        if (parsed.success) listed.items.push(parsed.output as ListItem<K>);
        else listed.skipped.push(skip(operation, raw, index, parsed.issues[0], listed.skipped.length));
        index++;
      }
      if (!answer.next_cursor || answer.next_cursor === cursor) return summed(operation, listed);
      cursor = answer.next_cursor;
    }
    throw new CloudApiError("invalid_answer", {
      operation,
      cause: `more than ${MAX_PAGES} pages: the cursor never ends`,
    });
  }

  function summed<T>(operation: string, listed: Listed<T>): Listed<T> {
    const unlogged = listed.skipped.length - SKIPPED_ITEMS_LOGGED;
    if (unlogged > 0) {
      log.warn("more list items from the Ankra Cloud API have the wrong shape; they are left out too", {
        operation,
        more: unlogged,
        skipped: listed.skipped.length,
      });
    }
    return listed;
  }

  return { call: (spec) => transport.call(spec), listAll };
}
