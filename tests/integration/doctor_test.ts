/**
 * `ankra-cloud-ccm doctor` end to end: the real kube-apiserver, the Ankra Cloud simulator served over TLS (its CA in
 * ANKRA_CLOUD_CA_BUNDLE), the doctor in-process and, twice, `main.ts` as a subprocess. Each finding is seen both
 * ways where the test world can make it fail; nothing the doctor does may change either side.
 *
 * Every test starts from a cluster without Nodes and without the Leases the doctor reads (test files run one after
 * another, so this touches no other test's objects).
 */
import { permissionFlagsFor } from "../../lib/runtime_permissions.ts";
import assert from "node:assert/strict";
import { resolveCommand } from "../../lib/config.ts";
import { diagnose } from "../../lib/doctor/doctor.ts";
import { type Finding, formatText } from "../../lib/doctor/report.ts";
import { kubeconfigText, testControlPlane, uniqueName } from "../support/control_plane.ts";
import { kubeletNode, kubeOk, kubeRequest } from "../support/kube_http.ts";
import { READ_ONLY_TOKEN, serverSeed, TEST_TOKEN, testSeed } from "../support/simulator.ts";
import { type RunningSimulator, startSimulator } from "../../simulator/server.ts";
import { AnkraCloudClient } from "../../lib/cloud/client.ts";
import type { Seed } from "../../simulator/seed.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const K3S_SERVER_ARGS = ["--disable=servicelb", "--disable-cloud-controller"];
const LEASES = ["cloud-controller-manager", "k3s-cloud-controller-manager", "ankra-cloud-ccm"];

/** A simulator served over HTTPS; `await using` stops it. */
interface DoctorCloud extends AsyncDisposable {
  /** The running simulator. */
  simulator: RunningSimulator;
}

/** A simulator served over HTTPS with the test control plane's serving certificate (valid for 127.0.0.1). */
async function startCloud(seed: Seed = testSeed()): Promise<DoctorCloud> {
  const plane = testControlPlane();
  const tls = {
    cert: await Deno.readTextFile(`${plane.dir}/apiserver.crt`),
    key: await Deno.readTextFile(`${plane.dir}/apiserver.key`),
  };
  const simulator = await startSimulator({ seed, tls });
  return { simulator, [Symbol.asyncDispose]: () => simulator.stop() };
}

/** The environment of a healthy setup against `cloud`. */
function cloudEnv(cloud: DoctorCloud, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ANKRA_CLOUD_TOKEN: TEST_TOKEN,
    ANKRA_CLOUD_API_URL: cloud.simulator.url,
    ANKRA_CLOUD_CA_BUNDLE: testControlPlane().caFile,
    ...extra,
  };
}

/** Runs the doctor in-process with the admin kubeconfig (or `kubeconfig`) and the flags `args`. */
async function doctor(env: Record<string, string>, args: string[] = [], kubeconfig?: string) {
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

async function resetCluster(): Promise<void> {
  const plane = testControlPlane();
  await kubeOk(plane, "DELETE", "/api/v1/nodes");
  for (const name of LEASES) {
    await kubeRequest(plane, "DELETE", `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${name}`);
  }
}

/** Registers a Node; by default as a kubelet with `--cloud-provider=external` on a well-set-up k3s server. */
async function createNode(name: string, options: {
  providerID?: string;
  k3sArgs?: string[] | null;
  external?: boolean;
} = {}): Promise<void> {
  const node = kubeletNode(name, { providerID: options.providerID }) as {
    metadata: { annotations: Record<string, string> };
    spec: { taints?: unknown[] };
  };
  if (options.k3sArgs !== null) {
    node.metadata.annotations["k3s.io/node-args"] = JSON.stringify(["server", ...(options.k3sArgs ?? K3S_SERVER_ARGS)]);
  }
  if (options.external === false) delete node.spec.taints;
  await kubeOk(testControlPlane(), "POST", "/api/v1/nodes", { body: node });
}

/** Adds a server to the simulator with legs on `networks`. */
function addServer(cloud: DoctorCloud, hostname: string, zone = "de-fsn1", networks = ["net-1"]) {
  return cloud.simulator.sim.world.addServer(serverSeed({
    hostname,
    zone,
    interfaces: networks.map((network_id) => ({ network_id })),
  }));
}

/** A cluster of two matched k3s server nodes on net-1 in de-fsn1. */
async function healthyWorld(cloud: DoctorCloud): Promise<string[]> {
  const a = uniqueName("worker-a");
  const b = uniqueName("worker-b");
  addServer(cloud, a);
  const serverB = addServer(cloud, b);
  await createNode(`${a}.cluster.example`);
  await createNode(b, { providerID: `ankracloud://de-fsn1/${serverB.id}` });
  return [a, b];
}

function writesOf(cloud: DoctorCloud) {
  return cloud.simulator.sim.log.filter((entry) => entry.method !== "GET" && !entry.path.startsWith("/_simulator"));
}

Deno.test("a healthy cluster: every check passes, exit code 0, and only the refused probe is not a read", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  await healthyWorld(cloud);
  const { report, by, text } = await doctor(cloudEnv(cloud));
  for (const finding of report.findings) assert.equal(finding.status, "pass", `${finding.id}: ${finding.result}`);
  assert.equal(report.ok, true);
  assert.equal(report.findings.length, 16);
  assert.match(by["api-reachable"].result, /^https:\/\/127\.0\.0\.1:\d+ answered; TLS verified$/);
  assert.match(by["nodes-matched"].result, /all 2 nodes matched \(1 by providerID, 1 by hostname\)/);
  assert.match(by["private-network"].result, /share net-1/);
  assert.equal(by["zone-capabilities"].result, "de-fsn1: HA pair");
  assert.match(by["rbac"].result, /^test-admin may do all 23 things the controller does$/);
  assert.match(text, /^ankra-cloud-ccm v[\d.]+ doctor: Ankra Cloud API https:\/\/127\.0\.0\.1:\d+, Kubernetes https:/);
  assert.match(text, /16 passed, 0 failed, 0 warnings, 0 skipped: ready\n$/);
  const writes = writesOf(cloud);
  assert.deepEqual(writes.map((w) => [w.operation, w.status]), [["create_load_balancer", 404]]);
  assert.equal(cloud.simulator.sim.loadBalancers.items.size, 0, "the probe created nothing");
  await resetCluster();
});

Deno.test("a token the API refuses fails, and the checks that need it are skipped; the cluster checks still run", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  await healthyWorld(cloud);
  const { report, by } = await doctor(
    cloudEnv(cloud, { ANKRA_CLOUD_TOKEN: "act_bm90LWEta25vd24tdG9rZW4teHh4eHh4eHh4" }),
  );
  assert.equal(report.ok, false);
  assert.equal(by["api-reachable"].status, "pass");
  assert.equal(by["token-valid"].status, "fail");
  assert.match(by["token-valid"].result, /invalid or expired \(HTTP 401 on list_zones\)/);
  for (const id of ["token-operate", "account-can-create", "nodes-matched", "private-network", "zone-capabilities"]) {
    assert.equal(by[id].status, "skip", id);
  }
  assert.equal(by["kubelet-external"].status, "pass");
  assert.equal(by["rbac"].status, "pass");
  assert.equal(writesOf(cloud).length, 0, "no probe with a refused token");
  await resetCluster();
});

Deno.test("a read-only token fails the operate check; the account check is skipped", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  await healthyWorld(cloud);
  const { report, by } = await doctor(cloudEnv(cloud, { ANKRA_CLOUD_TOKEN: READ_ONLY_TOKEN }));
  assert.equal(report.ok, false);
  assert.equal(by["token-valid"].status, "pass");
  assert.equal(by["token-operate"].status, "fail");
  assert.match(by["token-operate"].result, /HTTP 403 on create_load_balancer/);
  assert.match(by["token-operate"].fix!, /operate permission/);
  assert.equal(by["account-can-create"].status, "skip");
  assert.equal(by["nodes-matched"].status, "pass", "reads still work");
  await resetCluster();
});

Deno.test("billing gates: an unverified email and a missing payment method fail the account check", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  const settings = cloud.simulator.sim.world.settings;
  settings.email_verified = false;
  let { by } = await doctor(cloudEnv(cloud));
  assert.equal(by["token-operate"].status, "pass");
  assert.equal(by["account-can-create"].status, "fail");
  assert.match(by["account-can-create"].result, /email_unverified/);
  settings.email_verified = true;
  settings.payment = "payment_method_required";
  ({ by } = await doctor(cloudEnv(cloud)));
  assert.equal(by["account-can-create"].status, "fail");
  assert.match(by["account-can-create"].result, /HTTP 402 payment_method_required/);
  assert.match(by["account-can-create"].fix!, /payment method/);
  assert.equal(cloud.simulator.sim.loadBalancers.items.size, 0);
});

Deno.test("an API certificate from an unknown CA fails reachability and points at ANKRA_CLOUD_CA_BUNDLE", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  const env = cloudEnv(cloud);
  delete env.ANKRA_CLOUD_CA_BUNDLE;
  const { report, by } = await doctor(env);
  assert.equal(report.ok, false);
  assert.equal(by["api-reachable"].status, "fail");
  assert.match(by["api-reachable"].result, /^TLS verification failed for https:\/\/127\.0\.0\.1:\d+: .*certificate/);
  assert.match(by["api-reachable"].fix!, /ANKRA_CLOUD_CA_BUNDLE/);
  assert.equal(by["token-valid"].status, "skip");
  assert.equal(cloud.simulator.sim.log.length, 0, "nothing reached the API");
});

Deno.test("without a token the configuration fails first; the Kubernetes checks still run", async () => {
  await resetCluster();
  await createNode(uniqueName("lonely"));
  const { report, by } = await doctor({});
  assert.equal(report.findings[0].id, "configuration");
  assert.equal(by["configuration"].status, "fail");
  assert.match(by["configuration"].result, /ANKRA_CLOUD_TOKEN is not set/);
  assert.equal(by["api-reachable"].status, "skip");
  assert.equal(by["kubernetes-api"].status, "pass");
  assert.equal(by["kubelet-external"].status, "pass");
  assert.equal(by["k3s-servicelb"].status, "pass");
  assert.equal(by["rbac"].status, "pass");
  assert.equal(by["nodes-matched"].status, "skip");
  await resetCluster();
});

Deno.test("unmatched, ambiguous and foreign nodes are named; a kubelet without the external provider fails", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  const [a] = await healthyWorld(cloud);
  const twin = uniqueName("twin");
  addServer(cloud, twin, "de-fsn1");
  addServer(cloud, twin, "de-fsn2");
  const nobody = uniqueName("nobody");
  const plain = uniqueName("plain");
  addServer(cloud, plain);
  await createNode(twin);
  await createNode(nobody);
  await createNode(uniqueName("hetzner"), { providerID: "hcloud://4711" });
  await createNode(plain, { external: false });
  const { by } = await doctor(cloudEnv(cloud));
  const matched = by["nodes-matched"];
  assert.equal(matched.status, "fail");
  assert.match(matched.result, new RegExp(`not matched: ${nobody} \\(no server has hostname ${nobody}\\)`));
  assert.match(matched.result, new RegExp(`ambiguous: ${twin} \\(2 servers have hostname ${twin}`));
  assert.match(matched.result, /other providers: hetzner-/);
  assert.ok(!matched.result.includes(`${a}.cluster.example (`), "matched nodes are not listed");
  const kubelet = by["kubelet-external"];
  assert.equal(kubelet.status, "fail");
  assert.match(kubelet.result, new RegExp(`without --cloud-provider=external\\): ${plain}$`));
  await resetCluster();
});

Deno.test("nodes of other providers alone are a warning, not a failure", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  await healthyWorld(cloud);
  await createNode(uniqueName("k3s-node"), { providerID: "k3s://elsewhere" });
  const { report, by } = await doctor(cloudEnv(cloud));
  assert.equal(by["nodes-matched"].status, "warn");
  assert.equal(report.ok, true, "warnings do not fail");
  await resetCluster();
});

Deno.test("nodes on two networks fail the network check; ANKRA_CLOUD_NETWORK_ID is checked instead when set", async () => {
  await resetCluster();
  await using cloud = await startCloud(testSeed({
    networks: [
      { id: "net-1", name: "private", zone: "de-fsn1", cidr: "10.0.0.0/16", ula_prefix: "fd64:1:0:1::/64" },
      { id: "net-2", name: "other", zone: "de-fsn1", cidr: "10.1.0.0/16", ula_prefix: "fd64:1:0:2::/64" },
    ],
  }));
  const a = uniqueName("net-a");
  const b = uniqueName("net-b");
  addServer(cloud, a, "de-fsn1", ["net-1"]);
  addServer(cloud, b, "de-fsn1", ["net-2"]);
  await createNode(a);
  await createNode(b);
  let { by } = await doctor(cloudEnv(cloud));
  assert.equal(by["private-network"].status, "fail");
  assert.match(
    by["private-network"].result,
    new RegExp(`do not share one Ankra private network \\(${a}: net-1, ${b}: net-2\\)`),
  );
  assert.match(by["private-network"].fix!, /ANKRA_CLOUD_NETWORK_ID/);
  ({ by } = await doctor(cloudEnv(cloud, { ANKRA_CLOUD_NETWORK_ID: "net-1" })));
  assert.equal(by["private-network"].status, "warn", "the controller serves from a and leaves b out of IPv4");
  assert.match(
    by["private-network"].result,
    new RegExp(
      `; but node ${b} \\(server [^)]+\\) has no IPv4 address for the load balancer on network net-1 .* IPv6 only$`,
    ),
  );
  assert.match(by["private-network"].fix!, new RegExp(`attach its server to net-1`));
  ({ by } = await doctor(cloudEnv(cloud, { ANKRA_CLOUD_NETWORK_ID: "net-nope" })));
  assert.equal(by["private-network"].status, "fail");
  assert.match(by["private-network"].result, /net-nope names no network of the account/);
  await resetCluster();
});

Deno.test("a zone with one compute node warns with the API's reason; asking for single VMs passes", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  const name = uniqueName("small");
  addServer(cloud, name, "de-fsn2");
  await createNode(name);
  let { by, report } = await doctor(cloudEnv(cloud));
  assert.equal(by["zone-capabilities"].status, "warn");
  assert.equal(
    by["zone-capabilities"].result,
    "de-fsn2: single VM only, no failover (the zone has 1 compute node(s); it needs 2)",
  );
  assert.equal(report.ok, true);
  ({ by } = await doctor(cloudEnv(cloud, { ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY: "false" })));
  assert.equal(by["zone-capabilities"].status, "pass");
  ({ by } = await doctor(cloudEnv(cloud, { ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY: "true" })));
  assert.equal(by["zone-capabilities"].status, "fail");
  ({ by } = await doctor(cloudEnv(cloud, { ANKRA_CLOUD_ZONE: "xx-none1" })));
  assert.equal(by["zone-capabilities"].status, "fail");
  assert.match(by["zone-capabilities"].result, /ANKRA_CLOUD_ZONE xx-none1 is not a zone of the account/);
  await resetCluster();
});

Deno.test("k3s servers without --disable=servicelb or --disable-cloud-controller fail, each named", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  await healthyWorld(cloud);
  const lb = uniqueName("k3s-lb");
  const ccm = uniqueName("k3s-ccm");
  addServer(cloud, lb);
  addServer(cloud, ccm);
  await createNode(lb, { k3sArgs: ["--disable-cloud-controller", "--disable", "traefik"] });
  await createNode(ccm, { k3sArgs: ["--disable", "traefik,servicelb"] });
  const { by } = await doctor(cloudEnv(cloud));
  assert.equal(by["k3s-servicelb"].status, "fail");
  assert.match(by["k3s-servicelb"].result, new RegExp(`ServiceLB runs on 1 k3s server .*: ${lb};`));
  assert.match(by["k3s-servicelb"].fix!, /--disable=servicelb/);
  assert.equal(by["k3s-cloud-controller"].status, "fail");
  assert.match(by["k3s-cloud-controller"].result, new RegExp(`: ${ccm};`));
  await resetCluster();
});

Deno.test("a foreign Lease holder renewing now is a warning; so is this controller's Lease held", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  await healthyWorld(cloud);
  const plane = testControlPlane();
  const lease = (name: string, holder: string, renewed: Date) => ({
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name, namespace: "kube-system" },
    spec: { holderIdentity: holder, leaseDurationSeconds: 15, renewTime: renewed.toISOString().replace("Z", "000Z") },
  });
  const leases = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
  await kubeOk(plane, "POST", leases, { body: lease("cloud-controller-manager", "hcloud-ccm_1", new Date()) });
  await kubeOk(plane, "POST", leases, {
    body: lease("ankra-cloud-ccm", "old-replica_2", new Date(Date.now() - 3_600_000)),
  });
  let { by, report } = await doctor(cloudEnv(cloud));
  assert.equal(by["other-cloud-controller"].status, "warn");
  assert.match(by["other-cloud-controller"].result, /kube-system\/cloud-controller-manager is held by hcloud-ccm_1/);
  assert.equal(by["leader-lease"].status, "pass", "a stale holder does not count");
  assert.equal(report.ok, true);
  await kubeOk(plane, "PUT", `${leases}/ankra-cloud-ccm`, {
    body: {
      ...lease("ankra-cloud-ccm", "live-replica_3", new Date()),
      metadata: {
        name: "ankra-cloud-ccm",
        namespace: "kube-system",
        resourceVersion: (await kubeOk<{ metadata: { resourceVersion: string } }>(
          plane,
          "GET",
          `${leases}/ankra-cloud-ccm`,
        )).metadata.resourceVersion,
      },
    },
  });
  ({ by } = await doctor(cloudEnv(cloud)));
  assert.equal(by["leader-lease"].status, "warn");
  assert.match(by["leader-lease"].result, /kube-system\/ankra-cloud-ccm is held by live-replica_3/);
  await resetCluster();
});

Deno.test("an account at the load balancer limit warns: a new Service would be refused", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  await healthyWorld(cloud);
  const client = new AnkraCloudClient({
    apiUrl: cloud.simulator.url,
    token: TEST_TOKEN,
    caBundle: testControlPlane().caCert,
  });
  try {
    for (let i = 0; i < 5; i++) {
      await client.createLoadBalancer({ zone: "de-fsn1", name: `lb-${i}`, network_id: "net-1", public_ipv4: false });
    }
  } finally {
    client.close();
  }
  assert.equal(cloud.simulator.sim.loadBalancers.items.size, 5);
  const { by } = await doctor(cloudEnv(cloud));
  assert.equal(by["load-balancer-quota"].status, "warn");
  assert.match(by["load-balancer-quota"].result, /5 load balancers of at most 5/);
  await resetCluster();
});

Deno.test("RBAC of a ServiceAccount with only some permissions: the missing ones are named", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  await healthyWorld(cloud);
  const plane = testControlPlane();
  const name = uniqueName("doctor-partial");
  await kubeOk(plane, "POST", "/api/v1/namespaces/default/serviceaccounts", { body: { metadata: { name } } });
  await kubeOk(plane, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
    body: {
      metadata: { name },
      rules: [
        { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] },
        { apiGroups: [""], resources: ["services"], verbs: ["get", "list", "watch", "patch", "update"] },
        { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "list", "watch"] },
      ],
    },
  });
  await kubeOk(plane, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    body: {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [{ kind: "ServiceAccount", name, namespace: "default" }],
    },
  });
  const dir = await Deno.makeTempDir({ prefix: "doctor-rbac-" });
  try {
    const request = await kubeOk<{ status: { token: string } }>(
      plane,
      "POST",
      `/api/v1/namespaces/default/serviceaccounts/${name}/token`,
      { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 600 } } },
    );
    const kubeconfig = `${dir}/kubeconfig`;
    await Deno.writeTextFile(kubeconfig, kubeconfigText(plane.url, plane.caCert, request.status.token));
    const { by, report } = await doctor(cloudEnv(cloud), [], kubeconfig);
    const rbac = by["rbac"];
    assert.equal(rbac.status, "fail");
    assert.match(rbac.result, new RegExp(`^system:serviceaccount:default:${name} lacks 13 permissions: `));
    for (
      const missing of [
        "create events",
        "patch nodes/status",
        "delete nodes",
        "patch services/status",
        "watch endpointslices (discovery.k8s.io)",
        "create leases (coordination.k8s.io) in kube-system",
        "update leases (coordination.k8s.io) named ankra-cloud-ccm in kube-system",
        "create tokenreviews (authentication.k8s.io)",
      ]
    ) assert.ok(rbac.result.includes(missing), `${missing} in ${rbac.result}`);
    assert.ok(!/\b(get|list|watch) nodes\b/.test(rbac.result), "granted permissions are not listed");
    assert.equal(by["nodes-matched"].status, "pass", "the partial identity still reads nodes");
    assert.equal(by["other-cloud-controller"].status, "pass", "and Leases");
    assert.equal(report.ok, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await kubeRequest(plane, "DELETE", `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${name}`);
    await kubeRequest(plane, "DELETE", `/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`);
    await kubeRequest(plane, "DELETE", `/api/v1/namespaces/default/serviceaccounts/${name}`);
    await resetCluster();
  }
});

async function runMain(args: string[], env: Record<string, string>) {
  const output = await new Deno.Command(Deno.execPath(), {
    // With the release launcher's permissions: the doctor runs through the same launcher as the controller.
    args: ["run", ...permissionFlagsFor(args, env), "--no-prompt", MAIN, ...args],
    env: { ANKRA_CLOUD_TOKEN: "", ANKRA_CLOUD_TOKEN_FILE: "", ...env },
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

Deno.test("main.ts doctor --kubeconfig --output=json: the documented shape, exit 0, the token nowhere", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  await healthyWorld(cloud);
  const result = await runMain(
    ["doctor", `--kubeconfig=${testControlPlane().kubeconfigPath}`, "--output=json"],
    cloudEnv(cloud),
  );
  assert.equal(result.code, 0, result.stdout + result.stderr);
  const document = JSON.parse(result.stdout);
  assert.deepEqual(Object.keys(document), ["version", "ok", "findings"]);
  assert.match(document.version, /^v\d+\.\d+\.\d+/);
  assert.equal(document.ok, true);
  assert.equal(document.findings.length, 16);
  for (const finding of document.findings) {
    assert.deepEqual(Object.keys(finding), ["id", "title", "status", "result"]);
    assert.equal(finding.status, "pass");
  }
  assert.ok(!result.stdout.includes(TEST_TOKEN) && !result.stderr.includes(TEST_TOKEN));
  assert.equal(result.stderr, "");
  await resetCluster();
});

Deno.test("main.ts doctor with a read-only token prints the checklist with the fix and exits 1", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  await healthyWorld(cloud);
  const result = await runMain(
    ["doctor", `--kubeconfig=${testControlPlane().kubeconfigPath}`],
    cloudEnv(cloud, { ANKRA_CLOUD_TOKEN: READ_ONLY_TOKEN }),
  );
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.match(result.stdout, /^ankra-cloud-ccm v[\d.]+ doctor: /);
  assert.match(result.stdout, /\n✗ API token may make changes \(operate\): the token may not make changes/);
  assert.match(result.stdout, /\n {4}create an API token with operate permission/);
  assert.match(result.stdout, /\n✓ RBAC permissions of the controller: /);
  assert.match(result.stdout, /14 passed, 1 failed, 0 warnings, 1 skipped: fix the failures above/);
  assert.ok(!result.stdout.includes(READ_ONLY_TOKEN) && !result.stderr.includes(READ_ONLY_TOKEN));
  await resetCluster();
});
