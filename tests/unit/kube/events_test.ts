/**
 * Event names and the `409 AlreadyExists` retry of {@linkcode EventRecorder}, over a fake API that keeps Events by
 * name and refuses a name it already holds, as the API server does.
 */
import assert from "node:assert/strict";
import { EVENT_NAME_ATTEMPTS, EventRecorder } from "../../../lib/kube/events.ts";
import { KubeApiError } from "../../../lib/kube/errors.ts";
import { MetricsRegistry } from "../../../lib/runtime/metrics.ts";

interface StoredEvent {
  metadata: { name: string };
  reason: string;
  message: string;
}

/** Events by name; a POST of a name already held is `409 AlreadyExists`, and `takenNames` are held by another process. */
class FakeEventApi {
  readonly events = new Map<string, StoredEvent>();
  posts = 0;
  #refusals: number;

  constructor(options: { refuseFirst?: number } = {}) {
    this.#refusals = options.refuseFirst ?? 0;
  }

  send(method: string, path: string, options: { body?: unknown } = {}): Promise<void> {
    assert.equal(method, "POST", `unexpected ${method} ${path}`);
    this.posts++;
    const event = structuredClone(options.body) as StoredEvent;
    const name = event.metadata.name;
    if (this.#refusals > 0 || this.events.has(name)) {
      this.#refusals = Math.max(0, this.#refusals - 1);
      return Promise.reject(
        new KubeApiError("conflict", `POST ${path}: 409 events "${name}" already exists`, {
          status: 409,
          reason: "AlreadyExists",
        }),
      );
    }
    this.events.set(name, event);
    return Promise.resolve();
  }
}

const service = { kind: "Service", apiVersion: "v1", name: "web", namespace: "shop", uid: "uid-web" };
const frozenClock = () => 1_764_000_000_123;

Deno.test("several recorders on a clock that never advances write every event about one object under its own name", async () => {
  const api = new FakeEventApi();
  const recorders = ["service-controller", "cloud-node-controller", "ankra-cloud-ccm"].map((component) =>
    new EventRecorder(api, { component, now: frozenClock })
  );
  for (let i = 0; i < 20; i++) {
    for (const recorder of recorders) recorder.event(service, "Warning", `Reason${i}`, `message ${i}`);
  }
  await Promise.all(recorders.map((r) => r.flush()));
  assert.equal(api.events.size, 60, "every one of 3 × 20 distinct events is written");
  assert.equal(api.posts, 60, "no name was refused: the names never collide within the process");
  for (const name of api.events.keys()) assert.match(name, /^web\.[0-9a-f]+$/, "upstream's <object>.<hex> shape");
});

Deno.test("an event whose name the API server already holds is written again under a fresh name", async () => {
  const api = new FakeEventApi({ refuseFirst: 1 });
  const metrics = new MetricsRegistry();
  const recorder = new EventRecorder(api, { component: "service-controller", now: frozenClock, metrics });
  recorder.event(service, "Warning", "TooManyMembers", "256 of 300 nodes are members");
  await recorder.flush();
  assert.equal(api.posts, 2);
  assert.deepEqual([...api.events.values()].map((e) => e.reason), ["TooManyMembers"]);
  const counter = metrics.counter("events_recorded_total", "");
  assert.equal(counter.get({ type: "Warning", reason: "TooManyMembers", outcome: "created" }), 1);
});

Deno.test("an event still refused after every fresh name is counted as failed on /metrics, not silently gone", async () => {
  const api = new FakeEventApi({ refuseFirst: Number.MAX_SAFE_INTEGER });
  const metrics = new MetricsRegistry();
  const recorder = new EventRecorder(api, { component: "service-controller", now: frozenClock, metrics });
  recorder.event(service, "Warning", "TooManyMembers", "256 of 300 nodes are members");
  await recorder.flush();
  assert.equal(api.posts, EVENT_NAME_ATTEMPTS, "bounded: no endless retry");
  assert.match(
    metrics.render(),
    /events_recorded_total\{[^}]*outcome="failed"[^}]*\} 1/,
    "the loss shows on /metrics",
  );
});
