/**
 * Cluster DNS of the real cluster: CoreDNS (built by scripts/e2e_binaries.sh) as a Deployment in kube-system behind the
 * `kube-dns` Service at {@linkcode CLUSTER_DNS_IP}, answering for `cluster.local` from the API server (the kubernetes
 * plugin) and nothing else (no upstream: the nodes have no way out). The kubelets point pods at it (`clusterDNS`).
 *
 * @module
 */
import type { SharedControlPlane } from "../control_plane/control_plane.ts";
import { kubeOk } from "../http/kube_http.ts";
import { waitFor } from "../real_node/real_node_objects.ts";

/** The `kube-dns` Service's cluster IP (inside the API server's 10.96.0.0/16). */
export const CLUSTER_DNS_IP = "10.96.0.10";
/** The CoreDNS image name the nodes know (imported, never pulled). */
export const COREDNS_IMAGE = "registry.k8s.io/coredns/coredns:v1.15.0";

const COREFILE = `.:53 {
    errors
    health :8080
    ready :8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
`;

/** `[api path, body]` pairs, in the order to create them (pure). */
export function coreDnsObjects(): [string, Record<string, unknown>][] {
  const ns = "kube-system";
  const labels = { "k8s-app": "kube-dns" };
  return [
    [`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: "coredns", namespace: ns } }],
    ["/apis/rbac.authorization.k8s.io/v1/clusterroles", {
      metadata: { name: "system:coredns" },
      rules: [
        { apiGroups: [""], resources: ["endpoints", "services", "pods", "namespaces"], verbs: ["list", "watch"] },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
      ],
    }],
    ["/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      metadata: { name: "system:coredns" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:coredns" },
      subjects: [{ kind: "ServiceAccount", name: "coredns", namespace: ns }],
    }],
    [`/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: "coredns", namespace: ns },
      data: { Corefile: COREFILE },
    }],
    [`/apis/apps/v1/namespaces/${ns}/deployments`, {
      metadata: { name: "coredns", namespace: ns, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: "coredns",
            priorityClassName: "system-cluster-critical",
            dnsPolicy: "Default",
            containers: [{
              name: "coredns",
              image: COREDNS_IMAGE,
              imagePullPolicy: "Never",
              args: ["-conf", "/etc/coredns/Corefile"],
              ports: [
                { name: "dns", containerPort: 53, protocol: "UDP" },
                { name: "dns-tcp", containerPort: 53, protocol: "TCP" },
              ],
              readinessProbe: { httpGet: { path: "/ready", port: 8181 }, periodSeconds: 2 },
              volumeMounts: [{ name: "config", mountPath: "/etc/coredns", readOnly: true }],
            }],
            volumes: [{ name: "config", configMap: { name: "coredns" } }],
          },
        },
      },
    }],
    [`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: "kube-dns", namespace: ns, labels },
      spec: {
        clusterIP: CLUSTER_DNS_IP,
        selector: labels,
        ports: [
          { name: "dns", port: 53, protocol: "UDP", targetPort: 53 },
          { name: "dns-tcp", port: 53, protocol: "TCP", targetPort: 53 },
        ],
      },
    }],
  ];
}

/** Creates the CoreDNS objects and waits until its pod is Ready; the error carries its log when it is not. */
export async function deployClusterDns(plane: SharedControlPlane, timeoutMs = 120_000): Promise<void> {
  for (const [path, body] of coreDnsObjects()) await kubeOk(plane, "POST", path, { body });
  type Pods = { items: { metadata: { name: string }; status: { conditions?: { type: string; status: string }[] } }[] };
  const pods = () => kubeOk<Pods>(plane, "GET", "/api/v1/namespaces/kube-system/pods?labelSelector=k8s-app%3Dkube-dns");
  try {
    await waitFor("CoreDNS Ready", timeoutMs, async () => {
      return (await pods()).items.some((p) =>
        p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True")
      );
    });
  } catch (cause) {
    const logs: string[] = [];
    for (const pod of (await pods()).items) {
      const path = `/api/v1/namespaces/kube-system/pods/${pod.metadata.name}/log?tailLines=30`;
      const answer = await fetch(`${plane.url}${path}`, {
        headers: { authorization: `Bearer ${plane.token}` },
        client: Deno.createHttpClient({ caCerts: [plane.caCert] }),
      });
      logs.push(`--- ${pod.metadata.name}\n${await answer.text()}`);
    }
    throw new Error(`${(cause as Error).message}\n${logs.join("\n")}`);
  }
}
