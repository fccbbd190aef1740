/**
 * The cloud-node controller, rebuilt: initialises nodes that carry the `uninitialized` taint (providerID, topology
 * labels, addresses, taint removed, event `Synced`) and keeps initialised nodes' addresses and labels current on a
 * period — all from the shared {@linkcode CloudView}, never with a request per node per check.
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
import type { V1Node } from "@kubernetes/client-node";
import type { Server } from "../cloud/client.ts";
import type { EventRecorder, ObjectReference } from "../kube/events.ts";
import type { Informer } from "../kube/informer.ts";
import { initialiseNode, patchNodeLabels, replaceNodeAddresses } from "../kube/node_writes.ts";
import type { KubeWriteTarget } from "../kube/object_writes.ts";
import type { SlimNode } from "../kube/slim.ts";
import * as log from "../log.ts";
import {
  applyProvidedNodeIp,
  sameAddresses,
  serverAddresses,
  withKubeletHostname,
} from "../provider/node_addresses.ts";
import {
  hostnameCandidates,
  type InstanceMetadata,
  isUninitialized,
  labelChanges,
  UNINITIALIZED_TAINT,
} from "../provider/node_plan.ts";
import { classifyProviderId, formatProviderId, parseProviderId } from "../provider/provider_id.ts";
import { isUnmanagedNode } from "../provider/node_management.ts";
import type { MetricsRegistry } from "../runtime/metrics.ts";
import { whenAborted } from "../runtime/abort.ts";
import { WaitingForUser } from "../runtime/waiting_for_user.ts";
import { WorkQueue } from "../runtime/work_queue.ts";
import type { CloudView } from "./cloud_view.ts";
import { DEFAULTS } from "../defaults.ts";

/** Options of {@linkcode NodeController}. */
export interface NodeControllerOptions {
  /** Where Kubernetes writes go (in a dry run: the report). */
  writes: KubeWriteTarget;
  /** Node informer. */
  nodes: Informer<V1Node, SlimNode>;
  /** The shared cloud view. */
  view: CloudView;
  /** Events with source `cloud-node-controller`. */
  events: EventRecorder;
  /** Address and label refresh period (`--node-status-update-frequency`, 5 min). */
  refreshPeriodMs: number;
  /** Workers (`--concurrent-node-syncs`). */
  workers: number;
  /** Retry backoff base (default 5 s; tests shorten it). */
  retryBaseMs?: number;
  /** Metrics. */
  metrics?: MetricsRegistry;
}

function reference(node: SlimNode): ObjectReference {
  return { kind: "Node", apiVersion: "v1", name: node.name, uid: node.uid };
}

/** The cloud-node controller. */
export class NodeController {
  /** Name for logs. */
  readonly name = "cloud-node";
  readonly #options: NodeControllerOptions;
  readonly #queue: WorkQueue;
  /** Joining nodes whose servers' interfaces are about to be read together: the read each one waits for. */
  readonly #joining = new Map<string, Promise<void>>();

  /** Creates the controller. */
  constructor(options: NodeControllerOptions) {
    this.#options = options;
    this.#queue = new WorkQueue({
      name: "cloud-node",
      concurrency: options.workers,
      baseDelayMs: options.retryBaseMs ?? DEFAULTS.retryBaseMs,
      metrics: options.metrics,
    });
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { nodes, view, refreshPeriodMs } = this.#options;
    // Nodes that join together get their servers' interfaces read together, before their own passes ask for them.
    let window: { names: Set<string>; read: PromiseWithResolvers<void> } | undefined;
    let windowTimer: ReturnType<typeof setTimeout> | undefined;
    const prefetchSoon = (name: string) => {
      if (this.#joining.has(name)) return;
      if (!window) {
        const current = window = { names: new Set<string>(), read: Promise.withResolvers<void>() };
        windowTimer = setTimeout(() => {
          window = undefined;
          const ids = nodes.store.list().filter((node) => isUninitialized(node) && !isUnmanagedNode(node))
            .flatMap((node) => this.#knownServerIds(node));
          const read = ids.length > 1 ? view.prefetchInterfaces(ids) : Promise.resolve();
          read.catch(() => {}).finally(() => {
            for (const joined of current.names) this.#joining.delete(joined);
            current.read.resolve();
          });
        }, 100);
      }
      window.names.add(name);
      this.#joining.set(name, window.read.promise);
    };
    signal.addEventListener("abort", () => {
      clearTimeout(windowTimer);
      window?.read.resolve();
    }, { once: true });
    nodes.onChange((change) => {
      if (signal.aborted) return;
      if (change.type === "deleted") return;
      const node = change.object;
      if (isUnmanagedNode(node)) return;
      if (change.type === "added" || isUninitialized(node)) {
        if (isUninitialized(node)) prefetchSoon(node.name);
        return this.#queue.add(node.name);
      }
      const old = change.old;
      if (
        old.providerID !== node.providerID || JSON.stringify(old.labels) !== JSON.stringify(node.labels) ||
        JSON.stringify(old.addresses) !== JSON.stringify(node.addresses)
      ) {
        this.#queue.add(node.name);
      }
    });
    // A node waiting for its server is looked at again as soon as a fresh list may have it.
    view.onRefresh(() => {
      if (signal.aborted) return;
      for (const node of nodes.store.list()) {
        if (!isUninitialized(node) || isUnmanagedNode(node)) continue;
        prefetchSoon(node.name);
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

  /** The server of a node as far as the view already knows it (by providerID, else by a unique hostname). */
  #knownServerIds(node: SlimNode): string[] {
    const match = this.#options.view.match(node);
    return match.kind === "matched" ? [match.server.id] : [];
  }

  /** Finds the node's server in the view (refreshing it on demand once). */
  async #findServer(node: SlimNode): Promise<Server> {
    const { view } = this.#options;
    if (!view.synced && !(await view.refresh({ force: true }))) {
      throw new Error("the server list is not available yet");
    }
    const id = node.providerID ? parseProviderId(node.providerID)?.serverId : undefined;
    if (id) {
      let server = view.server(id);
      if (!server) {
        await view.refresh();
        await view.checkUnknown(id);
        server = view.server(id);
      }
      if (!server) {
        throw new WaitingForUser(
          "InstanceNotFound",
          `no Ankra Cloud server has id ${id} (from spec.providerID ${node.providerID}); check the providerID`,
        );
      }
      return server;
    }
    const candidates = hostnameCandidates(node.name);
    for (let attempt = 0; attempt < 2; attempt++) {
      const match = view.match(node);
      if (match.kind === "matched") return match.server;
      if (match.kind === "ambiguous") {
        throw new WaitingForUser(
          "AmbiguousHostname",
          `${match.servers.length} Ankra Cloud servers have hostname ${match.hostname} (${
            match.servers.map((s) => `${s.zone}/${s.id}`).join(", ")
          }); set the node's spec.providerID to ankracloud://<zone>/<server-id>`,
        );
      }
      if (attempt === 0 && !(await view.refresh())) break;
    }
    throw new WaitingForUser(
      "InstanceNotFound",
      `no Ankra Cloud server has hostname ${candidates.join(" or ")}; name the node after its server or set ` +
        "spec.providerID to ankracloud://<zone>/<server-id>",
    );
  }

  async #metadata(server: Server): Promise<InstanceMetadata> {
    const { view } = this.#options;
    const [interfaces, region] = await Promise.all([view.interfaces(server.id), view.region(server.zone)]);
    return {
      providerID: formatProviderId({ zone: server.zone, serverId: server.id }),
      instanceType: server.plan,
      zone: server.zone,
      region,
      addresses: serverAddresses(server, interfaces),
    };
  }

  /** Reconciles one node (exported for tests through the queue). */
  async reconcile(name: string): Promise<void> {
    const { nodes, events, writes } = this.#options;
    const node = nodes.store.get(name);
    if (!node || node.deletionTimestamp || isUnmanagedNode(node)) return;
    const kind = classifyProviderId(node.providerID);
    if (kind === "foreign") return;
    if (kind === "malformed") {
      events.event(
        reference(node),
        "Warning",
        "InvalidProviderID",
        `spec.providerID ${node.providerID} is not of the form ankracloud://<zone>/<server-id>`,
      );
      return;
    }
    const initialising = isUninitialized(node);
    let server: Server;
    let metadata: InstanceMetadata;
    try {
      server = await this.#findServer(node);
      await this.#joining.get(name);
      metadata = await this.#metadata(server);
    } catch (cause) {
      if (cause instanceof WaitingForUser) {
        if (initialising) {
          events.event(reference(node), "Warning", cause.reason, cause.message);
          throw cause;
        }
        log.info(3, "node refresh skipped", { node: name, reason: cause.message });
        return;
      }
      throw cause;
    }
    const addresses = withKubeletHostname(metadata.addresses, node.addresses);
    const provided = applyProvidedNodeIp(addresses, node.providedNodeIP);
    if (!provided.ok) {
      const message = `the kubelet's --node-ip (alpha.kubernetes.io/provided-node-ip ${node.providedNodeIP}) ` +
        `is not an address of server ${server.zone}/${server.id}: ${provided.missing.join(", ")} not among ` +
        `${addresses.filter((a) => a.type !== "Hostname").map((a) => a.address).join(", ")}` +
        (initialising ? "; the node stays tainted until --node-ip names one of them" : "");
      events.event(reference(node), "Warning", "NodeIPNotFound", message);
      if (initialising) throw new WaitingForUser("NodeIPNotFound", message);
      return;
    }
    let resourceVersion = node.resourceVersion;
    if (!sameAddresses(node.addresses, provided.addresses)) {
      resourceVersion = await replaceNodeAddresses(writes, name, provided.addresses) ?? resourceVersion;
      // A dry run sent nothing: the report already said `dry run: would …` once.
      if (!writes.dryRun) {
        log.info(2, "updated node addresses", { node: name, addresses: provided.addresses.map((a) => a.address) });
      }
    }
    const labels = labelChanges(node, metadata);
    if (initialising) {
      const changed = await initialiseNode(writes, name, {
        providerID: metadata.providerID,
        labels,
        taintKey: UNINITIALIZED_TAINT,
      }, { ...node, resourceVersion });
      if (changed) {
        events.event(reference(node), "Normal", "Synced", "Node synced successfully");
        if (!writes.dryRun) log.info(1, "initialised node", { node: name, server: `${server.zone}/${server.id}` });
      }
    } else if (Object.keys(labels).length > 0) {
      await patchNodeLabels(writes, name, labels);
    }
  }
}
