/**
 * Raw HTTP access to the test control plane for fixtures and assertions. Deliberately independent of the
 * controller's own Kubernetes client, so a test's setup never relies on the code it tests.
 *
 * @module
 */
import type { SharedControlPlane } from "../control_plane/control_plane.ts";

/** The answer of {@linkcode kubeRequest}. */
export interface KubeAnswer<T = Record<string, unknown>> {
  /** HTTP status. */
  status: number;
  /** Parsed JSON body (an empty object when there was none). */
  body: T;
}

/** Content types accepted by PATCH. */
export type PatchType = "merge" | "strategic" | "json" | "apply";

const PATCH_TYPES: Record<PatchType, string> = {
  merge: "application/merge-patch+json",
  strategic: "application/strategic-merge-patch+json",
  json: "application/json-patch+json",
  apply: "application/apply-patch+yaml",
};

/** Options of {@linkcode kubeRequest}. */
export interface KubeRequestOptions {
  /** JSON body. */
  body?: unknown;
  /** Bearer token instead of the admin's. */
  token?: string;
  /** PATCH flavour (default `merge`). */
  patch?: PatchType;
}

/** Sends one request to the control plane as the admin (or with `options.token`) and parses the JSON answer. */
export async function kubeRequest<T = Record<string, unknown>>(
  plane: SharedControlPlane,
  method: string,
  path: string,
  options: KubeRequestOptions = {},
): Promise<KubeAnswer<T>> {
  const client = Deno.createHttpClient({ caCerts: [plane.caCert] });
  try {
    const headers: Record<string, string> = {
      authorization: `Bearer ${options.token ?? plane.token}`,
      accept: "application/json",
    };
    if (options.body !== undefined) {
      headers["content-type"] = method === "PATCH" ? PATCH_TYPES[options.patch ?? "merge"] : "application/json";
    }
    const response = await fetch(`${plane.url}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      client,
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as T };
  } finally {
    client.close();
  }
}

/** Like {@linkcode kubeRequest} but throws unless the status is 2xx. */
export async function kubeOk<T = Record<string, unknown>>(
  plane: SharedControlPlane,
  method: string,
  path: string,
  options: KubeRequestOptions = {},
): Promise<T> {
  const answer = await kubeRequest<T>(plane, method, path, options);
  if (answer.status < 200 || answer.status > 299) {
    throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  }
  return answer.body;
}

/** A Node as a kubelet with `--cloud-provider=external` registers it. */
export function kubeletNode(name: string, options: {
  addresses?: { type: string; address: string }[];
  providedNodeIp?: string;
  providerID?: string;
  ready?: boolean;
  labels?: Record<string, string>;
  images?: number;
} = {}): Record<string, unknown> {
  const annotations: Record<string, string> = { "node.alpha.kubernetes.io/ttl": "0" };
  if (options.providedNodeIp) annotations["alpha.kubernetes.io/provided-node-ip"] = options.providedNodeIp;
  const now = new Date().toISOString();
  const ready = options.ready ?? true;
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      labels: {
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        "kubernetes.io/hostname": name,
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        ...options.labels,
      },
      annotations,
    },
    spec: {
      ...(options.providerID ? { providerID: options.providerID } : {}),
      taints: [{ key: "node.cloudprovider.kubernetes.io/uninitialized", value: "true", effect: "NoSchedule" }],
    },
    status: {
      addresses: options.addresses ?? [{ type: "Hostname", address: name }],
      conditions: [
        {
          type: "MemoryPressure",
          status: "False",
          reason: "KubeletHasSufficientMemory",
          lastHeartbeatTime: now,
          lastTransitionTime: now,
          message: "kubelet has sufficient memory available",
        },
        {
          type: "DiskPressure",
          status: "False",
          reason: "KubeletHasNoDiskPressure",
          lastHeartbeatTime: now,
          lastTransitionTime: now,
          message: "kubelet has no disk pressure",
        },
        {
          type: "PIDPressure",
          status: "False",
          reason: "KubeletHasSufficientPID",
          lastHeartbeatTime: now,
          lastTransitionTime: now,
          message: "kubelet has sufficient PID available",
        },
        {
          type: "Ready",
          status: ready ? "True" : "False",
          reason: ready ? "KubeletReady" : "KubeletNotReady",
          lastHeartbeatTime: now,
          lastTransitionTime: now,
          message: ready ? "kubelet is posting ready status" : "container runtime network not ready",
        },
      ],
      capacity: { cpu: "2", memory: "4026540Ki", pods: "110", "ephemeral-storage": "40470732Ki" },
      allocatable: { cpu: "2", memory: "3924140Ki", pods: "110", "ephemeral-storage": "37297826550" },
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
        systemUUID: "8d3b8a9e-1111-2222-3333-444455556666",
        bootID: "d9a8e1f2-aaaa-bbbb-cccc-ddddeeeeffff",
        kernelVersion: "6.1.0-28-amd64",
        osImage: "Debian GNU/Linux 12 (bookworm)",
        containerRuntimeVersion: "containerd://1.7.24-k3s1",
        kubeletVersion: "v1.37.2+k3s1",
        kubeProxyVersion: "v1.37.2+k3s1",
        operatingSystem: "linux",
        architecture: "amd64",
      },
      images: Array.from({ length: options.images ?? 3 }, (_, i) => ({
        names: [
          `docker.io/library/image-${i}@sha256:${i.toString(16).padStart(64, "0")}`,
          `docker.io/library/image-${i}:v1.${i}.0`,
        ],
        sizeBytes: 10_000_000 + i * 12_345,
      })),
    },
  };
}

/** An Event as the tests read it. */
export interface EventDoc {
  /** Reason. */
  reason: string;
  /** Normal or Warning. */
  type: string;
  /** Message. */
  message: string;
  /** Occurrences. */
  count: number;
  /** Source. */
  source: { component: string };
}

/** The Events about the object named `name` in `namespace` (cluster-scoped objects' events are in `default`). */
export function eventsFor(plane: SharedControlPlane, name: string, namespace = "default"): Promise<EventDoc[]> {
  return kubeOk<{ items: EventDoc[] }>(
    plane,
    "GET",
    `/api/v1/namespaces/${namespace}/events?fieldSelector=involvedObject.name=${name}`,
  ).then((list) => list.items);
}

/** The ingress IPs in a Service's status (empty until it has an address). */
export async function serviceIngress(plane: SharedControlPlane, namespace: string, name: string): Promise<string[]> {
  const service = await kubeOk<{ status: { loadBalancer?: { ingress?: { ip?: string }[] } } }>(
    plane,
    "GET",
    `/api/v1/namespaces/${namespace}/services/${name}`,
  );
  return (service.status.loadBalancer?.ingress ?? []).map((i) => i.ip ?? "");
}
