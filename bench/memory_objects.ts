/**
 * The objects the memory benchmark fills the cluster with: Nodes as a kubelet writes them (images with digests and
 * sizes, nodeInfo, five conditions, IPv4 + IPv6 + Hostname addresses, the uninitialized taint) and LoadBalancer
 * Services with a 600-byte last-applied annotation, all labelled `bench=memory`.
 *
 * @module
 */
import type { SharedControlPlane } from "../tests/support/control_plane/control_plane.ts";
import { kubeletNode, kubeOk } from "../tests/support/http/kube_http.ts";

/** What a k3s node's kubelet reports in status.images: the system images plus a few workloads, with sizes. */
const IMAGES: [string, number][] = [
  ["docker.io/rancher/mirrored-pause:3.6", 301_463],
  ["docker.io/rancher/mirrored-coredns-coredns:1.12.3", 22_425_123],
  ["docker.io/rancher/local-path-provisioner:v0.0.31", 19_561_012],
  ["docker.io/rancher/mirrored-metrics-server:v0.8.0", 19_442_861],
  ["docker.io/rancher/klipper-helm:v0.9.8-build20250709", 59_786_243],
  ["docker.io/rancher/mirrored-library-traefik:3.3.6", 52_322_610],
  ["docker.io/rancher/mirrored-library-busybox:1.36.1", 1_854_413],
  ["docker.io/rancher/klipper-lb:v0.4.13", 4_951_281],
  ["registry.k8s.io/kube-proxy:v1.37.2", 30_714_528],
  ["registry.k8s.io/pause:3.10", 320_368],
  ["quay.io/cilium/cilium:v1.18.2", 212_451_733],
  ["quay.io/cilium/operator-generic:v1.18.2", 35_012_770],
  ["quay.io/prometheus/node-exporter:v1.9.1", 12_355_823],
  ["quay.io/jetstack/cert-manager-controller:v1.18.2", 20_331_954],
  ["quay.io/jetstack/cert-manager-webhook:v1.18.2", 17_144_902],
  ["quay.io/jetstack/cert-manager-cainjector:v1.18.2", 15_872_118],
  ["registry.k8s.io/ingress-nginx/controller:v1.13.3", 113_218_611],
  ["docker.io/grafana/alloy:v1.10.2", 142_095_340],
  ["ghcr.io/ankraio/ankra-agent:v0.9.4", 31_490_116],
  ["docker.io/library/nginx:1.29.1-alpine", 21_873_445],
];

/** A Node as a kubelet registers and updates it: images, nodeInfo, 5 conditions, IPv4 + IPv6 addresses. */
function benchNode(i: number): Record<string, unknown> {
  const name = `bench-node-${String(i).padStart(5, "0")}`;
  const node = kubeletNode(name, {
    labels: { bench: "memory", "node.kubernetes.io/instance-type": "standard-2c-4g" },
    addresses: [
      { type: "InternalIP", address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
      { type: "InternalIP", address: `fd00:10::${i.toString(16)}` },
      { type: "Hostname", address: name },
    ],
  }) as { status: Record<string, unknown> & { conditions: Record<string, string>[] } };
  const now = new Date().toISOString();
  node.status.conditions.unshift({
    type: "NetworkUnavailable",
    status: "False",
    reason: "FlannelIsUp",
    message: "Flannel is running on this node",
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  });
  node.status.images = IMAGES.map(([tag, sizeBytes], n) => ({
    names: [`${tag.split(":")[0]}@sha256:${(n * 7919 + i).toString(16).padStart(64, "a")}`, tag],
    sizeBytes,
  }));
  return node;
}

function benchService(i: number): Record<string, unknown> {
  return {
    metadata: {
      name: `bench-svc-${i}`,
      labels: { bench: "memory", app: `app-${i}` },
      annotations: {
        "load-balancer.ankra.cloud/health-check-type": "http",
        "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify({ big: "x".repeat(600) }),
      },
    },
    spec: {
      type: "LoadBalancer",
      // No NodePorts: 1,000 LoadBalancer Services would not fit the default NodePort range.
      allocateLoadBalancerNodePorts: false,
      selector: { app: `app-${i}` },
      ports: [{ name: "http", port: 80, targetPort: 8080 }],
    },
  };
}

async function inBatches(from: number, to: number, run: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = from; i < to; i += 25) {
    await Promise.all(Array.from({ length: Math.min(25, to - i) }, (_, k) => run(i + k)));
  }
}

async function count(plane: SharedControlPlane, path: string): Promise<number> {
  return (await kubeOk<{ items: unknown[] }>(plane, "GET", `${path}?labelSelector=bench=memory`)).items.length;
}

/** Creates bench Nodes and Services until the cluster holds `nodes` and `services` of them (stages are cumulative). */
export async function ensureObjects(plane: SharedControlPlane, nodes: number, services: number): Promise<void> {
  await inBatches(
    await count(plane, "/api/v1/nodes"),
    nodes,
    (i) => kubeOk(plane, "POST", "/api/v1/nodes", { body: benchNode(i) }),
  );
  const servicesPath = "/api/v1/namespaces/default/services";
  await inBatches(
    await count(plane, servicesPath),
    services,
    (i) => kubeOk(plane, "POST", servicesPath, { body: benchService(i) }),
  );
}
