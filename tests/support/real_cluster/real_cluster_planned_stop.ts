/**
 * A server's stop in the real two-node cluster while requests run through a Service's load balancer, twice: announced
 * (Ankra Cloud shows the `server.stop` operation before the server goes down: the simulator's control API with a
 * duration) and unannounced (the server simply stops). The stop itself is a power-off: once the simulator's server is
 * `stopped`, node b's link to the cloud goes down (nothing reaches it, nothing leaves it), as a powered-off VM's would.
 * Per run: the requests sent (20/s, one connection each) and failed, split at the power-off, the slowest answer, and
 * when node b's member was drained (weight 0) and removed. Afterwards node b is powered on again (link up, server
 * `started`) and both nodes are members again.
 *
 * @module
 */
import { kubeOk } from "../http/kube_http.ts";
import { inNetns, output } from "./real_cluster_host.ts";
import type { RealCluster } from "./real_cluster.ts";
import { memberStates, startRequestStream } from "./real_cluster_traffic.ts";
import { lbOfService } from "./real_cluster_workloads.ts";
import { waitFor } from "../real_node/real_node_objects.ts";
import { parseProviderId } from "../../../lib/provider/provider_id.ts";

/** One run's figures. */
export interface StopRun {
  /** Requests sent from the first announcement (or the stop) until 10 s after the power-off. */
  sent: number;
  /** Requests that failed and were sent before the power-off … */
  failedBefore: number;
  /** … and after it. */
  failedAfter: number;
  /** The slowest answer, milliseconds. */
  slowestMs: number;
  /** Answers slower than 1 s (a connect to node b that timed out, then another member), sent before the power-off … */
  slowBefore: number;
  /** … and after it. */
  slowAfter: number;
  /** Seconds from the announcement until node b's member had weight 0 (undefined: never seen drained). */
  drainedAfterS?: number;
  /** Seconds from the announcement until node b was no member (undefined: still one at the power-off). */
  removedAfterS?: number;
  /** Seconds from the announcement until the power-off. */
  powerOffAfterS: number;
}

/** Requests per second through each run. */
const REQUESTS_PER_SECOND = 20;

/** Node b's server id, from its Node's providerID. */
async function serverOf(cluster: RealCluster, node: string): Promise<string> {
  const doc = await kubeOk<{ spec: { providerID?: string } }>(cluster.plane, "GET", `/api/v1/nodes/${node}`);
  const id = doc.spec.providerID ? parseProviderId(doc.spec.providerID)?.serverId : undefined;
  if (!id) throw new Error(`node ${node} has no Ankra providerID: ${doc.spec.providerID}`);
  return id;
}

/** The simulator's server `id` state. */
async function serverState(cluster: RealCluster, id: string): Promise<string | undefined> {
  const state = await cluster.simulatorState() as { servers?: { id: string; state: string }[] };
  return state.servers?.find((s) => s.id === id)?.state;
}

/** Node b's link to the cloud, up or down (its veth's end on the cloud's bridge). */
async function link(cluster: RealCluster, port: string, up: boolean): Promise<void> {
  const [cmd, args] = inNetns(cluster.topology.cloudNetns, "ip", ["link", "set", port, up ? "up" : "down"]);
  const done = await output(cmd, args);
  if (!done.ok) throw new Error(`ip link set ${port} ${up ? "up" : "down"} failed: ${done.text}`);
}

/**
 * Stops node b's server with the stop announced `announceMs` ahead (or, with `announceMs` undefined, at once), powers
 * the node off once the server is stopped, powers it on again; the run's figures.
 */
async function stopRun(
  cluster: RealCluster,
  service: string,
  address: string,
  announceMs: number | undefined,
): Promise<StopRun> {
  const b = cluster.topology.nodes[1];
  const id = await serverOf(cluster, b.name);
  const memberOfB = async () =>
    memberStates(await lbOfService(cluster, service)).filter((m) => m.address === b.ip) as {
      weight?: number;
      health: string | null;
    }[];
  const stream = startRequestStream(address, 80, REQUESTS_PER_SECOND);
  const started = performance.now();
  const since = () => (performance.now() - started) / 1000;
  let drainedAfterS: number | undefined;
  let removedAfterS: number | undefined;
  if (announceMs !== undefined) {
    await cluster.simulatorControl("POST", `/servers/${id}/operations`, {
      kind: "server.stop",
      duration_ms: announceMs,
    });
    // Until the server is stopped: when node b's member is drained, then removed.
    await waitFor("the announced server stopped", announceMs + 30_000, async () => {
      const members = await memberOfB();
      if (drainedAfterS === undefined && members.length > 0 && members.every((m) => m.weight === 0)) {
        drainedAfterS = since();
      }
      if (removedAfterS === undefined && members.length === 0) removedAfterS = since();
      return (await serverState(cluster, id)) === "stopped";
    });
  } else {
    await cluster.simulatorControl("PATCH", `/servers/${id}`, { state: "stopped" });
  }
  // The power-off: nothing reaches node b any more.
  const powerOffAt = performance.now();
  await link(cluster, b.cloudPort, false);
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  // Read once every request has ended: one still connecting now is counted with what it met.
  const totals = await stream.stop();
  const failures = stream.failures();
  const slow = stream.slow();
  const run: StopRun = {
    sent: totals.sent,
    failedBefore: failures.filter((f) => f.at < powerOffAt).length,
    failedAfter: failures.filter((f) => f.at >= powerOffAt).length,
    slowestMs: totals.slowestMs,
    slowBefore: slow.filter((s) => s.at < powerOffAt).length,
    slowAfter: slow.filter((s) => s.at >= powerOffAt).length,
    drainedAfterS,
    removedAfterS,
    powerOffAfterS: (powerOffAt - started) / 1000,
  };
  const what = announceMs === undefined ? "unannounced" : "announced";
  for (const failure of failures.slice(0, 5)) console.log(`  ${what}: ${failure.detail}`);
  for (const answer of slow.slice(0, 5)) {
    const when = ((answer.at - started) / 1000).toFixed(1);
    const side = answer.at < powerOffAt ? "before" : "after";
    console.log(
      `  ${what}, slow: sent ${when} s into the run (${side} the power-off), answered by ${answer.name} in ${answer.ms} ms`,
    );
  }
  // Power on: the link, the server started; both nodes members again, up.
  await link(cluster, b.cloudPort, true);
  await cluster.simulatorControl("PATCH", `/servers/${id}`, { state: "started" });
  await waitFor("both nodes members and up after the power-on", 180_000, async () => {
    const members = memberStates(await lbOfService(cluster, service));
    return [...new Set(members.map((m) => m.address))].sort().join() ===
        cluster.topology.nodes.map((n) => n.ip).sort().join() &&
      members.every((m) => m.health === "up" && ((m as { weight?: number }).weight ?? 100) > 0);
  });
  return run;
}

/** The announced run (`announceMs` ahead), then the unannounced one, against Service `default/<service>` at `address`. */
export async function plannedAgainstUnannouncedStop(
  cluster: RealCluster,
  service: string,
  address: string,
  announceMs: number,
): Promise<{ announced: StopRun; unannounced: StopRun }> {
  const announced = await stopRun(cluster, service, address, announceMs);
  const unannounced = await stopRun(cluster, service, address, undefined);
  return { announced, unannounced };
}

/** One line per run. */
export function describeStopRun(what: string, run: StopRun): string {
  const at = (s?: number) => (s === undefined ? "never" : `${s.toFixed(1)} s`);
  return `${what}: ${run.failedBefore + run.failedAfter} of ${run.sent} requests failed (${run.failedBefore} sent ` +
    `before the power-off, ${run.failedAfter} after), ${run.slowBefore + run.slowAfter} slower than 1 s ` +
    `(${run.slowBefore} before, ${run.slowAfter} after), slowest ${run.slowestMs} ms; node b drained (weight 0) ` +
    `after ${at(run.drainedAfterS)}, off the load balancer after ${at(run.removedAfterS)}, powered off after ` +
    `${run.powerOffAfterS.toFixed(1)} s`;
}
