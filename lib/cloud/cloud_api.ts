/**
 * What every resource module of the Ankra Cloud client calls the API through: one {@linkcode CloudApi} over the shared
 * {@linkcode CloudTransport}, with single calls and whole lists read across all pages. List items are decoded one by
 * one: an item of the wrong shape is left out and reported (a warning naming it, a metric, and the `skipped` part of
 * the answer), so it costs that item only.
 *
 * @module
 */
import * as v from "valibot";
import * as log from "../log.ts";
import type { MetricsRegistry } from "../runtime/metrics.ts";
import { CloudApiError } from "./errors.ts";
import { LIST_ITEM_SCHEMAS, ListPageSchema } from "./schemas.ts";
import type { CallResult, CallSpec, CloudTransport } from "./transport.ts";

/** Page size used for every list (the API's maximum). */
export const PAGE_LIMIT = 100;
/** Safety stop for a list whose cursors never end. */
const MAX_PAGES = 1_000;

/** A list item left out because it did not have the expected shape. */
export interface SkippedItem {
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
export type ListOperation = keyof typeof LIST_ITEM_SCHEMAS;

/** One item of a list operation's answer. */
export type ListItem<K extends ListOperation> = v.InferOutput<(typeof LIST_ITEM_SCHEMAS)[K]>;

/** A paginated list request. */
export interface ListRequest {
  /** Path below the base URL, with path parameters already encoded. */
  path: string;
  /** Query parameters besides `limit` and `cursor`. */
  query?: [string, string][];
  /** Cancels the request. */
  signal?: AbortSignal;
  /** Budget priority. */
  priority?: "high" | "normal";
}

/** Calls to the Ankra Cloud API, shared by the resource modules. */
export interface CloudApi {
  /** One call through the transport (budget, retries, timeouts, metrics, answer validation). */
  call<S extends v.GenericSchema | undefined>(spec: CallSpec<S>): Promise<CallResult<S>>;
  /** Every item of a list across all pages; items of the wrong shape are left out and reported. */
  listAll<K extends ListOperation>(operation: K, request: ListRequest): Promise<Listed<ListItem<K>>>;
}

/** A path parameter, encoded. */
export function pathId(value: string): string {
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

  function skip(operation: string, raw: unknown, index: number, issue: v.BaseIssue<unknown>): SkippedItem {
    const rawId = (raw as { id?: unknown } | null)?.id;
    const id = typeof rawId === "string" ? rawId : undefined;
    const problem = `field ${v.getDotPath(issue) ?? "(item)"}: ${issue.message}`;
    invalidItems?.inc({ operation });
    log.warn("a list item from the Ankra Cloud API has the wrong shape; it is left out, the rest is used", {
      operation,
      item: id ?? `#${index}`,
      problem,
    });
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
      for (const raw of answer.items) {
        const parsed = v.safeParse(schema, raw);
        if (parsed.success) listed.items.push(parsed.output as ListItem<K>);
        else listed.skipped.push(skip(operation, raw, index, parsed.issues[0]));
        index++;
      }
      if (!answer.next_cursor || answer.next_cursor === cursor) return listed;
      cursor = answer.next_cursor;
    }
    throw new CloudApiError("invalid_answer", {
      operation,
      cause: `more than ${MAX_PAGES} pages: the cursor never ends`,
    });
  }

  return { call: (spec) => transport.call(spec), listAll };
}
