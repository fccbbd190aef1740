/**
 * Two minutes of Ankra Cloud faults against the controller binary, then the faults cleared: no duplicate load balancer
 * is left and every Service converges (issue 44). The real kube-apiserver, the Ankra Cloud simulator and `main.ts`
 * (service controller and sweeper, a 2 s request timeout, a 5 s drift period). Services — dedicated ones made and
 * deleted every 8 s, two sharing one load balancer, one on a combined edge whose port moves — change while a fault
 * waits for each operation's next request (a new one every 250 ms, at most one per operation): 5xx before and after
 * the request ran, hangs, answers late, spoiled (not JSON, wrong shape, one list item) or dropped, and 429 bursts, on
 * creates, reads, lists, member and edge updates, deletes and any operation. The figures (faults injected and struck,
 * creates sent and replayed, load balancers made, duplicates found) are printed for the record. `CHAOS_SEED=<n>`
 * replays a run's choice of faults (the timing still varies).
 */
import assert from "node:assert/strict";
import { CLUSTER_LABEL, CLUSTER_UID_LABEL, SERVICE_LABEL, SHARED_LABEL } from "../../lib/ankra_names.ts";
import type { Fault } from "../../simulator/faults.ts";
import { freePort, testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { startReplica, stop } from "../support/controller/controller_process.ts";
import { eventually } from "../support/wait/eventually.ts";
import { kubeOk } from "../support/http/kube_http.ts";
import {
  addNodeServersTo,
  createNodes,
  createService,
  deleteNodes,
  deleteService,
  getService,
  ingressIps,
  NS,
  serviceExists,
} from "../support/controller/service_fixtures.ts";
import { startTestCloud, TEST_TOKEN, testSeed } from "../support/cloud/simulator.ts";

const CHAOS_MS = 120_000;
const FAULT_EVERY_MS = 250;
const CONVERGE_MS = 120_000;

/** A small deterministic random source (mulberry32), so a run's choices can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Operations faults go to, creates most often. */
const OPERATIONS = [
  "create_load_balancer",
  "create_load_balancer",
  "create_load_balancer",
  "create_load_balancer",
  "get_load_balancer",
  "get_load_balancer",
  "list_load_balancers",
  "list_load_balancers",
  "create_load_balancer_backend",
  "create_load_balancer_frontend",
  "replace_load_balancer_members",
  "replace_load_balancer_members",
  "update_load_balancer",
  "delete_load_balancer",
  "update_edge",
  "update_edge",
  "get_edge",
  "*",
];

/** One scripted fault, and a name for the tally. */
function nextFault(pick: () => number): [string, Fault] {
  const one = <T>(items: readonly T[]): T => items[Math.floor(pick() * items.length)];
  const operation = one(OPERATIONS);
  const times = 1 + Math.floor(pick() * 2);
  const kinds: [string, Omit<Fault, "operation" | "times">][] = [
    ["5xx before", { status: one([500, 502, 503]), phase: "before" }],
    ["5xx after", { status: one([500, 503]), phase: "after" }],
    ["hang", { hang: true }],
    ["late (after the timeout)", { latency_ms: 3_000 }],
    ["wrong shape after", { malformed: "shape", phase: "after" }],
    ["not JSON after", { malformed: "json", phase: "after" }],
    ["not JSON before", { malformed: "json", phase: "before" }],
    ["dropped after", { drop: true, phase: "after" }],
    ["dropped before", { drop: true, phase: "before" }],
  ];
  if (operation === "list_load_balancers") kinds.push(["one list item spoiled", { malformed: "item" }]);
  if (pick() < 0.08) return ["429 burst", { operation: "*", status: 429, retry_after: 1, times: 5 }];
  const [what, fault] = one(kinds);
  return [what, { operation, times, ...fault }];
}

Deno.test("two minutes of cloud faults: no duplicate load balancer is left, and every Service converges", async () => {
  const seed = Number(Deno.env.get("CHAOS_SEED") ?? Math.floor(Math.random() * 1_000_000));
  const pick = random(seed);
  console.log(`chaos seed ${seed} (CHAOS_SEED=${seed} replays its choice of faults)`);
  await using cloud = await startTestCloud(testSeed({
    settings: { load_balancer_quota: 40 },
    edges: [{ id: "edge-1", network_id: "net-1", roles: ["load_balancer"], placement: "combined" }],
  }));
  const sim = cloud.simulator.sim;
  addNodeServersTo(sim.world);
  const nodes = await createNodes(2);
  const cluster = uniqueName("chaos");
  const uid = (await kubeOk<{ metadata: { uid: string } }>(testControlPlane(), "GET", "/api/v1/namespaces/kube-system"))
    .metadata.uid;
  const port = freePort();
  const replica = await startReplica([
    "--leader-elect=false",
    `--secure-port=${port}`,
    "--bind-address=127.0.0.1",
    "--metrics-authorization=none",
    `--cluster-name=${cluster}`,
    "--load-balancer-drift-period=5s",
    "--controllers=service",
  ], {
    ANKRA_CLOUD_TOKEN: TEST_TOKEN,
    ANKRA_CLOUD_API_URL: cloud.simulator.url,
    ANKRA_CLOUD_NETWORK_ID: "net-1",
    ANKRA_CLOUD_REQUEST_TIMEOUT: "2s",
  });
  const prefix = uniqueName("cf");
  const sharing = [`${prefix}-sa`, `${prefix}-sb`];
  const onEdge = `${prefix}-edge`;
  /** Dedicated Services, oldest first; the churn adds at the end and deletes from the front. */
  const dedicated: string[] = [];
  const all: string[] = [...sharing, onEdge];
  const deleted = new Set<string>();
  const seen = new Set<string>();
  const injected = new Map<string, number>();
  let made = 0;
  const addDedicated = async () => {
    const name = `${prefix}-${made++}`;
    dedicated.push(name);
    all.push(name);
    await createService(name);
  };
  const deleteOldest = async () => {
    const name = dedicated.shift()!;
    deleted.add(name);
    await deleteService(name);
  };
  const patchPorts = (name: string, ports: number[]) =>
    kubeOk(testControlPlane(), "PATCH", `/api/v1/namespaces/${NS}/services/${name}`, {
      body: { spec: { ports: ports.map((p, i) => ({ name: `p${i}`, port: p })) } },
    });
  const started = performance.now();
  try {
    await replica.waitFor(/starting controllers/, 20_000);
    for (let i = 0; i < 5; i++) await addDedicated();
    await createService(sharing[0], { annotations: { "load-balancer.ankra.cloud/share": "grp" } });
    await createService(sharing[1], {
      ports: [{ port: 81 }],
      annotations: { "load-balancer.ankra.cloud/share": "grp" },
    });
    await createService(onEdge, {
      ports: [{ port: 9000 }],
      annotations: { "load-balancer.ankra.cloud/edge": "edge-1" },
    });
    // The churn while the faults run: a new Service every 8 s, the oldest deleted every 8 s (from 12 s), the edge
    // Service's port moved every 20 s, one Service given a second port, one sharing Service deleted.
    const churn: [number, () => Promise<unknown>][] = [];
    for (let at = 8_000; at < CHAOS_MS - 8_000; at += 8_000) churn.push([at, addDedicated]);
    for (let at = 12_000; at < CHAOS_MS - 8_000; at += 8_000) churn.push([at, deleteOldest]);
    for (let at = 20_000, p = 9001; at < CHAOS_MS; at += 20_000, p++) churn.push([at, () => patchPorts(onEdge, [p])]);
    churn.push([60_000, () => patchPorts(dedicated[dedicated.length - 1], [80, 443])]);
    churn.push([95_000, () => deleteService(sharing[1]).then(() => void deleted.add(sharing[1]))]);
    churn.sort((a, b) => a[0] - b[0]);
    let next = 0;
    while (performance.now() - started < CHAOS_MS) {
      const at = performance.now() - started;
      while (next < churn.length && churn[next][0] <= at) await churn[next++][1]();
      // One fault waiting per operation at most: each is struck by its operation's next request, so the busy ones
      // are struck again and again, and none pile up for the time after the chaos.
      const [what, fault] = nextFault(pick);
      if (!sim.faults.pending().some((f) => f.operation === fault.operation)) {
        sim.faults.add(fault);
        injected.set(what, (injected.get(what) ?? 0) + 1);
      }
      for (const id of sim.loadBalancers.items.keys()) seen.add(id);
      await new Promise((resolve) => setTimeout(resolve, FAULT_EVERY_MS));
    }
    sim.faults.clear();
    const clearedAt = performance.now();

    // Converged: each remaining Service served by exactly its one load balancer (or the edge), none left for the
    // deleted ones, no key with two.
    const ours = () =>
      [...sim.loadBalancers.items.values()].filter((lb) =>
        lb.labels[CLUSTER_LABEL] === cluster && lb.labels[CLUSTER_UID_LABEL] === uid && lb.state !== "deleting"
      );
    const keyOf = (labels: Record<string, string>) =>
      labels[SERVICE_LABEL] ?? (labels[SHARED_LABEL] ? `shared:${labels[SHARED_LABEL]}` : "?");
    let duplicatesSeen = 0;
    const problems = async (): Promise<string[]> => {
      const found: string[] = [];
      const byKey = new Map<string, string[]>();
      for (const lb of ours()) byKey.set(keyOf(lb.labels), [...(byKey.get(keyOf(lb.labels)) ?? []), lb.id]);
      for (const [key, ids] of byKey) {
        if (ids.length < 2) continue;
        duplicatesSeen = Math.max(duplicatesSeen, ids.length - 1);
        found.push(`${key} has ${ids.length}: ${ids.join(", ")}`);
      }
      for (const name of deleted) {
        if (byKey.has(`${NS}/${name}`)) found.push(`deleted ${name} still has ${byKey.get(`${NS}/${name}`)}`);
        if (await serviceExists(name)) found.push(`deleted ${name} still exists (finalizer)`);
      }
      for (const name of all.filter((n) => !deleted.has(n))) {
        const ips = ingressIps(await getService(name));
        if (ips.length === 0) {
          found.push(`${name} not served`);
          continue;
        }
        if (name === onEdge) continue;
        const key = sharing.includes(name) ? `shared:${NS}.grp` : `${NS}/${name}`;
        const [id] = byKey.get(key) ?? [];
        const lb = id ? sim.loadBalancers.items.get(id) : undefined;
        const addresses = lb ? [lb.public_ipv4, ...lb.public_ipv6_addresses] : [];
        if (!ips.every((ip) => addresses.includes(ip))) found.push(`${name} shows ${ips}, its load balancer ${id}`);
      }
      return found;
    };
    let last: string[] = [];
    let told = 0;
    await eventually(
      async () => {
        last = await problems();
        const since = performance.now() - clearedAt;
        if (since >= told * 10_000) {
          console.log(`${(since / 1000).toFixed(0)} s after the faults were cleared: ${last.length} open: ${last}`);
          told++;
        }
        return last.length === 0;
      },
      CONVERGE_MS,
      "converged",
    ).catch(() => {
      const failures = replica.lines.filter((l) => /reconcile failed/.test(l.text)).slice(-15);
      throw new Error(
        `chaos seed ${seed}: not converged ${CONVERGE_MS / 1000} s after the faults were cleared: ${
          last.join("; ")
        }\n` +
          failures.map((l) => l.text).join("\n"),
      );
    });
    const convergedS = (performance.now() - clearedAt) / 1000;
    for (const id of sim.loadBalancers.items.keys()) seen.add(id);

    // The figures.
    const metrics = new TextDecoder().decode(
      (await new Deno.Command("curl", { args: ["-sk", `https://127.0.0.1:${port}/metrics`], stdout: "piped" }).output())
        .stdout,
    );
    const duplicatesFound = Number(/^ankra_ccm_duplicate_load_balancers_found_total (\d+)$/m.exec(metrics)?.[1] ?? 0);
    const creates = sim.log.filter((e) => e.operation === "create_load_balancer");
    const struck = sim.log.filter((e) => e.fault !== undefined);
    const createsStruck = creates.filter((e) => e.fault !== undefined);
    const duplicatesDeleted = replica.lines.filter((l) => /deleted duplicate load balancer/.test(l.text)).length;
    console.log(
      `chaos seed ${seed}: ${[...injected.values()].reduce((a, b) => a + b, 0)} faults injected over ` +
        `${CHAOS_MS / 1000} s (${[...injected].map(([k, n]) => `${k} ${n}`).join(", ")}); ${struck.length} requests ` +
        `struck of ${sim.log.length}; create_load_balancer: ${creates.length} sent, ${createsStruck.length} struck, ` +
        `${creates.filter((e) => e.replayed).length} replayed, ${new Set(creates.map((e) => e.idempotencyKey)).size} ` +
        `keys; ${seen.size} load balancers made for ${all.length} Services (${deleted.size} deleted); duplicates ` +
        `found by the controller ${duplicatesFound}, deleted ${duplicatesDeleted}, seen by the test after the faults ` +
        `${duplicatesSeen}; converged ${convergedS.toFixed(1)} s after the faults were cleared; ` +
        `${((performance.now() - started) / 1000).toFixed(0)} s in all`,
    );
    // How each duplicate came about, from the controller's own log: what its Service's creates ran into.
    for (const line of replica.lines.filter((l) => /found a second load balancer/.test(l.text))) {
      const service = /service=(\S+)/.exec(line.text)?.[1] ?? "";
      console.log(line.text);
      for (
        const failure of replica.lines.filter((l) => l.text.includes(`key=${service} `) && /create_load/.test(l.text))
      ) {
        console.log(`  ${failure.text.slice(0, 400)}`);
      }
    }
    assert.deepEqual(await problems(), [], "0 duplicates, every Service served");
  } finally {
    sim.faults.clear();
    for (const name of all) await deleteService(name);
    for (const name of all) await eventually(async () => !(await serviceExists(name)), 30_000).catch(() => {});
    await stop(replica);
    addNodeServersTo(undefined);
    await deleteNodes(nodes);
  }
});
