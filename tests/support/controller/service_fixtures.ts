/**
 * Nodes, Services and helpers shared by the service controller's end-to-end tests.
 *
 * @module
 */
import type { V1Service } from "@kubernetes/client-node";
import { testControlPlane, uniqueName } from "../control_plane/control_plane.ts";
import { eventsFor as eventsForObject, kubeletNode, kubeOk, kubeRequest } from "../http/kube_http.ts";
import type { World } from "../../../simulator/world.ts";
import { serverSeed } from "../cloud/simulator.ts";

/** The cleanup finalizer. */
export const FINALIZER = "service.kubernetes.io/load-balancer-cleanup";
/** The namespace the Services live in. */
export const NS = "default";

let nodeCounter = 10;

/** The simulator whose servers {@linkcode createNodes} adds (set by the running service controller harness). */
let nodeServers: World | undefined;

/**
 * Makes {@linkcode createNodes} add each node's server to `world` (with its leg on net-1 at the node's InternalIP,
 * as the API lists it: the controller takes member addresses from there); `undefined` stops it.
 */
export function addNodeServersTo(world: World | undefined): void {
  nodeServers = world;
}

/** Creates initialised nodes on net-1 (10.0.x.y), each with its server when a simulator is set, and their names. */
export async function createNodes(count: number, prefix = uniqueName("lbn")): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = nodeCounter++;
    const name = `${prefix}-${i}`;
    if (nodeServers) {
      const onNet1 = nodeServers.networks.has("net-1");
      nodeServers.addServer(serverSeed({
        id: `srv-${name}`,
        hostname: name,
        zone: "de-fsn1",
        interfaces: onNet1 ? [{ network_id: "net-1", address: `10.0.0.${n}` }] : [],
      }));
    }
    const node = kubeletNode(name, {
      providerID: `ankracloud://de-fsn1/srv-${name}`,
      labels: { "topology.kubernetes.io/zone": "de-fsn1" },
      addresses: [
        { type: "ExternalIP", address: `2001:db8:77::${n.toString(16)}` },
        { type: "InternalIP", address: `fd64:1:0:1::a00:${n.toString(16)}` },
        { type: "InternalIP", address: `10.0.0.${n}` },
        { type: "Hostname", address: name },
      ],
    }) as { spec: { taints: unknown[] } };
    node.spec.taints = [];
    await kubeOk(testControlPlane(), "POST", "/api/v1/nodes", { body: node });
    names.push(name);
  }
  return names;
}

/** Deletes nodes. */
export async function deleteNodes(names: string[]): Promise<void> {
  for (const name of names) await kubeRequest(testControlPlane(), "DELETE", `/api/v1/nodes/${name}`);
}

/** Creates a LoadBalancer Service in {@linkcode NS}. */
export async function createService(
  name: string,
  options: {
    ports?: { port: number; protocol?: string; name?: string }[];
    annotations?: Record<string, string>;
    ipFamilyPolicy?: string;
    ipFamilies?: string[];
    loadBalancerClass?: string;
  } = {},
): Promise<void> {
  await kubeOk(testControlPlane(), "POST", `/api/v1/namespaces/${NS}/services`, {
    body: {
      metadata: { name, annotations: options.annotations ?? {} },
      spec: {
        type: "LoadBalancer",
        selector: { app: name },
        ...(options.ipFamilyPolicy ? { ipFamilyPolicy: options.ipFamilyPolicy } : {}),
        ...(options.ipFamilies ? { ipFamilies: options.ipFamilies } : {}),
        ...(options.loadBalancerClass ? { loadBalancerClass: options.loadBalancerClass } : {}),
        ports: (options.ports ?? [{ port: 80 }]).map((p, i) => ({ name: p.name ?? `p${i}`, ...p })),
      },
    },
  });
}

/** Reads a Service. */
export function getService(name: string): Promise<V1Service> {
  return kubeOk<V1Service>(testControlPlane(), "GET", `/api/v1/namespaces/${NS}/services/${name}`);
}

/** True while the Service exists. */
export async function serviceExists(name: string): Promise<boolean> {
  return (await kubeRequest(testControlPlane(), "GET", `/api/v1/namespaces/${NS}/services/${name}`)).status === 200;
}

/** The Service's status addresses. */
export function ingressIps(service: V1Service): string[] {
  return (service.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? "");
}

/** Events about the object `name` in the default namespace. */
export function eventsFor(name: string) {
  return eventsForObject(testControlPlane(), name);
}

/** Deletes a Service. */
export async function deleteService(name: string): Promise<void> {
  await kubeRequest(testControlPlane(), "DELETE", `/api/v1/namespaces/${NS}/services/${name}`);
}
