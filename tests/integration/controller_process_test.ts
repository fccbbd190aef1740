/**
 * The controller process as it runs in a cluster: leader election between replicas, the HTTPS health and metrics
 * server with delegated authorization, and shutdown — all against the real kube-apiserver, each replica as the chart's
 * identity (its ClusterRole and its leader-election Role, holding the Lease that Role names).
 */
import assert from "node:assert/strict";
import { selfSignedServingCertificate } from "../../lib/server/self_signed_certificate.ts";
import { freePort, testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { kubeOk, kubeRequest, serviceIngress } from "../support/http/kube_http.ts";
import { eventually } from "../support/controller/node_controllers.ts";
import { MAIN, startReplica, stop } from "../support/controller/controller_process.ts";
import { CONTROLLER_LEASE, controllerKubeconfig } from "../support/controller/controller_identity.ts";
import { createServedNode, startTestCloud, TEST_TOKEN, testSeed } from "../support/cloud/simulator.ts";

/** The chart's leader Lease the replicas (the chart's identity) hold. */
const LEASE_PATH =
  `/apis/coordination.k8s.io/v1/namespaces/${CONTROLLER_LEASE.namespace}/leases/${CONTROLLER_LEASE.name}`;

/** Resolves once the leader has renewed the Lease `count` more times (each renewal is a retry period of the standby's). */
async function leaseRenewals(count: number): Promise<void> {
  const renewTime = () =>
    kubeRequest<{ spec?: { renewTime?: string } }>(
      testControlPlane(),
      "GET",
      LEASE_PATH,
    ).then((answer) => answer.body.spec?.renewTime);
  const seen = new Set([await renewTime()]);
  await eventually(async () => (seen.add(await renewTime()), seen.size > count), 20_000, `${count} lease renewals`);
}

function leaseHolder(): Promise<string | undefined> {
  return kubeRequest<{ spec?: { holderIdentity?: string } }>(
    testControlPlane(),
    "GET",
    LEASE_PATH,
  ).then((answer) => answer.status === 200 ? answer.body.spec?.holderIdentity : undefined);
}

Deno.test("of two replicas exactly one leads; a SIGKILLed leader is replaced within the lease duration", async () => {
  const a = await startReplica(["--secure-port=0"]);
  try {
    await a.waitFor(/became leader/);
    const b = await startReplica(["--secure-port=0"]);
    try {
      await b.waitFor(/Ankra Cloud provider initialised/);
      await leaseRenewals(2); // two retry periods in which the standby found the lease held
      assert.ok(
        !b.lines.some((l) => /became leader/.test(l.text)),
        "the standby does not lead while the leader renews",
      );
      const holder = await leaseHolder();
      assert.ok(holder && holder.length > 0);
      const killedAt = performance.now();
      a.child.kill("SIGKILL");
      await a.exited;
      const tookOver = await b.waitFor(/became leader/, 25_000);
      const seconds = (tookOver - killedAt) / 1000;
      assert.ok(seconds <= 15 + 2 * 1.2 + 1, `took over after ${seconds.toFixed(1)} s (lease 15 s, retry 2 s)`);
      assert.ok(seconds >= 5, `took over after ${seconds.toFixed(1)} s: before the old lease could have expired`);
      assert.notEqual(await leaseHolder(), holder);
    } finally {
      await stop(b);
    }
  } finally {
    await stop(a);
  }
});

Deno.test("a gracefully stopped leader releases the lease and the standby takes over at once, never overlapping", async () => {
  const a = await startReplica(["--secure-port=0"]);
  try {
    await a.waitFor(/became leader/);
    const b = await startReplica(["--secure-port=0"]);
    try {
      await b.waitFor(/Ankra Cloud provider initialised/);
      await leaseRenewals(1); // the standby is in its retry loop
      const stoppedAt = performance.now();
      a.child.kill("SIGTERM");
      const status = await a.exited;
      assert.equal(status.code, 0, "a graceful stop exits 0");
      const exitSeconds = (performance.now() - stoppedAt) / 1000;
      assert.ok(exitSeconds < 5, `exited after ${exitSeconds.toFixed(1)} s`);
      const released = await a.waitFor(/released the leader lease/, 1);
      const controllersStopped = await a.waitFor(/controllers stopped/, 1);
      const tookOver = await b.waitFor(/became leader/, 10_000);
      assert.ok(controllersStopped <= released, "writers stop before the lease is released");
      assert.ok(controllersStopped < tookOver, "the old leader stopped writing before the new one started");
      const seconds = (tookOver - released) / 1000;
      assert.ok(seconds < 1.5, `standby took over ${seconds.toFixed(2)} s after the release`);
    } finally {
      await stop(b);
    }
  } finally {
    await stop(a);
  }
});

Deno.test("the HTTPS server answers health checks, reports readiness, and refuses /metrics to unauthorized callers", async () => {
  const plane = testControlPlane();
  const dir = await Deno.makeTempDir();
  const tls = await selfSignedServingCertificate("localhost");
  await Deno.writeTextFile(`${dir}/tls.crt`, tls.cert);
  await Deno.writeTextFile(`${dir}/tls.key`, tls.key);
  const port = freePort();
  const name = uniqueName("metrics-reader");
  const replica = await startReplica([
    "--leader-elect=false",
    `--secure-port=${port}`,
    "--bind-address=127.0.0.1",
    `--tls-cert-file=${dir}/tls.crt`,
    `--tls-private-key-file=${dir}/tls.key`,
  ]);
  const client = Deno.createHttpClient({ caCerts: [tls.ca] });
  const get = async (path: string, token?: string) => {
    const response = await fetch(`https://127.0.0.1:${port}${path}`, {
      client,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    return { status: response.status, text: await response.text() };
  };
  try {
    await replica.waitFor(/serving health and metrics/);
    assert.equal((await get("/healthz")).status, 200);
    let ready = await get("/readyz?verbose");
    await eventually(async () => (ready = await get("/readyz?verbose")).status === 200, 5_000, "ready");
    assert.match(ready.text, /\[\+\]informer-sync-nodes ok/);
    assert.match(ready.text, /\[\+\]leader-election disabled/);
    const anonymous = await get("/metrics");
    assert.equal(anonymous.status, 401);
    // A service account without the right: 403. With get on the /metrics non-resource URL: 200.
    await kubeOk(plane, "POST", "/api/v1/namespaces/kube-system/serviceaccounts", {
      body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name } },
    });
    const token = (await kubeOk<{ status: { token: string } }>(
      plane,
      "POST",
      `/api/v1/namespaces/kube-system/serviceaccounts/${name}/token`,
      { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 600 } } },
    )).status.token;
    assert.equal((await get("/metrics", token)).status, 403);
    assert.equal((await get("/metrics", "not-a-valid-token")).status, 401);
    await kubeOk(plane, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
      body: { metadata: { name }, rules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }] },
    });
    await kubeOk(plane, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      body: {
        metadata: { name },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
        subjects: [{ kind: "ServiceAccount", name, namespace: "kube-system" }],
      },
    });
    let metrics = await get("/metrics", token);
    // The binding takes effect once the controller's cached refusal (10 s at most) has expired.
    await eventually(async () => (metrics = await get("/metrics", token)).status === 200, 20_000, "/metrics allowed");
    assert.match(metrics.text, /^process_resident_memory_bytes \d+/m);
    assert.match(metrics.text, /^kubernetes_api_requests_total\{method="GET",resource="nodes",code="200"\} \d+/m);
    assert.match(metrics.text, /^# TYPE kubernetes_watch_restarts_total counter/m);
    assert.ok(!metrics.text.includes("act_not-used-by-these-tests"), "the token is in no metric");
    replica.child.kill("SIGTERM");
    assert.equal((await replica.exited).code, 0);
  } finally {
    client.close();
    await stop(replica);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a controller whose output nobody reads any more still stops on SIGTERM with exit 0", async () => {
  await using cloud = await startTestCloud();
  const sim = cloud.simulator.sim;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      MAIN,
      `--kubeconfig=${await controllerKubeconfig()}`,
      "--leader-elect=false",
      "--secure-port=0",
    ],
    env: { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_API_URL: cloud.simulator.url },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!/provider initialised/.test(text)) text += (await reader.read()).value ?? "";
  await reader.cancel();
  await child.stderr.cancel();
  // Its first Ankra Cloud calls come after that line, and it logs their outcome into the pipes nobody reads.
  await eventually(() => sim.count("list_zones") > 0 && sim.count("list_servers") > 0, 10_000, "first API calls");
  child.kill("SIGTERM");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const status = await Promise.race([
    child.status,
    new Promise<Deno.CommandStatus>((_, reject) =>
      timer = setTimeout(() => reject(new Error("no exit in 10 s")), 10_000)
    ),
  ]).finally(() => clearTimeout(timer));
  assert.equal(status.code, 0);
});

Deno.test("a controller SIGKILLed right after creating a load balancer, then restarted, makes exactly one", async () => {
  const plane = testControlPlane();
  await using cloud = await startTestCloud(testSeed({ settings: { load_balancer_create_delay_ms: 3000 } }));
  const sim = cloud.simulator.sim;
  const service = uniqueName("sigkill");
  const node = uniqueName("sigkill-node");
  await createServedNode(plane, sim.world, { name: node, address: "10.0.0.201" });
  const start = () =>
    startReplica([
      "--leader-elect=false",
      "--secure-port=0",
      "--cluster-name=kill",
      "--controllers=service",
    ], { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_API_URL: cloud.simulator.url, ANKRA_CLOUD_NETWORK_ID: "net-1" });
  let replica = await start();
  try {
    await replica.waitFor(/Ankra Cloud provider initialised/);
    await kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
      body: { metadata: { name: service }, spec: { type: "LoadBalancer", ports: [{ port: 80 }] } },
    });
    // Killed as soon as its create reached the API: before the address, before the status.
    await eventually(() => sim.count("create_load_balancer") > 0, 15_000, "the create at the API");
    replica.child.kill("SIGKILL");
    await replica.exited;
    assert.equal(sim.loadBalancers.items.size, 1);
    replica = await start();
    await eventually(
      async () => (await serviceIngress(plane, "default", service)).length > 0,
      20_000,
      "address after the restart",
    );
    assert.equal(sim.loadBalancers.items.size, 1, "exactly one load balancer");
    assert.equal(sim.count("create_load_balancer"), 1, "the restarted controller found it by its labels");
    const lb = [...sim.loadBalancers.items.values()][0];
    assert.equal(lb.labels["ccm.ankra.cloud/service"], `default/${service}`);
  } finally {
    await kubeRequest(plane, "DELETE", `/api/v1/namespaces/default/services/${service}`);
    await eventually(
      async () => (await kubeRequest(plane, "GET", `/api/v1/namespaces/default/services/${service}`)).status === 404,
      20_000,
    ).catch(() => {});
    await stop(replica);
    await kubeRequest(plane, "DELETE", `/api/v1/nodes/${node}`);
  }
});
