/**
 * Every write the node controllers make to a Node, in one place, the way the framework's helpers make them:
 * initialisation (providerID, labels, taint removed) and taint changes as merge patches carrying the resourceVersion,
 * retried on conflict; label changes as plain merge patches (a `null` value removes a label); addresses through the status subresource as a strategic
 * merge patch with `$patch: replace`, so the list is replaced, never merged by type; deletion with a UID precondition,
 * so a Node re-created under the same name is never deleted by mistake. In a dry run each write is described in the
 * report instead of being sent.
 *
 * @module
 */
import type { V1Node, V1Taint } from "@kubernetes/client-node";
import { isKubeError } from "./errors.ts";
import { describedInDryRun, type KubeWriteTarget, type ObjectChange, updateObject } from "./object_writes.ts";
import type { NodeAddress, SlimNode, Taint } from "./slim.ts";

function nodePath(name: string, subresource?: "status"): string {
  return `/api/v1/nodes/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ""}`;
}

function described(target: KubeWriteTarget, controller: string, node: string, action: string, detail: string) {
  return describedInDryRun(target, { controller, object: `node ${node}`, action, detail });
}

function updateNode(
  target: KubeWriteTarget,
  name: string,
  change: ObjectChange<V1Node>,
  known?: SlimNode,
): Promise<boolean> {
  return updateObject<V1Node>(target.kube, nodePath(name), change, known ? asNode(known) : undefined);
}

/** The parts of a Node these writes read, from the slim copy in the store (taints in full, labels, providerID). */
function asNode(node: SlimNode): V1Node {
  return {
    metadata: { name: node.name, resourceVersion: node.resourceVersion, labels: node.labels },
    spec: {
      providerID: node.providerID,
      taints: node.taints.map((t) => ({
        key: t.key,
        effect: t.effect,
        ...(t.value !== undefined ? { value: t.value } : {}),
        ...(t.timeAdded ? { timeAdded: t.timeAdded as unknown as Date } : {}),
      })),
    },
  };
}

/**
 * Initialises a Node in one update: sets `providerID` unless it has one, sets `labels`, removes the taint
 * `taintKey`. False when the Node is gone. `known` (the store's copy) saves the read before the write.
 */
async function initialiseNode(
  target: KubeWriteTarget,
  name: string,
  init: { providerID: string; labels: Record<string, string | null>; taintKey: string },
  known?: SlimNode,
): Promise<boolean> {
  const detail = `initialise node ${name}: providerID ${init.providerID}, labels ${JSON.stringify(init.labels)}, ` +
    `remove taint ${init.taintKey}`;
  if (described(target, "cloud-node", name, "initialise_node", detail)) return true;
  return await updateNode(target, name, (raw) => {
    const taints = (raw.spec?.taints ?? []).filter((t: V1Taint) => t.key !== init.taintKey);
    const spec: Record<string, unknown> = { taints };
    if (!raw.spec?.providerID) spec.providerID = init.providerID;
    return { metadata: { labels: init.labels }, spec };
  }, known);
}

/** Adds `taint` (when no taint has its key) or removes every taint with its key; false when nothing changed. */
async function setNodeTaint(
  target: KubeWriteTarget,
  name: string,
  taint: Taint,
  present: boolean,
): Promise<boolean> {
  const detail = `${present ? "add" : "remove"} taint ${taint.key}:${taint.effect} ${
    present ? "to" : "from"
  } node ${name}`;
  if (described(target, "cloud-node-lifecycle", name, present ? "add_taint" : "remove_taint", detail)) return true;
  return await updateNode(target, name, (raw) => {
    const taints = raw.spec?.taints ?? [];
    const has = taints.some((t: V1Taint) => t.key === taint.key);
    if (has === present) return undefined;
    return { spec: { taints: present ? [...taints, taint] : taints.filter((t: V1Taint) => t.key !== taint.key) } };
  });
}

/** Sets (merges) the Node's labels; a `null` value removes that label. */
async function patchNodeLabels(
  target: KubeWriteTarget,
  name: string,
  labels: Record<string, string | null>,
): Promise<void> {
  if (
    described(target, "cloud-node", name, "patch_node_labels", `set labels ${JSON.stringify(labels)} on node ${name}`)
  ) {
    return;
  }
  await target.kube.send("PATCH", nodePath(name), { patch: "merge", body: { metadata: { labels } } });
}

/**
 * Replaces the Node's `status.addresses` through the status subresource; returns the Node's new resourceVersion (so a
 * write that follows needs no read).
 */
async function replaceNodeAddresses(
  target: KubeWriteTarget,
  name: string,
  addresses: NodeAddress[],
): Promise<string | undefined> {
  const detail = `set the addresses of node ${name} to ${addresses.map((a) => `${a.type} ${a.address}`).join(", ")}`;
  if (described(target, "cloud-node", name, "patch_node_addresses", detail)) return undefined;
  const updated = await target.kube.request<V1Node>("PATCH", nodePath(name, "status"), {
    patch: "strategic",
    body: { status: { addresses: [{ $patch: "replace" }, ...addresses] } },
  });
  return updated.metadata?.resourceVersion;
}

/** Deletes the Node if it still has `uid`; false when it was already gone. */
async function deleteNode(target: KubeWriteTarget, node: { name: string; uid: string }): Promise<boolean> {
  if (described(target, "cloud-node-lifecycle", node.name, "delete_node", `delete node ${node.name}`)) return true;
  try {
    await target.kube.send("DELETE", nodePath(node.name), {
      body: { apiVersion: "v1", kind: "DeleteOptions", preconditions: { uid: node.uid } },
    });
    return true;
  } catch (cause) {
    if (isKubeError(cause, "not_found")) return false;
    throw cause;
  }
}

/**
 * Every write the node controllers make to Nodes, as the one interface they are handed: {@linkcode nodeWriter}
 * builds it over the API server (or a dry run's report); tests hand a plain object that records the writes.
 */
export interface NodeWriter {
  /** True in a dry run: writes are described in the report and nothing is sent. */
  readonly dryRun: boolean;
  /** See {@linkcode initialiseNode}. */
  initialise(
    name: string,
    init: { providerID: string; labels: Record<string, string | null>; taintKey: string },
    known?: SlimNode,
  ): Promise<boolean>;
  /** See {@linkcode setNodeTaint}. */
  setTaint(name: string, taint: Taint, present: boolean): Promise<boolean>;
  /** See {@linkcode patchNodeLabels}. */
  patchLabels(name: string, labels: Record<string, string | null>): Promise<void>;
  /** See {@linkcode replaceNodeAddresses}: the new resourceVersion, when one was written. */
  replaceAddresses(name: string, addresses: NodeAddress[]): Promise<string | undefined>;
  /** See {@linkcode deleteNode}. */
  delete(node: { name: string; uid: string }): Promise<boolean>;
}

/** The {@linkcode NodeWriter} over `target` (the API server, or in a dry run the report). */
export function nodeWriter(target: KubeWriteTarget): NodeWriter {
  return {
    dryRun: target.dryRun !== undefined,
    initialise: (name, init, known) => initialiseNode(target, name, init, known),
    setTaint: (name, taint, present) => setNodeTaint(target, name, taint, present),
    patchLabels: (name, labels) => patchNodeLabels(target, name, labels),
    replaceAddresses: (name, addresses) => replaceNodeAddresses(target, name, addresses),
    delete: (node) => deleteNode(target, node),
  };
}
