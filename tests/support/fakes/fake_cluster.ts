/**
 * The Kubernetes side of a controller, faked by plain objects for the fast tier: stores that emit changes as an
 * informer does, writers that record every write and reflect it into the store (as the API server and the informer
 * would, at once), and event sinks that keep every event. The Ankra side is the in-process simulator and the real
 * client (`tests/support/cloud/simulator.ts`), so these tests need no API server and no process.
 *
 * @module
 */
import type { EventSink, EventType, ObjectReference } from "../../../lib/kube/events.ts";
import type { StoreChange, SyncedStore } from "../../../lib/kube/store.ts";
import type { NodeWriter } from "../../../lib/kube/node_writes.ts";
import { objectKey } from "../../../lib/kube/object_key.ts";
import type { ServiceName, ServiceWriter } from "../../../lib/kube/service_writes.ts";
import type { NodeAddress, SlimCondition, SlimNode, SlimService, Taint } from "../../../lib/kube/slim.ts";

/** A store a test fills by hand; each change reaches the handlers as an informer's would. */
export class FakeStore<S extends { resourceVersion: string }> implements SyncedStore<S> {
  readonly #items = new Map<string, S>();
  readonly #handlers: ((change: StoreChange<S>) => void)[] = [];
  readonly #keyOf: (object: S) => string;
  #version = 0;
  /** Always synced. */
  readonly hasSynced = true;
  /** Already resolved. */
  readonly synced = Promise.resolve();
  /** The read-only view the controller is handed. */
  readonly store = {
    get: (key: string) => this.#items.get(key),
    list: () => [...this.#items.values()],
    size: 0,
    version: 0,
  };

  /** An empty store keyed by `keyOf`. */
  constructor(keyOf: (object: S) => string) {
    this.#keyOf = keyOf;
    Object.defineProperty(this.store, "size", { get: () => this.#items.size });
    Object.defineProperty(this.store, "version", { get: () => this.#version });
  }

  /** Registers a handler. */
  onChange(handler: (change: StoreChange<S>) => void): void {
    this.#handlers.push(handler);
  }

  /** Adds or replaces an object (an `added` or `updated` change). */
  put(object: S): void {
    const key = this.#keyOf(object);
    const old = this.#items.get(key);
    this.#items.set(key, object);
    this.#version++;
    const change: StoreChange<S> = old ? { type: "updated", key, object, old } : { type: "added", key, object };
    for (const handler of this.#handlers) handler(change);
  }

  /**
   * Changes an object through `edit` of a copy with the next `resourceVersion`, as the API server writes a change (an
   * `updated` change); nothing when it is absent.
   */
  update(key: string, edit: (copy: S) => void): void {
    const old = this.#items.get(key);
    if (!old) return;
    const copy = structuredClone(old);
    edit(copy);
    copy.resourceVersion = String(Number(old.resourceVersion) + 1);
    this.put(copy);
  }

  /** Removes an object (a `deleted` change). */
  remove(key: string): void {
    const old = this.#items.get(key);
    if (!old) return;
    this.#items.delete(key);
    this.#version++;
    for (const handler of this.#handlers) handler({ type: "deleted", key, old });
  }
}

/** An event as a sink received it. */
export interface RecordedEvent {
  /** `Kind namespace/name`. */
  object: string;
  type: EventType;
  reason: string;
  message: string;
}

/** An event sink that keeps every event. */
export class RecordingEvents implements EventSink {
  /** Every event, in order. */
  readonly events: RecordedEvent[] = [];

  /** Keeps the event. */
  event(object: ObjectReference, type: EventType, reason: string, message: string): void {
    this.events.push({ object: `${object.kind} ${objectKey(object)}`, type, reason, message });
  }

  /** The reasons recorded, in order. */
  reasons(): string[] {
    return this.events.map((e) => e.reason);
  }
}

/** The events about `object` (`Kind namespace/name`, or `Kind name`) that any of `sinks` recorded, sink by sink. */
export function eventsAbout(object: string, ...sinks: RecordingEvents[]): RecordedEvent[] {
  return sinks.flatMap((sink) => sink.events.filter((e) => e.object === object));
}

/** A write as a fake writer received it. */
export interface RecordedWrite {
  /** `setFinalizer`, `writeIngress`, … */
  kind: string;
  /** The object's key. */
  object: string;
  /** What was written. */
  value: unknown;
  /** When (`Date.now()`, the simulator's clock), to order writes against Ankra requests. */
  at: number;
}

/** A {@linkcode ServiceWriter} that records each write and applies it to `services` (as the API server would). */
export class FakeServiceWriter implements ServiceWriter {
  /** Every write, in order. */
  readonly writes: RecordedWrite[] = [];
  readonly dryRun = false;
  readonly #services: FakeStore<SlimService>;

  /** A writer over `services`. */
  constructor(services: FakeStore<SlimService>) {
    this.#services = services;
  }

  #apply(kind: string, service: ServiceName, value: unknown, edit: (s: SlimService) => void): void {
    this.writes.push({ kind, object: objectKey(service), value, at: Date.now() });
    this.#services.update(objectKey(service), edit);
  }

  /** Writes of `kind`, in order. */
  of(kind: string): RecordedWrite[] {
    return this.writes.filter((w) => w.kind === kind);
  }

  setFinalizer(service: ServiceName, finalizer: string, present: boolean): Promise<boolean> {
    const current = this.#services.store.get(objectKey(service));
    if (!current || current.finalizers.includes(finalizer) === present) return Promise.resolve(false);
    this.#apply("setFinalizer", service, { finalizer, present }, (s) => {
      s.finalizers = present ? [...s.finalizers, finalizer] : s.finalizers.filter((f) => f !== finalizer);
    });
    // A Service being deleted is gone once its last finalizer goes.
    const after = this.#services.store.get(objectKey(service));
    if (after?.deletionTimestamp && after.finalizers.length === 0) this.#services.remove(objectKey(service));
    return Promise.resolve(true);
  }

  writeIngress(service: ServiceName, ingress: { ip: string; ipMode?: string }[] | null): Promise<void> {
    this.#apply("writeIngress", service, ingress, (s) => (s.ingress = ingress ?? []));
    return Promise.resolve();
  }

  writeCondition(service: ServiceName, condition: SlimCondition | null): Promise<void> {
    this.#apply("writeCondition", service, condition, (s) => (s.readyCondition = condition ?? undefined));
    return Promise.resolve();
  }

  recordEdge(service: ServiceName, edgeId: string | null): Promise<void> {
    this.#apply("recordEdge", service, edgeId, (s) => {
      if (edgeId) s.annotations = { ...s.annotations, "ccm.ankra.cloud/edge": edgeId };
      else delete s.annotations["ccm.ankra.cloud/edge"];
    });
    return Promise.resolve();
  }

  recordShare(service: ServiceName, shareKey: string | null): Promise<void> {
    this.#apply("recordShare", service, shareKey, (s) => {
      if (shareKey) s.annotations = { ...s.annotations, "ccm.ankra.cloud/share": shareKey };
      else delete s.annotations["ccm.ankra.cloud/share"];
    });
    return Promise.resolve();
  }
}

/** A {@linkcode NodeWriter} that records each write and applies it to `nodes` (as the API server would). */
export class FakeNodeWriter implements NodeWriter {
  /** Every write, in order. */
  readonly writes: RecordedWrite[] = [];
  readonly dryRun = false;
  readonly #nodes: FakeStore<SlimNode>;

  /** A writer over `nodes`. */
  constructor(nodes: FakeStore<SlimNode>) {
    this.#nodes = nodes;
  }

  #apply(kind: string, name: string, value: unknown, edit: (n: SlimNode) => void): boolean {
    if (!this.#nodes.store.get(name)) return false;
    this.writes.push({ kind, object: name, value, at: Date.now() });
    this.#nodes.update(name, edit);
    return true;
  }

  /** Writes of `kind`, in order. */
  of(kind: string): RecordedWrite[] {
    return this.writes.filter((w) => w.kind === kind);
  }

  initialise(
    name: string,
    init: { providerID: string; labels: Record<string, string | null>; taintKey: string },
  ): Promise<boolean> {
    return Promise.resolve(this.#apply("initialise", name, init, (n) => {
      n.providerID ??= init.providerID;
      n.labels = mergeLabels(n.labels, init.labels);
      n.taints = n.taints.filter((t) => t.key !== init.taintKey);
    }));
  }

  setTaint(name: string, taint: Taint, present: boolean): Promise<boolean> {
    const node = this.#nodes.store.get(name);
    if (!node || node.taints.some((t) => t.key === taint.key) === present) return Promise.resolve(false);
    return Promise.resolve(this.#apply("setTaint", name, { taint: taint.key, present }, (n) => {
      n.taints = present ? [...n.taints, taint] : n.taints.filter((t) => t.key !== taint.key);
    }));
  }

  patchLabels(name: string, labels: Record<string, string | null>): Promise<void> {
    this.#apply("patchLabels", name, labels, (n) => (n.labels = mergeLabels(n.labels, labels)));
    return Promise.resolve();
  }

  replaceAddresses(name: string, addresses: NodeAddress[]): Promise<string | undefined> {
    this.#apply("replaceAddresses", name, addresses, (n) => (n.addresses = addresses));
    return Promise.resolve(this.#nodes.store.get(name)?.resourceVersion);
  }

  delete(node: { name: string; uid: string }): Promise<boolean> {
    if (this.#nodes.store.get(node.name)?.uid !== node.uid) return Promise.resolve(false);
    this.writes.push({ kind: "delete", object: node.name, value: node.uid, at: Date.now() });
    this.#nodes.remove(node.name);
    return Promise.resolve(true);
  }
}

/** `labels` with `patch` merged in as a merge patch does it: a `null` value removes the label. */
function mergeLabels(labels: Record<string, string>, patch: Record<string, string | null>): Record<string, string> {
  const merged = { ...labels };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** A slim Node as the informer keeps it: initialised (providerID, no taint) unless `extra` says otherwise. */
export function fakeNode(name: string, extra: Partial<SlimNode> = {}): SlimNode {
  return {
    name,
    uid: `uid-${name}`,
    resourceVersion: "1",
    labels: { "topology.kubernetes.io/zone": "de-fsn1" },
    taints: [],
    addresses: [{ type: "Hostname", address: name }],
    ready: "True",
    ...extra,
  };
}
