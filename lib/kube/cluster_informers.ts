/**
 * The two informers every controller reads: slim Nodes keyed by name, slim Services keyed by `namespace/name`.
 *
 * @module
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import type { KubeClient } from "./client.ts";
import { Informer, type InformerOptions } from "./informer.ts";
import { type SlimNode, slimNode, type SlimService, slimService } from "./slim.ts";
import { objectKey } from "./object_key.ts";

/** Options passed through to {@linkcode Informer} (metrics, page size, watch timeouts). */
export type ClusterInformerOptions = Partial<
  Pick<InformerOptions<unknown, never>, "metrics" | "pageSize" | "watchTimeoutSeconds">
>;

/** An informer of all Nodes. */
export function nodeInformer(client: KubeClient, options: ClusterInformerOptions = {}): Informer<V1Node, SlimNode> {
  return new Informer<V1Node, SlimNode>({
    name: "nodes",
    client,
    path: "/api/v1/nodes",
    slim: slimNode,
    keyOf: (node) => node.name,
    ...options,
  });
}

/** An informer of all Services. */
export function serviceInformer(
  client: KubeClient,
  options: ClusterInformerOptions = {},
): Informer<V1Service, SlimService> {
  return new Informer<V1Service, SlimService>({
    name: "services",
    client,
    path: "/api/v1/services",
    slim: slimService,
    keyOf: objectKey,
    ...options,
  });
}
