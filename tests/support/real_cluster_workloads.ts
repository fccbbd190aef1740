/**
 * The workloads the real-cluster test runs in namespace `default` and how it reads them: an agnhost netexec
 * Deployment spread one pod per node, scaling it, and the simulator's load balancer of a Service.
 *
 * @module
 */
import { kubeOk } from "./kube_http.ts";
import { AGNHOST_IMAGE, type RealCluster } from "./real_cluster.ts";
import { type LoadBalancerDoc, loadBalancerOf } from "./real_cluster_traffic.ts";

const NS = "default";

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
            args: ["netexec", "--http-port=8080"],
            ports: [{ containerPort: 8080 }],
            readinessProbe: { httpGet: { path: "/healthz", port: 8080 }, periodSeconds: 1 },
          }],
        },
      },
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
