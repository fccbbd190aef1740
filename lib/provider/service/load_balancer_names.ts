/**
 * Names the Go controller gives load balancers and their parts; existing clusters depend on them, so they are
 * reproduced exactly: the load balancer name with its 64-byte hash rule, `tcp-<port>` listeners, member names from
 * the node name and address, the edge member prefix of a Service, and the labels. Pure and synchronous.
 *
 * @module
 */
import { CLUSTER_LABEL, SERVICE_LABEL, SHARED_LABEL } from "../../ankra_names.ts";
import { sha256Hex } from "../sha256.ts";
import { objectKey } from "../../kube/object_key.ts";
import { ACROSS_NAMESPACES } from "./load_balancer_ownership.ts";

/** First 8 lower-case hex characters of SHA-256 over the parts joined with NUL. */
export function shortHash(...parts: string[]): string {
  return sha256Hex(parts.join("\u0000")).slice(0, 8);
}

/** `k8s-<cluster>-<namespace>-<name>`; above 64 bytes, the first 55 bytes + `-` + hash (exactly 64). */
export function loadBalancerName(cluster: string, namespace: string, name: string): string {
  const full = `k8s-${cluster}-${namespace}-${name}`;
  const bytes = new TextEncoder().encode(full);
  if (bytes.length <= 64) return full;
  const head = new TextDecoder().decode(bytes.slice(0, 55));
  return `${head}-${shortHash(cluster, namespace, name)}`;
}

/** Frontend and backend name of a Service port: `tcp-<port>`. */
export function listenerName(port: number): string {
  return `tcp-${port}`;
}

/**
 * True for a frontend or backend this controller made (`tcp-<port>`): the only ones it changes or deletes. Others — made
 * by hand on a load balancer a Service adopted (`load-balancer.ankra.cloud/load-balancer-id`) — are left alone.
 */
export function isManagedListener(name: string): boolean {
  return /^tcp-[1-9][0-9]{0,4}$/.test(name);
}

/**
 * The name a released load balancer takes (`<its name, cut to 46 bytes>-released-<hash of its id>`, at most 64 bytes):
 * the Service's name is free again for a new load balancer, and the console shows which ones are kept.
 */
export function releasedName(name: string, id: string): string {
  const head = new TextDecoder().decode(new TextEncoder().encode(name).slice(0, 46)).replace(/\uFFFD+$/, "");
  return `${head.replace(/-+$/, "")}-released-${shortHash(id)}`;
}

/** A member's name: the cleaned node name (≤ 23 characters) + `-` + hash(node name, address); ≤ 32 characters. */
export function memberName(nodeName: string, address: string): string {
  const hash = shortHash(nodeName, address);
  let prefix = nodeName.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "");
  prefix = prefix.slice(0, 23).replace(/-+$/, "");
  return prefix ? `${prefix}-${hash}` : hash;
}

/**
 * The prefix of every member this cluster puts on a combined edge: `k` + the first 6 hex characters of hash(the
 * cluster's UID) + `-`. Members carry no labels, so this is how a cluster's members are told apart from another
 * cluster's (even one with the same `--cluster-name`) and found by `ankra-cloud-ccm cleanup` without the Services.
 */
export function edgeClusterPrefix(clusterUid: string): string {
  return `k${shortHash(clusterUid).slice(0, 6)}-`;
}

/**
 * The prefix of a Service's members on a combined edge: {@linkcode edgeClusterPrefix} + hash(cluster, namespace,
 * name) + `-` (25 characters with the member's own hash: within the API's 32). Without a UID, the Go controller's
 * prefix `k` + hash(cluster, namespace, name) + `-`: members named so are still the Service's, and are renamed on its
 * next pass.
 */
export function edgeMemberPrefix(cluster: string, namespace: string, name: string, clusterUid?: string): string {
  const service = shortHash(cluster, namespace, name);
  return clusterUid ? `${edgeClusterPrefix(clusterUid)}${service}-` : `k${service}-`;
}

/** An edge member's name: prefix + hash(frontend port, address, node port). */
export function edgeMemberName(prefix: string, frontendPort: number, address: string, nodePort: number): string {
  return prefix + shortHash(String(frontendPort), address, String(nodePort));
}

/**
 * The Service and cluster labels of a Service's dedicated load balancer (the Go controller's two); the controller adds
 * the cluster UID label (`CLUSTER_UID_LABEL`, lib/ankra_names.ts) to the ones it creates or adopts.
 */
export function loadBalancerLabels(cluster: string, namespace: string, name: string): Record<string, string> {
  return { [SERVICE_LABEL]: objectKey({ namespace, name }), [CLUSTER_LABEL]: cluster };
}

/**
 * The name of the load balancer the Services of `namespace` sharing `key` use: `k8s-<cluster>-<ns>-shared-<key>`;
 * for a group across namespaces (`namespace` {@linkcode ACROSS_NAMESPACES}) `k8s-<cluster>-shared-<key>`. Both with
 * the 64-byte hash rule of {@linkcode loadBalancerName}.
 */
export function sharedLoadBalancerName(cluster: string, namespace: string, key: string): string {
  if (namespace !== ACROSS_NAMESPACES) return loadBalancerName(cluster, namespace, `shared-${key}`);
  const full = `k8s-${cluster}-shared-${key}`;
  const bytes = new TextEncoder().encode(full);
  if (bytes.length <= 64) return full;
  return `${new TextDecoder().decode(bytes.slice(0, 55))}-${shortHash(cluster, ACROSS_NAMESPACES, `shared-${key}`)}`;
}

/**
 * The labels of a shared load balancer: the cluster's name and the share group, `<namespace>.<key>` (`*.<key>` across
 * namespaces); the controller adds the UID.
 */
export function sharedLoadBalancerLabels(cluster: string, namespace: string, key: string): Record<string, string> {
  return { [SHARED_LABEL]: `${namespace}.${key}`, [CLUSTER_LABEL]: cluster };
}
