/**
 * A server's stop in the real two-node cluster while requests run through a Service's load balancer, twice: announced
 * (Ankra Cloud shows the `server.stop` operation before the server goes down: the simulator's control API with a
 * duration) and unannounced (the server simply stops). The stop itself is a power-off: once the simulator's server is
 * `stopped`, node b's link to the cloud goes down (nothing reaches it, nothing leaves it), as a powered-off VM's would.
 * Per run: the requests sent (20/s, one connection each) and failed, split at the power-off, the slowest answer, and
 * when node b's member was drained (weight 0) and removed. Afterwards node b is powered on again (link up, server
 * `started`) and both nodes are members again.
 *
 * Each run begins on a settled cluster ({@linkcode untilSettled}): the echo pods (one ready per node, none
 * terminating), every node's kube-proxy (running, no exit) and both members (up, full weight) unchanged for
 * {@linkcode SETTLED_FOR_MS}. A node that has just joined again (the step before) still starts its pod and kube-proxy,
 * and its member can be up for a moment while what is behind it changes: a run begun then counts that churn, not the
 * stop. A failed run names, in its description, its first failures (sent when, failed how) and each change of node b's
 * member and server until the power-off.
 *
 * @module
 */
import { kubeOk } from "../http/kube_http.ts";
import { inNetns, output } from "./real_cluster_host.ts";
import type { RealCluster } from "./real_cluster.ts";
import { memberStates, startRequestStream } from "./real_cluster_traffic.ts";
import { lbOfService } from "./real_cluster_workloads.ts";
import { listPods, podReady, waitFor } from "../real_node/real_node_objects.ts";
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
  /** The first {@linkcode FAILURES_SHOWN} failures: when each was sent (seconds into the run) and what went wrong. */
  firstFailures: string[];
  /** Each change of node b's member (health, weight) and server state until the power-off, seconds into the run. */
  changes: string[];
  /** How long the cluster took to settle before the run (seconds). */
  settledAfterS: number;
}

/** How long the pods, kube-proxies and members must stay the same before a run begins. */
export const SETTLED_FOR_MS = 10_000;

/** How many failures a run's description names. */
const FAILURES_SHOWN = 8;

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

/**
 * What a run depends on, as one comparable line, or undefined while it is not as a run needs it: per node, its ready
 * echo pod's uid (exactly one, none terminating) and its kube-proxy's exit count (running); every member up at full
 * weight, both nodes members.
 */
async function workloadShape(cluster: RealCluster, service: string, app: string): Promise<string | undefined> {
  const pods = await listPods(cluster.plane, "default", `app=${app}`);
  if (pods.some((p) => p.metadata.deletionTimestamp)) return undefined;
  const members = memberStates(await lbOfService(cluster, service));
  if (!members.every((m) => m.health === "up" && (m.weight ?? 100) > 0)) return undefined;
  const parts: string[] = [];
  for (const node of cluster.nodes) {
    const ready = pods.filter((p) => p.spec.nodeName === node.plan.name && podReady(p));
    if (ready.length !== 1 || node.kubeProxy.current().exited) return undefined;
    if (!members.some((m) => m.address === node.plan.ip)) return undefined;
    parts.push(`${node.plan.name}: pod ${ready[0].metadata.uid}, kube-proxy exits ${node.kubeProxy.exits.length}`);
  }
  return parts.join("; ");
}

/**
 * Waits until {@linkcode workloadShape} has been the same for {@linkcode SETTLED_FOR_MS}; resolves with the seconds it
 * took.
 */
export async function untilSettled(cluster: RealCluster, service: string, app: string): Promise<number> {
  const started = performance.now();
  let shape: string | undefined;
  let since = performance.now();
  await waitFor(`pods, kube-proxies and members unchanged for ${SETTLED_FOR_MS / 1000} s`, 240_000, async (saw) => {
    const now = await workloadShape(cluster, service, app);
    if (now === undefined || now !== shape) {
      shape = now;
      since = performance.now();
      saw(now ?? "not yet as a run needs it");
      return false;
    }
    return performance.now() - since >= SETTLED_FOR_MS;
  });
  return (performance.now() - started) / 1000;
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
  app: string,
  address: string,
  announceMs: number | undefined,
): Promise<StopRun> {
  const b = cluster.topology.nodes[1];
  const id = await serverOf(cluster, b.name);
  const memberOfB = async () => memberStates(await lbOfService(cluster, service)).filter((m) => m.address === b.ip);
  const settledAfterS = await untilSettled(cluster, service, app);
  const changes: string[] = [];
  let lastSeen = "";
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
      const server = await serverState(cluster, id);
      const seen = `node b's member ${
        members.length === 0
          ? "none"
          : members.map((m) => `${m.health ?? "unchecked"} weight ${m.weight ?? 100}`).join()
      }, server ${server}`;
      if (seen !== lastSeen) changes.push(`${since().toFixed(1)} s: ${(lastSeen = seen)}`);
      if (drainedAfterS === undefined && members.length > 0 && members.every((m) => m.weight === 0)) {
        drainedAfterS = since();
      }
      if (removedAfterS === undefined && members.length === 0) removedAfterS = since();
      return server === "stopped";
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
    firstFailures: failures.slice(0, FAILURES_SHOWN).map((f) =>
      `sent ${((f.at - started) / 1000).toFixed(1)} s into the run (${
        f.at < powerOffAt ? "before" : "after"
      } the power-off): ${f.detail}`
    ),
    changes,
    settledAfterS,
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
      members.every((m) => m.health === "up" && (m.weight ?? 100) > 0);
  });
  return run;
}

/**
 * The announced run (`announceMs` ahead), then the unannounced one, against Service `default/<service>` (its pods
 * labelled `app=<app>`) at `address`.
 */
export async function plannedAgainstUnannouncedStop(
  cluster: RealCluster,
  service: string,
  app: string,
  address: string,
  announceMs: number,
): Promise<{ announced: StopRun; unannounced: StopRun }> {
  const announced = await stopRun(cluster, service, app, address, announceMs);
  const unannounced = await stopRun(cluster, service, app, address, undefined);
  return { announced, unannounced };
}

/**
 * One line per run; with `detail`, also its first failures and the changes of node b's member and server (what a
 * failed assertion should carry, so that a CI log's tail explains it).
 */
export function describeStopRun(what: string, run: StopRun, detail = false): string {
  const at = (s?: number) => (s === undefined ? "never" : `${s.toFixed(1)} s`);
  const line = `${what}: ${run.failedBefore + run.failedAfter} of ${run.sent} requests failed (${run.failedBefore} ` +
    `sent before the power-off, ${run.failedAfter} after), ${run.slowBefore + run.slowAfter} slower than 1 s ` +
    `(${run.slowBefore} before, ${run.slowAfter} after), slowest ${run.slowestMs} ms; node b drained (weight 0) ` +
    `after ${at(run.drainedAfterS)}, off the load balancer after ${at(run.removedAfterS)}, powered off after ` +
    `${run.powerOffAfterS.toFixed(1)} s; settled ${run.settledAfterS.toFixed(1)} s before it began`;
  if (!detail) return line;
  return [
    line,
    ...run.firstFailures.map((f) => `  failed: ${f}`),
    ...run.changes.map((c) => `  seen at ${c}`),
  ].join("\n");
}
