/**
 * Reading and making the Kubernetes objects the real-node tests look at: the controller's pods and Lease, Nodes'
 * taints, and a second Node whose kubelet heartbeat the test itself renews (so the node lifecycle controller sees a
 * Ready node beside the real, NotReady one).
 *
 * @module
 */
import type { SharedControlPlane } from "../control_plane/control_plane.ts";
import { eventually } from "../wait/eventually.ts";
import { kubeletNode, kubeOk, kubeRequest } from "../http/kube_http.ts";

/** A pod as the tests read it. */
export interface PodDoc {
  /** Name, uid, deletion mark, labels. */
  metadata: { name: string; uid: string; deletionTimestamp?: string; labels?: Record<string, string> };
  /** Node, tolerations, containers. */
  spec: {
    nodeName?: string;
    tolerations?: { key?: string; operator?: string; effect?: string; tolerationSeconds?: number }[];
    containers: { image: string }[];
  };
  /** Phase, conditions, container states. */
  status: {
    phase?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: {
      containerID?: string;
      ready: boolean;
      restartCount: number;
      image: string;
      state?: { running?: { startedAt: string } };
    }[];
  };
}

/** The Lease fields leader election writes. */
export interface LeaseSpec {
  /** Who leads. */
  holderIdentity?: string;
  /** Last renewal. */
  renewTime?: string;
  /** Changes of holder. */
  leaseTransitions?: number;
}

/**
 * {@linkcode eventually} for a value that may be falsy: looks every 250 ms until `check` returns anything but
 * `undefined` or `false` (so `0`, `""` and `null` are values) and returns it. An exception from `check` counts as
 * "not yet"; the last one is named in the failure when `timeoutMs` passes, and so is what `check` last reported
 * through its `saw` argument (the state it looked at), so a timeout says what was there instead.
 */
export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  check: (saw: (state: string) => void) => Promise<T | undefined | false>,
): Promise<T> {
  let lastError = "";
  let lastSeen = "";
  const saw = (state: string) => void (lastSeen = state);
  try {
    const held = await eventually(async () => {
      try {
        const value = await check(saw);
        return value !== undefined && value !== false && { value };
      } catch (cause) {
        lastError = ` (last error: ${cause instanceof Error ? cause.message : cause})`;
        return false;
      }
    }, { timeoutMs, intervalMs: 250, what });
    return held.value;
  } catch (timeout) {
    throw new Error(
      `${timeout instanceof Error ? timeout.message : timeout}${
        lastSeen ? `; last seen: ${lastSeen}` : ""
      }${lastError}`,
    );
  }
}

/** The pods in `namespace` matching `selector` (a label selector). */
export async function listPods(plane: SharedControlPlane, namespace: string, selector: string): Promise<PodDoc[]> {
  const list = await kubeOk<{ items: PodDoc[] }>(
    plane,
    "GET",
    `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`,
  );
  return list.items;
}

/** True when the pod's Ready condition is True. */
export function podReady(pod: PodDoc): boolean {
  return pod.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

/** The containerd ID of the pod's first container (without the `containerd://` scheme). */
export function containerId(pod: PodDoc): string {
  const id = pod.status.containerStatuses?.[0]?.containerID ?? "";
  if (!id) throw new Error(`pod ${pod.metadata.name} has no running container yet`);
  return id.replace(/^[a-z]+:\/\//, "");
}

/** The spec of the Lease `namespace/name` (undefined when absent). */
export async function readLease(
  plane: SharedControlPlane,
  namespace: string,
  name: string,
): Promise<LeaseSpec | undefined> {
  const answer = await kubeRequest<{ spec: LeaseSpec }>(
    plane,
    "GET",
    `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`,
  );
  return answer.status === 200 ? answer.body.spec : undefined;
}

/** The taints of a Node. */
export async function nodeTaints(plane: SharedControlPlane, name: string): Promise<{ key: string; effect: string }[]> {
  const node = await kubeOk<{ spec: { taints?: { key: string; effect: string }[] } }>(
    plane,
    "GET",
    `/api/v1/nodes/${name}`,
  );
  return node.spec.taints ?? [];
}

/** A Node kept Ready by the test: its Lease in kube-node-lease renewed every 2 s until disposed. */
export interface HeartbeatNode extends AsyncDisposable {
  /** The Node's name. */
  name: string;
}

/**
 * Registers a Ready, unschedulable Node at `address` (as a kubelet would, minus the kubelet) and renews its node
 * Lease every 2 s, as a healthy kubelet does every 10 s; disposing stops the heartbeat and deletes Node and Lease.
 */
export async function startHeartbeatNode(
  plane: SharedControlPlane,
  name: string,
  address: string,
): Promise<HeartbeatNode> {
  const node = kubeletNode(name, {
    addresses: [{ type: "InternalIP", address }, { type: "Hostname", address: name }],
    providedNodeIp: address,
  }) as { spec: Record<string, unknown>; status: unknown };
  node.spec.unschedulable = true; // nothing may be scheduled onto a node without a kubelet
  await kubeOk(plane, "POST", "/api/v1/nodes", { body: node });
  await kubeOk(plane, "PATCH", `/api/v1/nodes/${name}/status`, { body: { status: node.status } });
  const leasePath = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`;
  const microTime = () => new Date().toISOString().replace("Z", "000Z");
  await kubeOk(plane, "POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", {
    body: {
      metadata: { name, namespace: "kube-node-lease" },
      spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: microTime() },
    },
  });
  const renew = setInterval(() => {
    kubeRequest(plane, "PATCH", leasePath, { body: { spec: { renewTime: microTime() } } }).catch(() => {});
  }, 2_000);
  return {
    name,
    async [Symbol.asyncDispose]() {
      clearInterval(renew);
      await kubeRequest(plane, "DELETE", leasePath);
      await kubeRequest(plane, "DELETE", `/api/v1/nodes/${name}`);
    },
  };
}
