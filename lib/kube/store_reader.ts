/**
 * What a controller is handed of an informer: a read-only view of its store and its change notifications. Only the
 * informer writes its store ({@linkcode Store.reader} hands out a view whose methods read and nothing else), so no
 * controller can make its cache disagree with the API server; tests hand controllers a plain object of this shape.
 *
 * @module
 */
import type { StoreChange } from "./informer.ts";

/** Reads a store: by key, every object, the count, and by a secondary index. */
export interface StoreReader<S> {
  /** The object with `key` (see `objectKey`). */
  get(key: string): S | undefined;
  /** Every object, in no particular order. */
  list(): S[];
  /** Number of objects. */
  readonly size: number;
}

/** A store reader with the store's change notifications: what controllers read the cluster through. */
export interface WatchedStore<S> {
  /** The objects as the informer last saw them. */
  readonly store: StoreReader<S>;
  /** Registers a change handler, called synchronously after each change (keep it cheap: enqueue work). */
  onChange(handler: (change: StoreChange<S>) => void): void;
}

/** A watched store that also tells whether its first list is in (what a controller acting on absence needs). */
export interface SyncedStore<S> extends WatchedStore<S> {
  /** True after the first complete list. */
  readonly hasSynced: boolean;
  /** Resolves after the first complete list. */
  readonly synced: Promise<void>;
}
