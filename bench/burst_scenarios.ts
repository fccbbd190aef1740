/**
 * The burst benchmark's two scenarios (bench/burst_bench.ts), each on a clean slate (a fresh simulator and controller
 * process, the objects deleted afterwards): many LoadBalancer Services at once, and many Nodes at once.
 *
 * @module
 */
import { SERVICE_LABEL } from "../lib/ankra_names.ts";
import { startSimulator } from "../simulator/server.ts";
import {
  BASE_NODES,
  KUBE_CONCURRENCY,
  LB_DELAY_MS,
  LOG_DIR,
  progress,
  RUN,
  sleep,
  TIMEOUT_MS,
} from "./burst_settings.ts";
import { kube, type KubeObject, pool, track, waitUntil } from "./burst_kube.ts";
import { addServers, seed, startController } from "./burst_controller.ts";
import { buckets, callsSince, lastSeq, progressLine, type Result, saveRequests, settle } from "./burst_measurements.ts";
import { createNodes, deleteNodes, deleteServices, nodeInitialised, serviceBody } from "./burst_objects.ts";

/**
 * `count` new LoadBalancer Services at once beside {@linkcode BASE_NODES} initialised nodes, under the simulator's
 * rate limit `limit`: per Service the time to its address, and from its load balancer running to that address.
 */
export async function servicesScenario(limit: number, count: number): Promise<Result> {
  const label = `${limit}-svc${count}-${RUN}`;
  const scenario = `${count} Services`;
  progress(`limit ${limit}/min, ${scenario}: simulator, ${BASE_NODES} servers and nodes, controller`);
  const sim = await startSimulator({ seed: seed(limit), logLimit: 10_000_000 });
  const baseNames = Array.from({ length: BASE_NODES }, (_, i) => `base-${label}-${i}`);
  addServers(sim, baseNames);
  const controller = await startController(sim.url, `${LOG_DIR}/controller-${label}.log`).catch(async (error) => {
    await sim.stop();
    throw error;
  });
  const stop = new AbortController();
  const namespace = `burst-${label}`;
  try {
    await createNodes(baseNames, label, new Map());
    const nodeSelector = `labelSelector=${encodeURIComponent(`bench-run=${label}`)}`;
    await waitUntil(`the ${BASE_NODES} base nodes to be initialised`, 180_000, async () => {
      if (controller.exited) throw new Error(`the controller ended; log: ${controller.logPath}`);
      const nodes = (await kube<{ items: KubeObject[] }>("GET", `/api/v1/nodes?${nodeSelector}`)).items;
      return nodes.length === BASE_NODES && nodes.every(nodeInitialised);
    });
    await kube("POST", "/api/v1/namespaces", { metadata: { name: namespace, labels: { bench: "burst" } } });

    const createdAt = new Map<string, number>();
    const servedAt = new Map<string, number>();
    const ingress = new Map<string, string[]>();
    const watcher = await track(`/api/v1/namespaces/${namespace}/services`, "", (service, at) => {
      const name = service.metadata.name;
      const ips = (service.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? i.hostname ?? "");
      if (ips.length > 0 && !servedAt.has(name)) {
        servedAt.set(name, at);
        ingress.set(name, ips);
      }
    }, stop.signal);

    // Clean slate for the burst: a fresh rate-limit window, calls counted from here.
    sim.sim.rateLimiter.clear();
    const seq = lastSeq(sim);
    const startMs = Date.now();
    progress(`limit ${limit}/min, ${scenario}: creating ${count} Services in ${namespace}`);
    await pool(Array.from({ length: count }, (_, i) => i), KUBE_CONCURRENCY, async (i) => {
      const body = serviceBody(i);
      await kube("POST", `/api/v1/namespaces/${namespace}/services`, body);
      createdAt.set((body.metadata as { name: string }).name, Date.now());
    });
    progress(`limit ${limit}/min, ${scenario}: created in ${((Date.now() - startMs) / 1000).toFixed(1)} s`);
    const deadline = startMs + TIMEOUT_MS;
    let lastReport = Date.now();
    while (servedAt.size < count && Date.now() < deadline) {
      if (controller.exited) throw new Error(`the controller ended (code ${controller.exited.code})`);
      await sleep(100);
      if (Date.now() - lastReport >= 10_000) {
        lastReport = Date.now();
        progress(progressLine(`limit ${limit}/min, ${scenario}`, servedAt.size, count, startMs, sim, seq));
      }
    }
    const timedOut = servedAt.size < count;
    const endMs = timedOut ? Date.now() : Math.max(...servedAt.values());
    const calls = callsSince(sim, seq, startMs, endMs);
    const afterCalls = await settle(sim, endMs);
    await saveRequests(sim, seq, label);

    // Load balancers: which one each Service's address belongs to, and when it turned running.
    sim.sim.world.tick(); // the simulator applies due transitions (creating → running) lazily
    const lbs = [...sim.sim.loadBalancers.items.values()];
    const byAddress = new Map<string, (typeof lbs)[number]>();
    const perService = new Map<string, number>();
    for (const lb of lbs) {
      for (const ip of [...lb.public_ipv6_addresses, ...(lb.public_ipv4 ? [lb.public_ipv4] : [])]) {
        byAddress.set(ip, lb);
      }
      const owner = lb.labels[SERVICE_LABEL] ?? lb.name;
      perService.set(owner, (perService.get(owner) ?? 0) + 1);
    }
    const afterRunning: number[] = [];
    const notes: string[] = [];
    for (const [name, at] of servedAt) {
      const lb = ingress.get(name)!.map((ip) => byAddress.get(ip)).find(Boolean);
      if (!lb) {
        notes.push(`${name}: address ${ingress.get(name)!.join(", ")} belongs to no load balancer`);
        continue;
      }
      const runningAt = Date.parse(lb.created_at) + LB_DELAY_MS;
      afterRunning.push((at - runningAt) / 1000);
    }
    // Services still without an address whose load balancer is running: how long they have waited so far.
    const waiting = lbs.filter((lb) => {
      const owner = lb.labels[SERVICE_LABEL] ?? "";
      return owner.startsWith(`${namespace}/`) && !servedAt.has(owner.slice(namespace.length + 1)) &&
        Date.parse(lb.created_at) + LB_DELAY_MS <= endMs;
    }).map((lb) => (endMs - Date.parse(lb.created_at) - LB_DELAY_MS) / 1000);
    if (waiting.length > 0) {
      notes.push(
        `${waiting.length} Services without an address have a running load balancer, waiting up to ${
          Math.max(...waiting).toFixed(1)
        } s so far`,
      );
    }
    const latencies = [...servedAt].map(([name, at]) => (at - createdAt.get(name)!) / 1000);
    stop.abort();
    await watcher.done;
    return {
      scenario,
      kind: "services",
      count,
      done: servedAt.size,
      timedOut,
      latencies,
      afterRunning,
      totalSeconds: (endMs - startMs) / 1000,
      ...calls,
      afterCalls,
      loadBalancers: lbs.length,
      duplicates: [...perService.values()].filter((n) => n > 1).length,
      notRunning: lbs.filter((lb) => lb.state !== "running").length,
      servedPer30s: buckets([...servedAt.values()], startMs, 30_000, endMs),
      limit,
      notes,
    };
  } finally {
    stop.abort();
    progress(`limit ${limit}/min, ${scenario}: cleaning up (controller log: ${controller.logPath})`);
    await controller.stop();
    await deleteServices(namespace).catch((error) => progress(`cleanup of Services: ${error.message}`));
    await deleteNodes(label).catch((error) => progress(`cleanup of nodes: ${error.message}`));
    await sim.stop();
  }
}

/** `count` new kubelet-shaped Nodes at once (their servers in the simulator), under `limit`: time to initialised. */
export async function nodesScenario(limit: number, count: number): Promise<Result> {
  const label = `${limit}-node${count}-${RUN}`;
  const scenario = `${count} Nodes`;
  progress(`limit ${limit}/min, ${scenario}: simulator with ${count} servers, controller`);
  const sim = await startSimulator({ seed: seed(limit), logLimit: 10_000_000 });
  const names = Array.from({ length: count }, (_, i) => `n-${label}-${String(i).padStart(5, "0")}`);
  addServers(sim, names);
  const controller = await startController(sim.url, `${LOG_DIR}/controller-${label}.log`).catch(async (error) => {
    await sim.stop();
    throw error;
  });
  const stop = new AbortController();
  try {
    const createdAt = new Map<string, number>();
    const initialisedAt = new Map<string, number>();
    const watcher = await track(
      "/api/v1/nodes",
      `labelSelector=${encodeURIComponent(`bench-run=${label}`)}`,
      (node, at) => {
        if (nodeInitialised(node) && !initialisedAt.has(node.metadata.name)) initialisedAt.set(node.metadata.name, at);
      },
      stop.signal,
    );
    sim.sim.rateLimiter.clear();
    const seq = lastSeq(sim);
    const startMs = Date.now();
    progress(`limit ${limit}/min, ${scenario}: creating ${count} Nodes`);
    await createNodes(names, label, createdAt);
    progress(`limit ${limit}/min, ${scenario}: created in ${((Date.now() - startMs) / 1000).toFixed(1)} s`);
    const deadline = startMs + TIMEOUT_MS;
    let lastReport = Date.now();
    while (initialisedAt.size < count && Date.now() < deadline) {
      if (controller.exited) throw new Error(`the controller ended (code ${controller.exited.code})`);
      await sleep(100);
      if (Date.now() - lastReport >= 10_000) {
        lastReport = Date.now();
        progress(progressLine(`limit ${limit}/min, ${scenario}`, initialisedAt.size, count, startMs, sim, seq));
      }
    }
    const timedOut = initialisedAt.size < count;
    const endMs = timedOut ? Date.now() : Math.max(...initialisedAt.values());
    const calls = callsSince(sim, seq, startMs, endMs);
    const afterCalls = await settle(sim, endMs);
    await saveRequests(sim, seq, label);
    stop.abort();
    await watcher.done;
    return {
      scenario,
      kind: "nodes",
      count,
      done: initialisedAt.size,
      timedOut,
      // A node may be initialised before the harness saw its POST answer: never below zero.
      latencies: [...initialisedAt].map(([name, at]) => Math.max(0, at - (createdAt.get(name) ?? startMs)) / 1000),
      afterRunning: [],
      totalSeconds: (endMs - startMs) / 1000,
      ...calls,
      afterCalls,
      loadBalancers: 0,
      duplicates: 0,
      notRunning: 0,
      servedPer30s: buckets([...initialisedAt.values()], startMs, 30_000, endMs),
      limit,
      notes: [],
    };
  } finally {
    stop.abort();
    progress(`limit ${limit}/min, ${scenario}: cleaning up (controller log: ${controller.logPath})`);
    await controller.stop();
    await deleteNodes(label).catch((error) => progress(`cleanup of nodes: ${error.message}`));
    await sim.stop();
  }
}
