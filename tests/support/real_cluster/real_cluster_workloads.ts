/**
 * The workloads the real-cluster test runs in namespace `default` and how it reads them: an agnhost netexec
 * Deployment spread one pod per node, a LoadBalancer Service in front of it, scaling it, and the simulator's load
 * balancer of a Service.
 *
 * @module
 */
import { kubeOk } from "../http/kube_http.ts";
import type { RealCluster } from "./real_cluster.ts";
import { AGNHOST_IMAGE } from "./real_cluster_steps.ts";
import { type LoadBalancerDoc, loadBalancerOf } from "./real_cluster_traffic.ts";

const NS = "default";
/** The port agnhost netexec serves in {@linkcode echoDeployment}'s pods. */
export const ECHO_PORT = 8080;

/** An agnhost netexec Deployment whose pods spread one per node (`/hostname` answers the pod's name). */
export function echoDeployment(name: string, replicas: number) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 1,
          affinity: {
            podAntiAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [{
                labelSelector: { matchLabels: { app: name } },
                topologyKey: "kubernetes.io/hostname",
              }],
            },
          },
          containers: [{
            name: "netexec",
            image: AGNHOST_IMAGE,
            imagePullPolicy: "Never",
            args: ["netexec", `--http-port=${ECHO_PORT}`],
            ports: [{ containerPort: ECHO_PORT }],
            readinessProbe: { httpGet: { path: "/healthz", port: ECHO_PORT }, periodSeconds: 1 },
          }],
        },
      },
    },
  };
}

/**
 * A LoadBalancer Service `name` in front of the echo pods of Deployment `app` (default `name`): `port` (default 80) to
 * their netexec port, with `annotations`, and `spec` over the rest (e.g. `externalTrafficPolicy`).
 */
export function echoService(
  name: string,
  options: { app?: string; port?: number; annotations?: Record<string, string>; spec?: Record<string, unknown> } = {},
) {
  return {
    metadata: { name, namespace: NS, annotations: options.annotations ?? {} },
    spec: {
      type: "LoadBalancer",
      selector: { app: options.app ?? name },
      ports: [{ port: options.port ?? 80, targetPort: ECHO_PORT }],
      ...options.spec,
    },
  };
}

/** Sets the replicas of Deployment `name` through its scale subresource. */
export async function scale(cluster: RealCluster, name: string, replicas: number): Promise<void> {
  await kubeOk(cluster.plane, "PATCH", `/apis/apps/v1/namespaces/${NS}/deployments/${name}/scale`, {
    body: { spec: { replicas } },
  });
}

/** The simulator's load balancer of Service `default/<name>` (throws when it has none). */
export async function lbOfService(cluster: RealCluster, name: string): Promise<LoadBalancerDoc> {
  const state = await cluster.simulatorState() as { load_balancers?: LoadBalancerDoc[] };
  const lb = loadBalancerOf(state, NS, name);
  if (!lb) throw new Error(`the simulator has no load balancer for Service ${NS}/${name}`);
  return lb;
}
