/**
 * The steps the real-node and real-cluster tests repeat: running a command and failing with its output, the
 * controller's pod once it is Ready, the Lease holder once it renews, its process killed and restarted, its rollout
 * after `helm upgrade`, and the chart's host port being free.
 *
 * @module
 */
import { containerId, listPods, type PodDoc, podReady, readLease, waitFor } from "./real_node_objects.ts";
import type { SharedControlPlane } from "../control_plane/control_plane.ts";

/** A cluster the chart runs in (a real node, or the real two-node cluster). */
type WithPlane = { plane: SharedControlPlane };

/** The namespace the chart is installed into in the real-node and real-cluster tests. */
export const CHART_NAMESPACE = "kube-system";
/** The label selector of the chart's pods. */
export const CHART_SELECTOR = "app.kubernetes.io/name=ankra-cloud-ccm";
const NS = CHART_NAMESPACE;
const SELECTOR = CHART_SELECTOR;

/** Runs `command` with `args`; throws with its standard error when it fails. */
export async function run(command: string, args: string[]): Promise<void> {
  const out = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) throw new Error(`${command} ${args.join(" ")} failed:\n${new TextDecoder().decode(out.stderr)}`);
}

/** The standard output of a finished command; throws with `what` and its output when it failed. */
export async function ok(
  result: Promise<{ code: number; text: string; stdout: string }>,
  what: string,
): Promise<string> {
  const done = await result;
  if (done.code !== 0) throw new Error(`${what} failed (${done.code}):\n${done.text}`);
  return done.stdout;
}

/** The chart's `--secure-port`: on the host network it is a port of the host. */
export const CHART_HOST_PORT = 10258;

/** Throws, naming the port, when another process on this host listens on it. */
export function requireFreeHostPort(port: number): void {
  try {
    Deno.listen({ hostname: "0.0.0.0", port }).close();
  } catch {
    throw new Error(
      `port ${port} (the chart's --secure-port on the host network) is taken on this host: stop its user`,
    );
  }
}

/** The one live (not terminating) pod of the controller, once it is Ready. */
export function readyPod(node: WithPlane, timeoutMs: number): Promise<PodDoc> {
  return waitFor("the controller's pod Ready", timeoutMs, async () => {
    const live = (await listPods(node.plane, NS, SELECTOR)).filter((p) => !p.metadata.deletionTimestamp);
    return live.length === 1 && podReady(live[0]) ? live[0] : undefined;
  });
}

/** The Lease holder once it renews (two different renewTimes seen under one holder). */
export async function renewingHolder(node: WithPlane, timeoutMs: number, notHolder?: string): Promise<string> {
  let seen: { holder: string; renew: string } | undefined;
  return await waitFor("a leader renewing the Lease", timeoutMs, async () => {
    const lease = await readLease(node.plane, NS, "ankra-cloud-ccm");
    const holder = lease?.holderIdentity ?? "";
    if (!holder || holder === notHolder || !lease?.renewTime) return undefined;
    if (seen?.holder === holder && seen.renew !== lease.renewTime) return holder;
    seen = { holder, renew: lease.renewTime };
    return undefined;
  });
}

/**
 * SIGKILLs the process of the controller's pod `before` (its PID from `pidOf`, the node's containerd); resolves with
 * the pod once the kubelet has restarted its container and it is Ready.
 */
export async function killedAndRestarted(
  node: WithPlane,
  before: PodDoc,
  pidOf: (containerId: string) => Promise<number>,
  timeoutMs = 90_000,
): Promise<PodDoc> {
  const restarts = before.status.containerStatuses?.[0].restartCount ?? 0;
  Deno.kill(await pidOf(containerId(before)), "SIGKILL");
  return await waitFor("the controller's container restarted and Ready", timeoutMs, async () => {
    const pod = (await listPods(node.plane, NS, SELECTOR)).find((p) => p.metadata.uid === before.metadata.uid);
    return pod && (pod.status.containerStatuses?.[0].restartCount ?? 0) > restarts && podReady(pod) ? pod : undefined;
  });
}

/**
 * The controller's pod after `helm upgrade` to image `tag`: waits until the one live pod runs that tag and is Ready,
 * counting the most pods seen running at once on the way (one, when the rollout never runs two controllers).
 */
export async function rolledOutPod(
  node: WithPlane,
  tag: string,
  timeoutMs: number,
): Promise<{ pod: PodDoc; mostRunning: number }> {
  let mostRunning = 0;
  const pod = await waitFor("the upgraded pod Ready", timeoutMs, async () => {
    const pods = await listPods(node.plane, NS, SELECTOR);
    const running = pods.filter((p) => p.status.containerStatuses?.some((c) => c.state?.running));
    mostRunning = Math.max(mostRunning, running.length);
    const live = pods.filter((p) => !p.metadata.deletionTimestamp);
    return live.length === 1 && live[0].spec.containers[0].image.endsWith(`:${tag}`) && podReady(live[0])
      ? live[0]
      : undefined;
  });
  return { pod, mostRunning };
}
