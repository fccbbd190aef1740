/**
 * Records core/v1 Events as the framework's recorder does (reason, type, message, involved object, source
 * component), with client-go's correlation: an event identical to one recorded in the last 10 minutes updates that
 * Event's `count` and `lastTimestamp` instead of creating another, and a per-object token bucket (burst 25, one
 * more every 5 minutes) drops floods. Writing is asynchronous and never blocks a reconcile; failures are logged and
 * counted (`events_recorded_total{outcome="failed"}`), never silent.
 *
 * Event names are `<object name>.<hex>` as client-go shapes them, the hex a time in nanoseconds. JavaScript's clock
 * has milliseconds, so the last six digits are a sequence shared by every recorder of the process
 * ({@linkcode eventName}): no two events this process creates share a name, whichever recorder, object or clock. A
 * create the API server still answers `409 AlreadyExists` (another process's event) is sent again under a fresh name,
 * up to {@linkcode EVENT_NAME_ATTEMPTS} times.
 * Events have their own request rate (20 per second, burst 50) beside the client's, so a burst of events (1,000 nodes
 * joining) never slows the controllers' own writes.
 *
 * @module
 */
import * as log from "../log.ts";
import { redact } from "../log.ts";
import type { DryRunReport } from "../runtime/dry_run.ts";
import type { MetricsRegistry } from "../runtime/metrics.ts";
import { TokenBucket } from "../runtime/token_bucket.ts";
import type { KubeClient } from "./client.ts";
import { isKubeError, type KubeApiError } from "./errors.ts";
import { objectKey } from "./object_key.ts";
import { sharedString } from "../runtime/shared_string.ts";

/** The object an event is about. */
export interface ObjectReference {
  /** `Node`, `Service`. */
  kind: string;
  /** `v1`. */
  apiVersion: string;
  /** `metadata.name`; also the prefix of the Event's own name (`<name>.<hex>`). */
  name: string;
  /** Namespace; empty for cluster-scoped objects (their events go to `default`). */
  namespace?: string;
  /** `metadata.uid`: events of a deleted and recreated object are counted and aggregated apart. */
  uid: string;
}

/** Event types. */
export type EventType = "Normal" | "Warning";

/** Where a controller records its events (an {@linkcode EventRecorder}; a plain object in tests). */
export interface EventSink {
  /** Records an event about `object`; never blocks and never throws. */
  event(object: ObjectReference, type: EventType, reason: string, message: string): void;
}

/** An Event this recorder created, to be counted up while the same one recurs within the correlation window. */
interface Correlated {
  type: EventType;
  reason: string;
  message: string;
  /** The Event's name and namespace. */
  name: string;
  namespace: string;
  count: number;
  lastSeen: number;
}

/** One event waiting for its write, in the order it was recorded. */
interface Pending {
  object: ObjectReference;
  type: EventType;
  reason: string;
  message: string;
}

/** How long an identical event counts up the one recorded before: client-go's aggregation interval (600 s). */
const CORRELATION_WINDOW_MS = 10 * 60_000;
/** Events an object may have at once before the spam filter drops them: client-go's `defaultSpamBurst`. */
const SPAM_BURST = 25;
/** One more event per object every 5 minutes: client-go's `defaultSpamQPS` (1/300 per second). */
const SPAM_REFILL_MS = 5 * 60_000;
const MAX_MESSAGE = 1024;

/** How many names a new Event is tried under before it counts as failed (each `409 AlreadyExists` takes a new one). */
export const EVENT_NAME_ATTEMPTS = 5;

/** Per-millisecond slots of the name's nanosecond term. */
const SEQUENCE_SLOTS = 1_000_000;
/**
 * The process-wide sequence of event names. It starts at a random slot, so a process that restarts within the same
 * millisecond as its predecessor rarely meets its names again (and when it does, the 409 retry takes the next slot).
 */
let nameSequence = Math.floor(Math.random() * SEQUENCE_SLOTS);

/**
 * The name of a new Event about `objectName` created at `nowMs`: `<objectName>.<hex of nowMs × 10⁶ + sequence>`, the
 * sequence shared by every recorder of this process, so a million events can be named in one millisecond before a
 * name repeats.
 */
function eventName(objectName: string, nowMs: number): string {
  nameSequence = (nameSequence + 1) % SEQUENCE_SLOTS;
  return `${objectName}.${(BigInt(nowMs) * BigInt(SEQUENCE_SLOTS) + BigInt(nameSequence)).toString(16)}`;
}

/** What an {@linkcode EventRecorder} needs of the Kubernetes client (a {@linkcode KubeClient}; a fake in tests). */
type EventClient = Pick<KubeClient, "send">;

function isNameTaken(error: unknown): error is KubeApiError {
  return isKubeError(error, "conflict") && error.reason === "AlreadyExists";
}

/** Options of {@linkcode EventRecorder}. */
interface EventRecorderOptions {
  /** Source component (`ankra-cloud-ccm`, `cloud-node-controller`, …). */
  component: string;
  /** Host name for `source.host`. */
  host?: string;
  /** Clock (tests). */
  now?: () => number;
  /** Where `events_recorded_total` (by type, reason and outcome) is registered. */
  metrics?: MetricsRegistry;
  /** In a dry run: events are described there and never written. */
  dryRun?: DryRunReport;
}

/** What tells an object apart for correlation and spam buckets: its UID, or its kind, namespace and name without one. */
function objectIdentity(object: ObjectReference): string {
  return object.uid || `${object.kind}/${object.namespace ?? ""}/${object.name}`;
}

/** Records events for one source component. */
export class EventRecorder implements EventSink {
  readonly #client: EventClient;
  readonly #options: EventRecorderOptions;
  readonly #now: () => number;
  /** The Events this recorder created, by object (its {@linkcode objectIdentity}). */
  readonly #correlated = new Map<string, Correlated[]>();
  /**
   * Each object's spam bucket, as the time it is full again (one token comes back every five minutes); an object
   * whose bucket is full has no entry worth keeping.
   */
  readonly #fullAt = new Map<string, number>();
  /** Events recorded and not yet written, oldest first; {@linkcode EventRecorder.flush} waits for them. */
  readonly #pending: Pending[] = [];
  #writing?: Promise<void>;
  readonly #limiter = new TokenBucket({ requestsPerMinute: 20 * 60, burst: 50 });
  readonly #counter?: ReturnType<MetricsRegistry["counter"]>;

  /** Writes go through the recorder's own limiter (20/s, burst 50), never the client's `--kube-api-qps` bucket. */
  constructor(client: EventClient, options: EventRecorderOptions) {
    this.#client = client;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#counter = options.metrics?.counter("events_recorded_total", "Events recorded, by type, reason and outcome.");
  }

  /** Records an event (asynchronously). */
  event(object: ObjectReference, type: EventType, reason: string, message: string): void {
    const text = redact(message).slice(0, MAX_MESSAGE);
    if (this.#options.dryRun) {
      const name = objectKey(object);
      this.#options.dryRun.would({
        controller: this.#options.component,
        object: `${object.kind} ${name}`,
        action: "event",
        detail: `record ${type} event ${reason} on ${object.kind} ${name}: ${text}`,
      });
      return;
    }
    if (!this.#allow(object)) {
      this.#counter?.inc({ type, reason, outcome: "dropped" });
      return;
    }
    // Kept until written and then while correlated: one copy of words many objects are told alike.
    this.#pending.push({ object, type, reason: sharedString(reason), message: sharedString(text) });
    this.#writing ??= this.#writeAll();
  }

  /** Waits until every recorded event is written. */
  flush(): Promise<void> {
    return this.#writing ?? Promise.resolve();
  }

  /** Writes the pending events one at a time, in order, until none is left. */
  async #writeAll(): Promise<void> {
    // Writing starts after the recording caller's turn, never inside it.
    await Promise.resolve();
    for (let next = this.#pending.shift(); next; next = this.#pending.shift()) {
      const { object, type, reason, message } = next;
      try {
        await this.#write(object, type, reason, message);
      } catch (cause) {
        this.#counter?.inc({ type, reason, outcome: "failed" });
        log.warn("could not record event", { reason, object: `${object.kind}/${object.name}`, error: cause });
      }
    }
    this.#writing = undefined;
  }

  /** Takes one token of the object's spam bucket (burst 25, one back every five minutes); false when it has none. */
  #allow(object: ObjectReference): boolean {
    const key = objectIdentity(object);
    const now = this.#now();
    const fullAt = Math.max(this.#fullAt.get(key) ?? now, now);
    if (fullAt - now > (SPAM_BURST - 1) * SPAM_REFILL_MS) return false;
    this.#fullAt.set(key, fullAt + SPAM_REFILL_MS);
    if (this.#fullAt.size > 4096) this.#forgetOld(now);
    return true;
  }

  async #write(object: ObjectReference, type: EventType, reason: string, message: string): Promise<void> {
    const namespace = object.namespace || "default";
    const key = objectIdentity(object);
    const now = this.#now();
    const timestamp = new Date(now).toISOString().replace(/\.\d+Z$/, "Z");
    const created = this.#correlated.get(key);
    const previous = created?.find((c) => c.type === type && c.reason === reason && c.message === message);
    if (previous && now - previous.lastSeen < CORRELATION_WINDOW_MS) {
      try {
        await this.#client.send("PATCH", `/api/v1/namespaces/${namespace}/events/${previous.name}`, {
          limiter: this.#limiter,
          patch: "merge",
          body: { count: previous.count + 1, lastTimestamp: timestamp },
        });
        previous.count++;
        previous.lastSeen = now;
        this.#counter?.inc({ type, reason, outcome: "aggregated" });
        return;
      } catch (cause) {
        if (!isKubeError(cause, "not_found")) throw cause;
      }
    }
    const body = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { namespace },
      involvedObject: {
        kind: object.kind,
        apiVersion: object.apiVersion,
        name: object.name,
        namespace: object.namespace || undefined,
        uid: object.uid,
      },
      reason,
      message,
      type,
      source: { component: this.#options.component, host: this.#options.host },
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      count: 1,
      reportingComponent: this.#options.component,
      reportingInstance: this.#options.host ?? "",
    };
    const name = await this.#create(namespace, object.name, body);
    const entry: Correlated = { type, reason, message, name, namespace, count: 1, lastSeen: now };
    if (previous) created!.splice(created!.indexOf(previous), 1, entry);
    else if (created) created.push(entry);
    else this.#correlated.set(key, [entry]);
    this.#counter?.inc({ type, reason, outcome: "created" });
    if (this.#correlated.size > 4096) this.#forgetOld(now);
  }

  /** Forgets Events older than the correlation window, and spam buckets that are full again. */
  #forgetOld(now: number): void {
    for (const [key, entries] of this.#correlated) {
      const recent = entries.filter((e) => now - e.lastSeen <= CORRELATION_WINDOW_MS);
      if (recent.length === 0) this.#correlated.delete(key);
      else if (recent.length < entries.length) this.#correlated.set(key, recent);
    }
    for (const [key, fullAt] of this.#fullAt) if (fullAt <= now) this.#fullAt.delete(key);
  }

  /** POSTs the Event under a new name, and again under a fresh one after each `409 AlreadyExists`; gives the name. */
  async #create(namespace: string, objectName: string, event: { metadata: object }): Promise<string> {
    for (let attempt = 1;; attempt++) {
      const name = eventName(objectName, this.#now());
      const body = { ...event, metadata: { ...event.metadata, name } };
      try {
        await this.#client.send("POST", `/api/v1/namespaces/${namespace}/events`, { limiter: this.#limiter, body });
        return name;
      } catch (cause) {
        if (!isNameTaken(cause) || attempt >= EVENT_NAME_ATTEMPTS) throw cause;
      }
    }
  }
}
