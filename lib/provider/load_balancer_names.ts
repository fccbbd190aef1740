/**
 * Names the Go controller gives load balancers and their parts (`reference-behaviour.md` §3.2); existing clusters
 * depend on them, so they are reproduced exactly.
 *
 * @module
 */

/** First 8 lower-case hex characters of SHA-256 over the parts joined with NUL. */
export async function shortHash(...parts: string[]): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(parts.join("\u0000")));
  return Array.from(new Uint8Array(digest).slice(0, 4), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** `k8s-<cluster>-<namespace>-<name>`; above 64 bytes, the first 55 bytes + `-` + hash (exactly 64). */
export async function loadBalancerName(cluster: string, namespace: string, name: string): Promise<string> {
  const full = `k8s-${cluster}-${namespace}-${name}`;
  const bytes = new TextEncoder().encode(full);
  if (bytes.length <= 64) return full;
  const head = new TextDecoder().decode(bytes.slice(0, 55));
  return `${head}-${await shortHash(cluster, namespace, name)}`;
}

/** Frontend and backend name of a Service port: `tcp-<port>`. */
export function listenerName(port: number): string {
  return `tcp-${port}`;
}

/** A member's name: the cleaned node name (≤ 23 characters) + `-` + hash(node name, address); ≤ 32 characters. */
export async function memberName(nodeName: string, address: string): Promise<string> {
  const hash = await shortHash(nodeName, address);
  let prefix = nodeName.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "");
  prefix = prefix.slice(0, 23).replace(/-+$/, "");
  return prefix ? `${prefix}-${hash}` : hash;
}

/** The prefix of a Service's members on a combined edge: `k` + hash(cluster, namespace, name) + `-`. */
export async function edgeMemberPrefix(cluster: string, namespace: string, name: string): Promise<string> {
  return `k${await shortHash(cluster, namespace, name)}-`;
}

/** An edge member's name: prefix + hash(frontend port, address, node port). */
export async function edgeMemberName(prefix: string, frontendPort: number, address: string, nodePort: number) {
  return prefix + await shortHash(String(frontendPort), address, String(nodePort));
}

/** Labels on every dedicated load balancer of a Service. */
export function loadBalancerLabels(cluster: string, namespace: string, name: string): Record<string, string> {
  return { "ccm.ankra.cloud/service": `${namespace}/${name}`, "ccm.ankra.cloud/cluster": cluster };
}

/** Label holding `<namespace>/<name>`. */
export const SERVICE_LABEL = "ccm.ankra.cloud/service";
/** Label holding the cluster name. */
export const CLUSTER_LABEL = "ccm.ankra.cloud/cluster";
