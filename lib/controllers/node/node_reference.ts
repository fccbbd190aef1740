/**
 * The object a Node's events are about, as both node controllers (cloud-node and cloud-node-lifecycle) record them:
 * a cluster-scoped `v1` Node, named and with its UID (so the events of a deleted and recreated Node are apart).
 *
 * @module
 */
import type { ObjectReference } from "../../kube/events.ts";
import type { SlimNode } from "../../kube/slim.ts";

/** The {@linkcode ObjectReference} of `node` for its events. */
export function nodeReference(node: Pick<SlimNode, "name" | "uid">): ObjectReference {
  return { kind: "Node", apiVersion: "v1", name: node.name, uid: node.uid };
}
