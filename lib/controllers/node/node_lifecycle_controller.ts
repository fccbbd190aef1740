/**
 * The cloud-node-lifecycle controller, rebuilt: every `--node-monitor-period` it looks at the cached nodes. Ready
 * nodes cost nothing (their shutdown taint goes, if they had one). For a node that is not Ready, it asks the shared
 * {@linkcode CloudView} about the node's server: `stopping`/`stopped` → shutdown taint; `deleting`, or gone with
 * proof (absent from two complete lists some time apart, or a 404) → event `DeletingNode` and the Node is deleted.
 * The moment a node stops being Ready, its server is read again (one `get_server`, or one list for many nodes at
 * once), so a shut-down server's node is tainted within seconds; nodes that stay NotReady cost nothing more than the
 * shared list.
 *
 * A pass acts on up to `--concurrent-node-lifecycle-syncs` nodes side by side and is measured as upstream's is:
 * `cloud_node_lifecycle_controller_monitor_nodes_duration_seconds` (one observation per pass) and
 * `cloud_node_lifecycle_controller_cloud_provider_calls_total{operation,result}` (the questions about NotReady nodes'
 * servers, {@linkcode answeredCalls}: most answered from the shared list, a few by a look-up).
 *
 * A planned change its server's active operation announces (with the shared list: no call of its own) is told once
 * per operation, as soon as the list that shows it arrives, as a Normal event on the Node: `ServerStopPlanned`, `ServerDeletePlanned` (the server is about to go
 * down) or `ServerMigrating` (a live migration; it stays up). Nothing else follows from it here: taints and deletion
 * follow the server's state, as above.
 *
 * Left alone entirely (never looked up, tainted or deleted): nodes labelled `node.ankra.cloud/managed=false`.
 * Never deleted: nodes whose providerID belongs to another provider (left alone entirely), nodes without a
 * providerID (never linked to a server, so nothing proves their server is gone), and any node while the cloud view
 * is unavailable — errors, timeouts, 401/403 and rate limits prove nothing.
 *
 * @module
 */
import type { EventSink } from "../../kube/events.ts";
import type { NodeWriter } from "../../kube/node_writes.ts";
import type { WatchedStore } from "../../kube/store.ts";
import type { SlimNode } from "../../kube/slim.ts";
import * as log from "../../log.ts";
import { shutdownTaint } from "../../provider/node/node_plan.ts";
import { answeredCalls, type CloudProviderCall, lifecycleAction } from "../../provider/node/node_lifecycle.ts";
import { plannedChangeEvent } from "../../provider/node/planned_change.ts";
import { isUnmanagedNode } from "../../provider/node_management.ts";
import { parseProviderId } from "../../provider/provider_id.ts";
import { abortableSleep } from "../../runtime/abort.ts";
import type { Counter, Histogram, MetricsRegistry } from "../../runtime/metrics.ts";
import { forEachParallel } from "../../runtime/parallel.ts";
import type { CloudView } from "./cloud_view.ts";
import { nodeReference as reference } from "./node_reference.ts";
import { DEFAULTS } from "../../defaults.ts";

/** What the lifecycle controller reads of the shared server view. */
type LifecycleServerView = Pick<
  CloudView,
  "synced" | "server" | "isGone" | "checkUnknown" | "refreshServers" | "plannedChange" | "onRefresh"
>;

/** Options of {@linkcode NodeLifecycleController}. */
interface NodeLifecycleOptions {
  /** Every write to Nodes (in a dry run: described in the report). */
  writes: NodeWriter;
  /** The Nodes, read-only, and their changes. */
  nodes: WatchedStore<SlimNode>;
  /** The shared server view. */
  view: LifecycleServerView;
  /** Where events with source `cloud-node-lifecycle-controller` go. */
  events: EventSink;
  /** `--node-monitor-period` (5 s). */
  periodMs: number;
  /** `--concurrent-node-lifecycle-syncs`: nodes acted on side by side in one pass (default 1). */
  workers?: number;
  /** Where upstream's two lifecycle metrics are registered. */
  metrics?: MetricsRegistry;
}

/** Upstream's buckets: `ExponentialBuckets(0.001, 2, 15)`, 1 ms to about 16 s. */
const MONITOR_BUCKETS = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);

/** The options with every default filled in: what the controller reads. */
type NodeLifecycleSettings = NodeLifecycleOptions & Required<Pick<NodeLifecycleOptions, "workers">>;

/** `options` with every default filled in (one node at a time), once. */
function nodeLifecycleSettings(options: NodeLifecycleOptions): NodeLifecycleSettings {
  const { workers = 1 } = options;
  return { ...options, workers };
}

/** The cloud-node-lifecycle controller. */
export class NodeLifecycleController {
  /** The `--controllers` name, shown in the `starting controllers` log line. */
  readonly name = "cloud-node-lifecycle";
  readonly #settings: NodeLifecycleSettings;
  readonly #passDuration?: Histogram;
  readonly #calls?: Counter;
  /** The operation whose planned change each node (by name) was last told about. */
  #told = new Map<string, string>();

  /** Resolves the options once and creates the controller; {@linkcode NodeLifecycleController.run} starts it. */
  constructor(options: NodeLifecycleOptions) {
    const settings = nodeLifecycleSettings(options);
    this.#settings = settings;
    this.#passDuration = settings.metrics?.histogram(
      "cloud_node_lifecycle_controller_monitor_nodes_duration_seconds",
      "A metric measuring the duration in seconds of a single MonitorNodes loop execution.",
      MONITOR_BUCKETS,
    );
    this.#calls = settings.metrics?.counter(
      "cloud_node_lifecycle_controller_cloud_provider_calls_total",
      "The total number of cloud provider API calls, labeled by operation and result.",
    );
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { nodes, view } = this.#settings;
    const turnedNotReady = new Set<string>();
    let checking: ReturnType<typeof setTimeout> | undefined;
    nodes.onChange((change) => {
      if (signal.aborted || change.type !== "updated") return;
      if (change.old.ready !== "True" || change.object.ready === "True" || isUnmanagedNode(change.object)) return;
      const id = parseProviderId(change.object.providerID ?? "")?.serverId;
      if (!id) return;
      turnedNotReady.add(id);
      // Gather the nodes that go NotReady together (a zone outage) into one read.
      checking ??= setTimeout(() => {
        checking = undefined;
        const ids = [...turnedNotReady];
        turnedNotReady.clear();
        view.refreshServers(ids).then(() => this.monitor()).catch((cause) =>
          log.warn("checking nodes that went NotReady failed", { error: cause })
        );
      }, DEFAULTS.notReadyBatchMs);
    });
    signal.addEventListener("abort", () => clearTimeout(checking), { once: true });
    // A planned change is told as soon as the list that shows it arrives, not at the next pass.
    view.onRefresh(() => {
      if (!signal.aborted) this.#tellPlannedChanges(nodes.store.list());
    });
    while (!signal.aborted) {
      await this.monitor().catch((cause) => log.warn("node lifecycle pass failed", { error: cause }));
      await abortableSleep(this.#settings.periodMs, signal).catch(() => {});
    }
  }

  /**
   * One pass over every cached node, up to `workers` of them acted on side by side. A node with nothing to do and no
   * call to count (a Ready node: nearly all of them) is passed over at once, without a promise of its own: five
   * thousand nodes every five seconds are otherwise five thousand little async calls each time.
   */
  async monitor(): Promise<void> {
    const started = performance.now();
    const { view } = this.#settings;
    const nodes = this.#settings.nodes.store.list();
    this.#tellPlannedChanges(nodes);
    const acted: SlimNode[] = [];
    for (const node of nodes) {
      if (lifecycleAction(node, view) !== "none" || answeredCalls(node, view).length > 0) acted.push(node);
    }
    await forEachParallel(acted, this.#settings.workers, (node) => this.#check(node));
    this.#passDuration?.observe((performance.now() - started) / 1000);
  }

  /**
   * A Normal event on each managed node whose server's active operation announces a planned change (stop, delete, live
   * migration), once per operation: a node is told again only about another operation.
   */
  #tellPlannedChanges(nodes: SlimNode[]): void {
    const { view, events } = this.#settings;
    if (!view.synced) return;
    const told = new Map<string, string>();
    for (const node of nodes) {
      if (isUnmanagedNode(node) || node.deletionTimestamp) continue;
      const change = view.plannedChange(node);
      if (!change) continue;
      told.set(node.name, change.operationId);
      if (this.#told.get(node.name) === change.operationId) continue;
      const { reason, message } = plannedChangeEvent(change);
      events.event(reference(node), "Normal", reason, message);
      log.info(1, "server of node has a planned change", {
        node: node.name,
        server: change.serverId,
        operation: change.operationId,
        kind: change.operationKind,
      });
    }
    // Nodes gone, and operations finished, are forgotten.
    this.#told = told;
  }

  async #check(node: SlimNode): Promise<void> {
    const { view } = this.#settings;
    const action = lifecycleAction(node, view);
    this.#count(answeredCalls(node, view));
    try {
      switch (action) {
        case "none":
          break;
        case "check-unknown": {
          if (await view.checkUnknown(parseProviderId(node.providerID!)!.serverId)) {
            const calls = answeredCalls(node, view);
            this.#count(calls.length > 0 ? calls : [{ operation: "instance_exists", result: "error" }]);
          }
          if (lifecycleAction(node, view) === "delete") await this.#delete(node);
          break;
        }
        case "delete":
          await this.#delete(node);
          break;
        case "add-shutdown-taint":
          await this.#setShutdownTaint(node, true);
          break;
        case "remove-shutdown-taint":
          await this.#setShutdownTaint(node, false);
          break;
      }
    } catch (cause) {
      log.warn("node lifecycle action failed", { node: node.name, action, error: cause });
    }
  }

  #count(calls: CloudProviderCall[]): void {
    for (const call of calls) this.#calls?.inc({ operation: call.operation, result: call.result });
  }

  async #setShutdownTaint(node: SlimNode, present: boolean): Promise<void> {
    const changed = await this.#settings.writes.setTaint(node.name, shutdownTaint(new Date()), present);
    // In a dry run nothing was sent: the report said `dry run: would …` once.
    if (changed && !this.#settings.writes.dryRun) {
      log.info(1, present ? "tainted shut-down node" : "removed shutdown taint", { node: node.name });
    }
  }

  async #delete(node: SlimNode): Promise<void> {
    const { writes, events } = this.#settings;
    events.event(
      reference(node),
      "Normal",
      "DeletingNode",
      `Deleting node ${node.name} because it does not exist in the cloud provider`,
    );
    try {
      if (await writes.delete(node) && !writes.dryRun) {
        log.info(0, "deleted node whose server is gone", { node: node.name, providerID: node.providerID });
      }
    } catch (cause) {
      events.event(reference(node), "Warning", "DeletingNodeFailed", `Error deleting node ${node.name}: ${cause}`);
      throw cause;
    }
  }
}
