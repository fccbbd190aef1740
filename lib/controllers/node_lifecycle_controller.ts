/**
 * The cloud-node-lifecycle controller, rebuilt: every `--node-monitor-period` it looks at the cached nodes. Ready
 * nodes cost nothing (their shutdown taint goes, if they had one). For a node that is not Ready, it asks the shared
 * {@linkcode CloudView} about the node's server: `stopping`/`stopped` → shutdown taint; `deleting`, or gone with
 * proof (absent from two complete lists some time apart, or a 404) → event `DeletingNode` and the Node is deleted.
 * The moment a node stops being Ready, its server is read again (one `get_server`, or one list for many nodes at
 * once), so a shut-down server's node is tainted within seconds; nodes that stay NotReady cost nothing more than the
 * shared list.
 *
 * Left alone entirely (never looked up, tainted or deleted): nodes labelled `node.ankra.cloud/managed=false`.
 * Never deleted: nodes whose providerID belongs to another provider (left alone entirely), nodes without a
 * providerID (never linked to a server, so nothing proves their server is gone), and any node while the cloud view
 * is unavailable — errors, timeouts, 401/403 and rate limits prove nothing.
 *
 * @module
 */
import type { V1Node } from "@kubernetes/client-node";
import type { EventRecorder, ObjectReference } from "../kube/events.ts";
import type { Informer } from "../kube/informer.ts";
import { deleteNode, setNodeTaint } from "../kube/node_writes.ts";
import type { KubeWriteTarget } from "../kube/object_writes.ts";
import type { SlimNode } from "../kube/slim.ts";
import * as log from "../log.ts";
import { hasShutdownTaint, shutdownTaint } from "../provider/node_plan.ts";
import { isUnmanagedNode } from "../provider/node_management.ts";
import { parseProviderId } from "../provider/provider_id.ts";
import { serverPresence } from "../provider/server_state.ts";
import { abortableSleep } from "../runtime/abort.ts";
import type { CloudView } from "./cloud_view.ts";

/** Options of {@linkcode NodeLifecycleController}. */
export interface NodeLifecycleOptions {
  /** Where Kubernetes writes go (in a dry run: the report). */
  writes: KubeWriteTarget;
  /** Node informer. */
  nodes: Informer<V1Node, SlimNode>;
  /** The shared cloud view. */
  view: CloudView;
  /** Events with source `cloud-node-lifecycle-controller`. */
  events: EventRecorder;
  /** `--node-monitor-period` (5 s). */
  periodMs: number;
}

function reference(node: SlimNode): ObjectReference {
  return { kind: "Node", apiVersion: "v1", name: node.name, uid: node.uid };
}

/** The decision for one node on one pass. */
export type LifecycleAction = "none" | "remove-shutdown-taint" | "add-shutdown-taint" | "delete" | "check-unknown";

/** Decides what to do with a node, from the node and what the view knows. Pure. */
export function lifecycleAction(
  node: SlimNode,
  view: Pick<CloudView, "synced" | "server" | "isGone">,
): LifecycleAction {
  if (isUnmanagedNode(node)) return "none";
  if (node.ready === "True") return hasShutdownTaint(node) ? "remove-shutdown-taint" : "none";
  if (node.deletionTimestamp || !node.providerID) return "none";
  const id = parseProviderId(node.providerID)?.serverId;
  if (!id || !view.synced) return "none";
  const server = view.server(id);
  if (!server) return view.isGone(id) ? "delete" : "check-unknown";
  const presence = serverPresence(server.state);
  if (!presence.exists) return "delete";
  if (presence.shutdown && !hasShutdownTaint(node)) return "add-shutdown-taint";
  return "none";
}

/** The cloud-node-lifecycle controller. */
export class NodeLifecycleController {
  /** Name for logs. */
  readonly name = "cloud-node-lifecycle";
  readonly #options: NodeLifecycleOptions;

  /** Creates the controller. */
  constructor(options: NodeLifecycleOptions) {
    this.#options = options;
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { nodes, view } = this.#options;
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
      }, 500);
    });
    signal.addEventListener("abort", () => clearTimeout(checking), { once: true });
    while (!signal.aborted) {
      await this.monitor().catch((cause) => log.warn("node lifecycle pass failed", { error: cause }));
      await abortableSleep(this.#options.periodMs, signal).catch(() => {});
    }
  }

  /** One pass over every cached node. */
  async monitor(): Promise<void> {
    const { nodes, view } = this.#options;
    for (const node of nodes.store.list()) {
      const action = lifecycleAction(node, view);
      try {
        switch (action) {
          case "none":
            break;
          case "check-unknown":
            await view.checkUnknown(parseProviderId(node.providerID!)!.serverId);
            if (lifecycleAction(node, view) === "delete") await this.#delete(node);
            break;
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
  }

  async #setShutdownTaint(node: SlimNode, present: boolean): Promise<void> {
    const changed = await setNodeTaint(this.#options.writes, node.name, shutdownTaint(new Date()), present);
    // In a dry run nothing was sent: the report said `dry run: would …` once.
    if (changed && !this.#options.writes.dryRun) {
      log.info(1, present ? "tainted shut-down node" : "removed shutdown taint", { node: node.name });
    }
  }

  async #delete(node: SlimNode): Promise<void> {
    const { writes, events } = this.#options;
    events.event(
      reference(node),
      "Normal",
      "DeletingNode",
      `Deleting node ${node.name} because it does not exist in the cloud provider`,
    );
    try {
      if (await deleteNode(writes, node) && !writes.dryRun) {
        log.info(0, "deleted node whose server is gone", { node: node.name, providerID: node.providerID });
      }
    } catch (cause) {
      events.event(reference(node), "Warning", "DeletingNodeFailed", `Error deleting node ${node.name}: ${cause}`);
      throw cause;
    }
  }
}
