/**
 * The slim store of one kind of object and its views, in one module (as kube-rs keeps `Writer` and `Store` together):
 * {@linkcode Store} is the writer — only the informer that owns it sets and deletes objects — and what a controller
 * is handed is a read-only view ({@linkcode StoreReader}, {@linkcode WatchedStore}, {@linkcode SyncedStore}) whose
 * methods read and nothing else, so no controller can make its cache disagree with the API server. Tests hand
 * controllers a plain object of a view's shape.
 *
 * @module
 */

/** A change of one object in the store. */
export type StoreChange<S> =
  | { type: "added"; key: string; object: S }
  | { type: "updated"; key: string; object: S; old: S }
  | { type: "deleted"; key: string; old: S };

/** Reads a store: by key, every object and the count. */
export interface StoreReader<S> {
  /** The object with `key` (see `objectKey`). */
  get(key: string): S | undefined;
  /** Every object, in no particular order. */
  list(): S[];
  /** Number of objects. */
  readonly size: number;
  /**
   * A number that changes with every change of the store (an object set, replaced or deleted): what a reader derived
   * from the store holds while it has not changed.
   */
  readonly version: number;
}

/** A store reader that also finds objects by a secondary index (declared with {@linkcode Store.addIndex}). */
interface IndexedStoreReader<S> extends StoreReader<S> {
  /** The objects whose index `name` has `value`. */
  byIndex(name: string, value: string): S[];
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

/** A synced store whose reader also finds objects by the indexes its informer declared. */
export interface IndexedSyncedStore<S> extends SyncedStore<S> {
  /** The objects as the informer last saw them, with their indexes. */
  readonly store: IndexedStoreReader<S>;
}

/** A secondary index: its name and the index values of an object. */
export interface StoreIndex<S> {
  /** What {@linkcode IndexedStoreReader.byIndex} is asked by. */
  name: string;
  /** The index values of `object` (none: it is not in the index). */
  valuesOf(object: S): string[];
}

/** Objects by key, with secondary indexes: the writer, owned by one informer. */
export class Store<S> {
  readonly #items = new Map<string, S>();
  readonly #indexers = new Map<string, (object: S) => string[]>();
  readonly #indexes = new Map<string, Map<string, Set<string>>>();
  #version = 0;

  /** Adds an index; the objects already in the store are indexed at once. */
  addIndex(index: StoreIndex<S>): void {
    this.#indexers.set(index.name, index.valuesOf);
    this.#indexes.set(index.name, new Map());
    for (const [key, object] of this.#items) this.#indexAdd(index.name, key, object);
  }

  #indexAdd(name: string, key: string, object: S): void {
    const index = this.#indexes.get(name)!;
    for (const value of this.#indexers.get(name)!(object)) {
      let keys = index.get(value);
      if (!keys) index.set(value, keys = new Set());
      keys.add(key);
    }
  }

  #indexRemove(key: string, object: S): void {
    for (const [name, valuesOf] of this.#indexers) {
      const index = this.#indexes.get(name)!;
      for (const value of valuesOf(object)) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(value);
      }
    }
  }

  /** The object with `key`. */
  get(key: string): S | undefined {
    return this.#items.get(key);
  }

  /** Every key. */
  keys(): string[] {
    return [...this.#items.keys()];
  }

  /** Number of objects. */
  get size(): number {
    return this.#items.size;
  }

  /** Changes with every set and delete (see {@linkcode StoreReader.version}). */
  get version(): number {
    return this.#version;
  }

  /** Objects whose index `name` has `value`. */
  byIndex(name: string, value: string): S[] {
    const keys = this.#indexes.get(name)?.get(value);
    return keys ? [...keys].map((k) => this.#items.get(k)!).filter(Boolean) : [];
  }

  /** Puts an object; returns the previous one. */
  set(key: string, object: S): S | undefined {
    const old = this.#items.get(key);
    if (old) this.#indexRemove(key, old);
    this.#items.set(key, object);
    this.#version++;
    for (const name of this.#indexers.keys()) this.#indexAdd(name, key, object);
    return old;
  }

  /** Removes an object; returns it. */
  delete(key: string): S | undefined {
    const old = this.#items.get(key);
    if (old) {
      this.#indexRemove(key, old);
      this.#items.delete(key);
      this.#version++;
    }
    return old;
  }

  /** Every object. */
  list(): S[] {
    return [...this.#items.values()];
  }

  /** A view that reads this store and cannot write it (what controllers are handed). */
  reader(): IndexedStoreReader<S> {
    // Through the store itself, never a captured map: the store alone holds its objects.
    const size = () => this.size;
    const version = () => this.version;
    return Object.freeze({
      get: (key: string) => this.get(key),
      list: () => this.list(),
      byIndex: (name: string, value: string) => this.byIndex(name, value),
      get size() {
        return size();
      },
      get version() {
        return version();
      },
    });
  }
}
