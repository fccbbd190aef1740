/**
 * The world the doctor's integration tests look at: an Ankra Cloud simulator served over HTTPS (its CA in
 * ANKRA_CLOUD_CA_BUNDLE), servers in it, Nodes and Leases in the test control plane, the cluster reset between tests,
 * and the doctor run in-process against it all.
 *
 * @module
 */
import assert from "node:assert/strict";
import { resolveCommand } from "../../../lib/config/command.ts";
import { diagnose } from "../../../lib/doctor/doctor.ts";
import { type Finding, formatText } from "../../../lib/doctor/report.ts";
import { type RunningSimulator, startSimulator } from "../../../simulator/server.ts";
import type { Seed } from "../../../simulator/seed.ts";
import { testControlPlane, uniqueName } from "../control_plane/control_plane.ts";
import { kubeletNode, kubeOk, kubeRequest } from "../http/kube_http.ts";
import { serverSeed, TEST_TOKEN, testSeed } from "../cloud/simulator.ts";

/** The k3s server flags of a well-set-up server (no ServiceLB, no k3s cloud controller). */
const K3S_SERVER_ARGS = ["--disable=servicelb", "--disable-cloud-controller"];
/** The Leases the doctor reads: another cloud controller's, k3s' and this controller's. */
const LEASES = ["cloud-controller-manager", "k3s-cloud-controller-manager", "ankra-cloud-ccm"];

/** A simulator served over HTTPS; `await using` stops it. */
export interface DoctorCloud extends AsyncDisposable {
  /** The running simulator. */
  simulator: RunningSimulator;
}

/** A simulator served over HTTPS with the test control plane's serving certificate (valid for 127.0.0.1). */
export async function startCloud(seed: Seed = testSeed()): Promise<DoctorCloud> {
  const plane = testControlPlane();
  const tls = {
    cert: await Deno.readTextFile(`${plane.dir}/apiserver.crt`),
    key: await Deno.readTextFile(`${plane.dir}/apiserver.key`),
  };
  const simulator = await startSimulator({ seed, tls });
  return { simulator, [Symbol.asyncDispose]: () => simulator.stop() };
}

/** The environment of a healthy setup against `cloud`. */
export function cloudEnv(cloud: DoctorCloud, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ANKRA_CLOUD_TOKEN: TEST_TOKEN,
    ANKRA_CLOUD_API_URL: cloud.simulator.url,
    ANKRA_CLOUD_CA_BUNDLE: testControlPlane().caFile,
    ...extra,
  };
}

/**
 * Runs the doctor in-process with the admin kubeconfig (or `kubeconfig`) and the flags `args`; resolves with the
 * report, its findings by id and the checklist as printed.
 */
export async function doctor(env: Record<string, string>, args: string[] = [], kubeconfig?: string) {
  const argv = ["doctor", `--kubeconfig=${kubeconfig ?? testControlPlane().kubeconfigPath}`, ...args];
  const command = resolveCommand(argv, { env });
  assert.equal(command.kind, "doctor");
  const { report, heading } = await diagnose(command as Extract<typeof command, { kind: "doctor" }>, {
    args: argv,
    env,
  });
  const by: Record<string, Finding> = Object.fromEntries(report.findings.map((f) => [f.id, f]));
  return { report, by, text: formatText(report, heading) };
}

/**
 * A test body run on an empty cluster that is emptied again however the body ends, so a failed assertion leaves no
 * Node behind for the next test file (a dry run would take it for one of its own).
 */
export function onCleanCluster(body: () => Promise<void>): () => Promise<void> {
  return async () => {
    await resetCluster();
    try {
      await body();
    } finally {
      await resetCluster();
    }
  };
}

/** Deletes every Node and the Leases the doctor reads, so the next test starts from an empty cluster. */
export async function resetCluster(): Promise<void> {
  const plane = testControlPlane();
  await kubeOk(plane, "DELETE", "/api/v1/nodes");
  for (const name of LEASES) {
    await kubeRequest(plane, "DELETE", `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${name}`);
  }
}

/**
 * Registers a Node; by default as a kubelet with `--cloud-provider=external` on a well-set-up k3s server. With
 * `initialised` (and a `providerID`) it is as the controller left it: no taint.
 */
export async function createNode(name: string, options: {
  providerID?: string;
  k3sArgs?: string[] | null;
  external?: boolean;
  initialised?: boolean;
} = {}): Promise<void> {
  const node = kubeletNode(name, { providerID: options.providerID }) as {
    metadata: { annotations: Record<string, string> };
    spec: { taints?: unknown[] };
  };
  if (options.k3sArgs !== null) {
    node.metadata.annotations["k3s.io/node-args"] = JSON.stringify(["server", ...(options.k3sArgs ?? K3S_SERVER_ARGS)]);
  }
  if (options.external === false) delete node.spec.taints;
  if (options.initialised) node.spec.taints = [];
  await kubeOk(testControlPlane(), "POST", "/api/v1/nodes", { body: node });
}

/** Adds a server to the simulator with legs on `networks`. */
export function addServer(cloud: DoctorCloud, hostname: string, zone = "de-fsn1", networks = ["net-1"]) {
  return cloud.simulator.sim.world.addServer(serverSeed({
    hostname,
    zone,
    interfaces: networks.map((network_id) => ({ network_id })),
  }));
}

/** A cluster of two matched k3s server nodes on net-1 in de-fsn1. */
export async function healthyWorld(cloud: DoctorCloud): Promise<string[]> {
  const a = uniqueName("worker-a");
  const b = uniqueName("worker-b");
  addServer(cloud, a);
  const serverB = addServer(cloud, b);
  await createNode(`${a}.cluster.example`);
  await createNode(b, { providerID: `ankracloud://de-fsn1/${serverB.id}` });
  return [a, b];
}

/** The requests to the simulator that were not reads (its own `/_simulator` endpoints aside). */
export function writesOf(cloud: DoctorCloud) {
  return cloud.simulator.sim.log.filter((entry) => entry.method !== "GET" && !entry.path.startsWith("/_simulator"));
}
