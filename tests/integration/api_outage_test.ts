/**
 * The controller across Kubernetes API server outages, as a separate process whose API server sits behind a proxy
 * the test takes down and brings back: after restarts in a row a new Node is initialised within seconds of the API
 * being back (the watch retry does not sit at a long backoff), and an outage longer than the renew deadline ends
 * the term of leadership with a WARN and a metric, not an ERROR — then the replica leads again.
 */
import assert from "node:assert/strict";
import { freePort, testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { type Replica, startReplica, stop } from "../support/controller/controller_process.ts";
import { CONTROLLER_LEASE, controllerKubeconfig } from "../support/controller/controller_identity.ts";
import { kubeletNode, kubeOk, kubeRequest } from "../support/http/kube_http.ts";
import { eventually } from "../support/controller/node_controllers.ts";
import { serverSeed, startTestCloud, TEST_TOKEN, testSeed } from "../support/cloud/simulator.ts";
import { startTcpProxy } from "../support/http/tcp_proxy.ts";

/**
 * Resolves once the controller has logged a list/watch retry at the longest pause it takes while the API server
 * cannot be reached (1.6 s, minus its jitter): from then on a longer outage leaves it in the same state.
 */
function atLongestBackoff(replica: Replica, from: number): Promise<void> {
  return eventually(
    () =>
      replica.lines.slice(from).some((l) =>
        /list\/watch failed; retrying/.test(l.text) && Number(/retryInMs=(\d+)/.exec(l.text)?.[1]) >= 1_280
      ),
    20_000,
    "a list/watch retry at the longest backoff",
  );
}

async function metric(port: number, name: string): Promise<string[]> {
  const out = await new Deno.Command("curl", { args: ["-sk", `https://127.0.0.1:${port}/metrics`], stdout: "piped" })
    .output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l.startsWith(name));
}

Deno.test("after two API server restarts in a row a new Node is initialised within seconds of the API's return", async () => {
  const plane = testControlPlane();
  const target = new URL(plane.url);
  await using proxy = startTcpProxy({ hostname: target.hostname, port: Number(target.port) });
  const kubeconfig = await controllerKubeconfig(`https://127.0.0.1:${proxy.port}`);
  const name = uniqueName("after-restart");
  await using cloud = await startTestCloud(testSeed({
    servers: [serverSeed({ hostname: name, zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] })],
  }));
  const replica = await startReplica([
    `--kubeconfig=${kubeconfig}`,
    "--leader-elect=false",
    "--secure-port=0",
    "--controllers=cloud-node",
  ], { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_API_URL: cloud.simulator.url });
  try {
    await replica.waitFor(/starting controllers/);
    // Two restarts: down until the watch retries at its longest backoff (connection refused), up until the
    // controller reaches the API server again, down until the longest backoff again.
    await proxy.down();
    await atLongestBackoff(replica, 0);
    const reached = proxy.accepted;
    proxy.up();
    await eventually(() => proxy.accepted > reached, 10_000, "the controller back at the API server");
    const secondOutage = replica.lines.length;
    await proxy.down();
    await atLongestBackoff(replica, secondOutage);
    proxy.up();
    const back = performance.now();
    await kubeOk(plane, "POST", "/api/v1/nodes", { body: kubeletNode(name) });
    await eventually(
      async () =>
        Boolean(
          (await kubeOk<{ spec: { providerID?: string } }>(plane, "GET", `/api/v1/nodes/${name}`)).spec
            .providerID,
        ),
      20_000,
      "the new node initialised",
    );
    const seconds = (performance.now() - back) / 1000;
    console.log(`new node initialised ${seconds.toFixed(2)} s after the API server was back`);
    assert.ok(seconds < 4, `initialised ${seconds.toFixed(2)} s after the API came back (the watch sat in backoff?)`);
  } finally {
    await stop(replica);
    await kubeRequest(plane, "DELETE", `/api/v1/nodes/${name}`);
  }
});

Deno.test("an API server outage past the renew deadline ends leadership with a WARN and a metric, then it leads again", async () => {
  const plane = testControlPlane();
  const target = new URL(plane.url);
  await using proxy = startTcpProxy({ hostname: target.hostname, port: Number(target.port) });
  const kubeconfig = await controllerKubeconfig(`https://127.0.0.1:${proxy.port}`);
  const port = freePort();
  const replica = await startReplica([
    `--kubeconfig=${kubeconfig}`,
    "--leader-elect-lease-duration=6s",
    "--leader-elect-renew-deadline=4s",
    "--leader-elect-retry-period=1s",
    `--secure-port=${port}`,
    "--bind-address=127.0.0.1",
    "--metrics-authorization=none",
    "--controllers=-service",
  ]);
  try {
    await replica.waitFor(/became leader/);
    await proxy.down();
    await replica.waitFor(/lost leadership: the controllers stopped; standing by for the lease/, 20_000);
    assert.ok(!replica.lines.some((l) => /ERROR.*leadership/.test(l.text)), "not an ERROR");
    assert.deepEqual(
      await metric(port, "leader_election_lost_total"),
      [`leader_election_lost_total{name="${CONTROLLER_LEASE.name}",cause="renew_deadline"} 1`],
    );
    assert.deepEqual(await metric(port, "leader_election_master_status"), [
      `leader_election_master_status{name="${CONTROLLER_LEASE.name}"} 0`,
    ]);
    const lostAt = replica.lines.length;
    proxy.up();
    await eventually(
      () => replica.lines.slice(lostAt).some((l) => /became leader/.test(l.text)),
      30_000,
      "leads again",
    );
    assert.equal(replica.child.pid > 0, true, "the same process leads again: no restart needed");
  } finally {
    await stop(replica);
  }
});
