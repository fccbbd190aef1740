/**
 * The node controllers over fakes, for the fast tier: the Node store and writer are plain objects
 * (`fake_cluster.ts`), the Ankra side the shared cloud view over the in-process simulator with the real client. Short
 * periods throughout.
 *
 * @module
 */
import { CloudView } from "../../../lib/controllers/node/cloud_view.ts";
import { NodeController } from "../../../lib/controllers/node/node_controller.ts";
import { NodeLifecycleController } from "../../../lib/controllers/node/node_lifecycle_controller.ts";
import type { SlimNode } from "../../../lib/kube/slim.ts";
import type { ServerLabelSelector } from "../../../lib/provider/node/server_labels.ts";
import { MetricsRegistry } from "../../../lib/runtime/metrics.ts";
import { eventsAbout, FakeNodeWriter, FakeStore, type RecordedEvent, RecordingEvents } from "./fake_cluster.ts";
import { startTestCloud, type TestCloud, testSeed } from "../cloud/simulator.ts";

/** Node controllers running over fakes. */
export interface FakeNodeControllers extends AsyncDisposable {
  /** The simulator and its client. */
  cloud: TestCloud;
  /** The Nodes the controllers read (a test puts and changes them). */
  nodes: FakeStore<SlimNode>;
  /** Every Node write. */
  writes: FakeNodeWriter;
  /** Events of source `cloud-node-controller`. */
  nodeEvents: RecordingEvents;
  /** Events of source `cloud-node-lifecycle-controller`. */
  lifecycleEvents: RecordingEvents;
  /** The events about Node `name`, of both sources. */
  eventsOf(name: string): RecordedEvent[];
  /** The controllers' metrics (as `/metrics` shows them). */
  metrics: MetricsRegistry;
  /** The shared server view both controllers read. */
  view: CloudView;
}

/** Options of {@linkcode startFakeNodeControllers}. */
export interface FakeNodeControllersOptions {
  /** The shared server list's period (default 500 ms). */
  serverListPeriodMs?: number;
  /** The address refresh period of initialised nodes (default 1 min: only what a test does wakes a node). */
  refreshPeriodMs?: number;
  /** `--node-labels-from-server` (default: none copied). */
  serverLabels?: ServerLabelSelector;
}

/** Starts the cloud view, the node controller and the lifecycle controller over fakes; `await using` stops them. */
export async function startFakeNodeControllers(options: FakeNodeControllersOptions = {}): Promise<FakeNodeControllers> {
  const cloud = await startTestCloud(testSeed());
  const nodes = new FakeStore<SlimNode>((node) => node.name);
  const writes = new FakeNodeWriter(nodes);
  const nodeEvents = new RecordingEvents();
  const lifecycleEvents = new RecordingEvents();
  const view = new CloudView(cloud.client, {
    refreshPeriodMs: options.serverListPeriodMs ?? 500,
    minRefreshIntervalMs: 100,
    confirmAfterMs: 300,
  });
  const stop = new AbortController();
  const metrics = new MetricsRegistry();
  const runs = [
    view.run(stop.signal),
    new NodeController({
      writes,
      nodes,
      view,
      events: nodeEvents,
      refreshPeriodMs: options.refreshPeriodMs ?? 60_000,
      workers: 2,
      retryBaseMs: 100,
      serverLabels: options.serverLabels,
    }).run(stop.signal),
    new NodeLifecycleController({ writes, nodes, view, events: lifecycleEvents, periodMs: 100, workers: 2, metrics })
      .run(stop.signal),
  ];
  return {
    cloud,
    nodes,
    writes,
    nodeEvents,
    lifecycleEvents,
    metrics,
    view,
    eventsOf(name) {
      return eventsAbout(`Node ${name}`, nodeEvents, lifecycleEvents);
    },
    async [Symbol.asyncDispose]() {
      stop.abort();
      await Promise.all(runs);
      await cloud[Symbol.asyncDispose]();
    },
  };
}
