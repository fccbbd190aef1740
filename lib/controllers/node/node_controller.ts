/**
 * The cloud-node controller, rebuilt: initialises nodes that carry the `uninitialized` taint (providerID, topology
 * labels, addresses, taint removed, event `Synced`) and keeps initialised nodes' addresses and labels current on a
 * period — all from the shared {@linkcode CloudView}, never with a request per node per check.
 *
 * With `--node-labels-from-server`, the selected labels of each node's server are copied onto it under
 * `server.ankra.cloud` (`provider/node/server_labels.ts`) in the same label write, and kept in step: after every
 * fresh server list the nodes whose copies differ from their server's labels are looked at again, so a change reaches
 * the node within one `--server-list-period`, read from the list the view makes anyway (no request of its own). A
 * server label that cannot be a Kubernetes label gets a Warning `InvalidServerLabel` on the node naming it.
 *
 * Nodes of other providers, and nodes labelled `node.ankra.cloud/managed=false` (not Ankra servers: never looked up,
 * never an event), are left alone. A node whose server cannot be found, is ambiguous, or does not hold the
 * kubelet's `--node-ip` gets one clear Warning event and waits for the user ({@linkcode WaitingForUser}): it keeps its
 * taint and is looked at again after every fresh server list (a server that appears is found within one list
 * period). This controller never deletes a node. When many nodes join at once, their servers' interfaces are read
 * side by side.
 *
 * @module
 */
import type { Server } from "../../cloud/client.ts";
import type { EventSink } from "../../kube/events.ts";
import type { NodeWriter } from "../../kube/node_writes.ts";
import type { WatchedStore } from "../../kube/store.ts";
import type { SlimNode } from "../../kube/slim.ts";
import * as log from "../../log.ts";
import { isUninitialized, nodeChangeNeedsPass, planNode, serverNotFound } from "../../provider/node/node_plan.ts";
import {
  planServerLabels,
  type ServerLabelSelector,
  type SkippedServerLabel,
  skippedServerLabelMessage,
} from "../../provider/node/server_labels.ts";
import { classifyProviderId } from "../../provider/provider_id.ts";
import { isUnmanagedNode } from "../../provider/node_management.ts";
import type { MetricsRegistry } from "../../runtime/metrics.ts";
import { whenAborted } from "../../runtime/abort.ts";
import { WaitingForUser } from "../../runtime/waiting_for_user.ts";
import { WorkQueue } from "../../runtime/work_queue.ts";
import type { CloudView } from "./cloud_view.ts";
import { nodeReference } from "./node_reference.ts";
import { JoinWindow } from "./node_join_window.ts";
import { DEFAULTS } from "../../defaults.ts";

/** What the cloud-node controller reads of the shared server view. */
type NodeServerView = Pick<
  CloudView,
  | "synced"
  | "refresh"
  | "match"
  | "checkUnknown"
  | "interfaces"
  | "region"
  | "prefetchInterfaces"
  | "onRefresh"
>;

/** Options of {@linkcode NodeController}. */
interface NodeControllerOptions {
  /** Every write to Nodes (in a dry run: described in the report). */
  writes: NodeWriter;
  /** The Nodes, read-only, and their changes. */
  nodes: WatchedStore<SlimNode>;
  /** The shared server view. */
  view: NodeServerView;
  /** Where events with source `cloud-node-controller` go. */
  events: EventSink;
  /** Address and label refresh period (`--node-status-update-frequency`, 5 min). */
  refreshPeriodMs: number;
  /** Workers (`--concurrent-node-syncs`). */
  workers: number;
  /** Retry backoff base (default `DEFAULTS.retryBaseMs`; tests shorten it). */
  retryBaseMs?: number;
  /** Where the work queue's metrics go. */
  metrics?: MetricsRegistry;
  /** `--node-labels-from-server`: server labels copied onto nodes; undefined copies (and removes) none. */
  serverLabels?: ServerLabelSelector;
}

/** The options with every default filled in: what the controller reads. */
type NodeControllerSettings = NodeControllerOptions & Required<Pick<NodeControllerOptions, "retryBaseMs">>;

/** `options` with every default filled in from {@linkcode DEFAULTS}, once. */
function nodeControllerSettings(options: NodeControllerOptions): NodeControllerSettings {
  const { retryBaseMs = DEFAULTS.retryBaseMs } = options;
  return { ...options, retryBaseMs };
}

/** The skipped server labels as one comparable text ("" for none). */
function skippedSignature(skipped: SkippedServerLabel[] | undefined): string {
  return (skipped ?? []).map((label) => `${label.key}=${label.value}`).join("\n");
}

/** The cloud-node controller. */
export class NodeController {
  /** The `--controllers` name, shown in the `starting controllers` log line. */
  readonly name = "cloud-node";
  readonly #settings: NodeControllerSettings;
  readonly #queue: WorkQueue;
  readonly #window: JoinWindow;
  /** The skipped server labels each node was last told about (its Warning events) and when, by node name. */
  readonly #skippedTold = new Map<string, { signature: string; at: number }>();

  /** Resolves the options once and creates the controller; {@linkcode NodeController.run} starts it. */
  constructor(options: NodeControllerOptions) {
    const settings = nodeControllerSettings(options);
    this.#settings = settings;
    this.#queue = new WorkQueue({
      name: "cloud-node",
      concurrency: settings.workers,
      baseDelayMs: settings.retryBaseMs,
      metrics: settings.metrics,
    });
    this.#window = new JoinWindow({
      joiningServerIds: () =>
        settings.nodes.store.list().filter((node) => isUninitialized(node) && !isUnmanagedNode(node))
          .flatMap((node) => this.#knownServerIds(node)),
      prefetch: (ids) => settings.view.prefetchInterfaces(ids),
    });
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { nodes, view, refreshPeriodMs } = this.#settings;
    signal.addEventListener("abort", () => this.#window.stop(), { once: true });
    nodes.onChange((change) => {
      if (change.type === "deleted") this.#skippedTold.delete(change.key);
      if (signal.aborted || change.type === "deleted" || isUnmanagedNode(change.object)) return;
      if (!nodeChangeNeedsPass(change)) return;
      if (isUninitialized(change.object)) this.#window.join(change.object.name);
      this.#queue.add(change.object.name);
    });
    // A node waiting for its server is looked at again as soon as a fresh list may have it.
    view.onRefresh(() => {
      if (signal.aborted) return;
      for (const node of nodes.store.list()) {
        if (isUnmanagedNode(node)) continue;
        if (!isUninitialized(node)) {
          if (this.#serverLabelsChanged(node)) this.#queue.add(node.name);
          continue;
        }
        this.#window.join(node.name);
        this.#queue.add(node.name);
      }
    });
    for (const node of nodes.store.list()) this.#queue.add(node.name);
    this.#queue.start((name) => this.reconcile(name));
    const timer = setInterval(() => {
      for (const node of nodes.store.list()) if (!isUninitialized(node)) this.#queue.add(node.name);
    }, refreshPeriodMs);
    await whenAborted(signal);
    clearInterval(timer);
    await this.#queue.shutdown();
  }

  /**
   * True when the server labels copied onto an initialised node are out of step with its server in the view (or the
   * labels it cannot copy changed since it was told): a pass brings them in step within one server list period.
   */
  #serverLabelsChanged(node: SlimNode): boolean {
    const selector = this.#settings.serverLabels;
    if (!selector) return false;
    const match = this.#settings.view.match(node);
    if (match.kind !== "matched") return false;
    const plan = planServerLabels(node.labels, match.server.labels ?? {}, selector);
    return Object.keys(plan.changes).length > 0 ||
      skippedSignature(plan.skipped) !== (this.#skippedTold.get(node.name)?.signature ?? "");
  }

  /** The server of a node as far as the view already knows it (by providerID, else by a unique hostname). */
  #knownServerIds(node: SlimNode): string[] {
    const match = this.#settings.view.match(node);
    return match.kind === "matched" ? [match.server.id] : [];
  }

  /**
   * Finds the node's server by the one matching rule ({@linkcode CloudView.match}), refreshing the view once (and
   * asking about an id it never listed) when it is missing.
   */
  async #findServer(node: SlimNode): Promise<Server> {
    const { view } = this.#settings;
    if (!view.synced && !(await view.refresh({ force: true }))) {
      throw new Error("the server list is not available yet");
    }
    let match = view.match(node);
    if (match.kind === "missing") {
      const refreshed = await view.refresh();
      if (match.serverId) await view.checkUnknown(match.serverId);
      if (refreshed || match.serverId) match = view.match(node);
    }
    if (match.kind === "matched") return match.server;
    const problem = serverNotFound(node, match);
    throw new WaitingForUser(problem.reason, problem.message);
  }

  /** Reconciles one node: finds its server, plans ({@linkcode planNode}) and writes the plan. */
  async reconcile(name: string): Promise<void> {
    const { nodes, events, writes, view } = this.#settings;
    const node = nodes.store.get(name);
    if (!node || node.deletionTimestamp || isUnmanagedNode(node)) return;
    const kind = classifyProviderId(node.providerID);
    if (kind === "foreign") return;
    if (kind === "malformed") {
      events.event(
        nodeReference(node),
        "Warning",
        "InvalidProviderID",
        `spec.providerID ${node.providerID} is not of the form ankracloud://<zone>/<server-id>`,
      );
      return;
    }
    const initialising = isUninitialized(node);
    let plan;
    let server: Server;
    try {
      server = await this.#findServer(node);
      await this.#window.ready(name);
      const [interfaces, region] = await Promise.all([view.interfaces(server.id), view.region(server.zone)]);
      plan = planNode(node, { server, interfaces, region }, { serverLabels: this.#settings.serverLabels });
    } catch (cause) {
      if (cause instanceof WaitingForUser) {
        if (initialising) {
          events.event(nodeReference(node), "Warning", cause.reason, cause.message);
          throw cause;
        }
        log.info(3, "node refresh skipped", { node: name, reason: cause.message });
        return;
      }
      throw cause;
    }
    if (plan.kind === "refused") {
      events.event(nodeReference(node), "Warning", plan.reason, plan.message);
      if (plan.waits) throw new WaitingForUser(plan.reason, plan.message);
      return;
    }
    this.#tellSkipped(node, server, plan.skippedLabels);
    let resourceVersion = node.resourceVersion;
    if (plan.addresses) {
      resourceVersion = await writes.replaceAddresses(name, plan.addresses) ?? resourceVersion;
      // A dry run sent nothing: the report already said `dry run: would …` once.
      if (!writes.dryRun) {
        log.info(2, "updated node addresses", { node: name, addresses: plan.addresses.map((a) => a.address) });
      }
    }
    if (plan.initialise) {
      if (await writes.initialise(name, plan.initialise, { ...node, resourceVersion })) {
        events.event(nodeReference(node), "Normal", "Synced", "Node synced successfully");
        if (!writes.dryRun) log.info(1, "initialised node", { node: name, server: `${server.zone}/${server.id}` });
      }
    } else if (plan.labels) {
      await writes.patchLabels(name, plan.labels);
      if (!writes.dryRun) log.info(2, "updated node labels", { node: name, labels: plan.labels });
    }
  }

  /**
   * A Warning `InvalidServerLabel` for each selected server label that cannot be copied: when they change, and again
   * once per refresh period while they stay (not on every pass: the controller's own label write wakes the node).
   */
  #tellSkipped(node: SlimNode, server: Server, skipped: SkippedServerLabel[] | undefined): void {
    const signature = skippedSignature(skipped);
    const told = this.#skippedTold.get(node.name);
    if (!signature) {
      this.#skippedTold.delete(node.name);
      return;
    }
    const now = performance.now();
    if (told?.signature === signature && now - told.at < this.#settings.refreshPeriodMs) return;
    this.#skippedTold.set(node.name, { signature, at: now });
    for (const label of skipped ?? []) {
      this.#settings.events.event(
        nodeReference(node),
        "Warning",
        "InvalidServerLabel",
        skippedServerLabelMessage(server, label),
      );
    }
  }
}
