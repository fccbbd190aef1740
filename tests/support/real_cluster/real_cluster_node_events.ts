/**
 * A node leaving and joining the real two-node cluster while requests run through a Service's load balancer — the
 * events the real-cluster test asserts on and `bench/node_events_bench.ts` measures: the exclusion label set on the
 * second node (and removed), its kubelet stopped until the Node is NotReady and the Node then deleted, its kubelet
 * started again (the Node registers anew). Per event: the time until the load balancer's member set is right, the
 * requests (20/s, one connection each) sent and failed meanwhile and the slowest answer, and one request sent once the
 * member set is right. That request is allowed as long as the stream's ({@linkcode STREAM_REQUEST_TIMEOUT_MS}): a
 * member added before its node forwards (node b's kube-proxy starts again after its Node was deleted, while its old
 * rules still point at a pod that is gone) costs a connect that fails or times out (up to 5 s) before the load balancer
 * sends the request to the other member.
 *
 * @module
 */
import { kubeOk } from "../http/kube_http.ts";
import type { RealCluster } from "./real_cluster.ts";
import {
  memberStates,
  requestOnce,
  type RequestOutcome,
  startRequestStream,
  STREAM_REQUEST_TIMEOUT_MS,
} from "./real_cluster_traffic.ts";
import { lbOfService } from "./real_cluster_workloads.ts";
import { waitFor } from "../real_node/real_node_objects.ts";

/** One event's measurement. */
export interface NodeEvent {
  /** What happened. */
  what: string;
  /** Seconds from the event until the member set was right. */
  seconds: number;
  /** Requests sent meanwhile. */
  sent: number;
  /** Requests that failed meanwhile. */
  failed: number;
  /** The slowest answer meanwhile, in milliseconds. */
  slowestMs: number;
  /** The request sent once the member set was right: its answer (the Service answered) or what went wrong. */
  after: RequestOutcome;
}

/** Requests per second through each event. */
export const EVENT_REQUESTS_PER_SECOND = 20;

/**
 * Runs the four events against Service `default/<service>` at `address` (port 80), whose members are both nodes when
 * called and are both nodes again when it returns. Also returns how long node b took to go NotReady.
 *
 * @throws when a member set is not right within its time (120 s per event).
 */
export async function runNodeEvents(
  cluster: RealCluster,
  service: string,
  address: string,
): Promise<{ events: NodeEvent[]; notReadySeconds: number }> {
  const plane = cluster.plane;
  const [a, b] = cluster.topology.nodes;
  const nodeB = cluster.nodes.find((n) => n.plan.name === b.name)!;
  const events: NodeEvent[] = [];
  let notReadySeconds = 0;
  const event = async (what: string, act: () => Promise<void>, members: string[]) => {
    const stream = startRequestStream(address, 80, EVENT_REQUESTS_PER_SECOND);
    const started = performance.now();
    await act();
    await waitFor(`members ${members.join(", ")} after: ${what}`, 120_000, async () => {
      const now = memberStates(await lbOfService(cluster, service)).map((m) => m.address);
      return [...new Set(now)].sort().join() === [...members].sort().join();
    });
    const seconds = (performance.now() - started) / 1000;
    const totals = await stream.stop();
    const after = await requestOnce(address, 80, STREAM_REQUEST_TIMEOUT_MS);
    events.push({
      what,
      seconds,
      sent: totals.sent,
      failed: totals.failed,
      slowestMs: totals.slowestMs,
      after,
    });
  };
  const label = (value: string | null) =>
    kubeOk(plane, "PATCH", `/api/v1/nodes/${b.name}`, {
      body: { metadata: { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": value } } },
    }).then(() => {});
  await event("exclusion label on node b", () => label("true"), [a.ip]);
  await event("exclusion label removed", () => label(null), [a.ip, b.ip]);
  await event("node b's kubelet stopped, the Node deleted once NotReady", async () => {
    const stopped = performance.now();
    await nodeB.stopKubelet();
    await waitFor("node b NotReady", 60_000, async () => {
      const node = await kubeOk<{ status: { conditions: { type: string; status: string }[] } }>(
        plane,
        "GET",
        `/api/v1/nodes/${b.name}`,
      );
      return node.status.conditions.some((c) => c.type === "Ready" && c.status !== "True");
    });
    notReadySeconds = (performance.now() - stopped) / 1000;
    await kubeOk(plane, "DELETE", `/api/v1/nodes/${b.name}`);
  }, [a.ip]);
  await event("node b joins again (kubelet started)", () => Promise.resolve(nodeB.startKubelet()), [a.ip, b.ip]);
  return { events, notReadySeconds };
}

/**
 * One line per event: `<what>: members right after <s> s, <failed> of <sent> failed (slowest <ms> ms); then answered in
 * <ms> ms` (or what went wrong with that request).
 */
export function describeNodeEvents(events: NodeEvent[]): string[] {
  return events.map((e) =>
    `${e.what}: members right after ${
      e.seconds.toFixed(1)
    } s, ${e.failed} of ${e.sent} failed (slowest ${e.slowestMs} ms); ` +
    (e.after.name !== undefined
      ? `then answered in ${e.after.ms} ms`
      : `then not answered: ${e.after.problem} after ${e.after.ms} ms`)
  );
}
