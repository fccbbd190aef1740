/**
 * A rotated API token, end to end: the controller (run with the release launcher's permissions) reads its token from
 * a Secret volume that the test updates on disk as the kubelet does (new `..data`, symlink swap), the simulator
 * revokes the old token through its control API, and the controller keeps serving — a new Service gets its address —
 * without a restart.
 *
 * - Rotated, then revoked (the documented order): `/readyz` never fails.
 * - Revoked before the Secret reaches the Pod: `/readyz` fails on the first 401 and is green again as soon as the
 *   new file is there, without waiting for the next call of a controller.
 */
import assert from "node:assert/strict";
import { freePort, testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { startReplica, stop } from "../support/controller/controller_process.ts";
import { kubeOk, kubeRequest, serviceIngress } from "../support/http/kube_http.ts";
import { eventually } from "../support/wait/eventually.ts";
import { createServedNode, startTestCloud, TEST_TOKEN, testSeed } from "../support/cloud/simulator.ts";
import { writeSecretVolume } from "../support/kubelet/secret_volume.ts";
import { selfSignedServingCertificate } from "../../lib/server/self_signed_certificate.ts";

const SECOND_TOKEN = "act_c2Vjb25kLXRva2VuLWFmdGVyLXJvdGF0aW9uLXh4eHg";
const THIRD_TOKEN = "act_dGhpcmQtdG9rZW4tYWZ0ZXItcm90YXRpb24teHh4eHg";

/** `/readyz` sampled every 100 ms until stopped: every answer's status, with the time. */
function sampleReadiness(port: number, ca: string) {
  const client = Deno.createHttpClient({ caCerts: [ca] });
  const samples: { at: number; status: number; text: string }[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const response = await fetch(`https://127.0.0.1:${port}/readyz?verbose`, { client });
      samples.push({ at: performance.now(), status: response.status, text: await response.text() });
      // The sampling period, not a wait for something: the test asserts over every sample that /readyz never
      // failed, so it must look continuously (which `eventually`, stopping at the first success, cannot).
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    samples,
    async stop() {
      running = false;
      await done;
      client.close();
    },
  };
}

function seconds(from: number, to: number): string {
  return ((to - from) / 1000).toFixed(2);
}

Deno.test("a rotated token file is used without a restart: new Services get addresses and /readyz recovers", async () => {
  const plane = testControlPlane();
  await using cloud = await startTestCloud(testSeed());
  const control = `${cloud.simulator.url}/_simulator/tokens`;
  const dir = await Deno.makeTempDir({ prefix: "token-rotation-" });
  const secret = `${dir}/secret`;
  await writeSecretVolume(secret, { token: TEST_TOKEN + "\n" });
  const tls = await selfSignedServingCertificate("localhost");
  await Deno.writeTextFile(`${dir}/tls.crt`, tls.cert);
  await Deno.writeTextFile(`${dir}/tls.key`, tls.key);
  const port = freePort();
  const node = uniqueName("rotation-node");
  const services: string[] = [];
  await createServedNode(plane, cloud.simulator.sim.world, { name: node, address: "10.0.0.211" });
  const createService = async () => {
    const name = uniqueName("rotation");
    services.push(name);
    await kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
      body: { metadata: { name }, spec: { type: "LoadBalancer", ports: [{ port: 80 }] } },
    });
    const created = performance.now();
    await eventually(
      async () => (await serviceIngress(plane, "default", name)).length > 0,
      30_000,
      `${name}'s address`,
    );
    return { name, seconds: seconds(created, performance.now()) };
  };
  const replica = await startReplica([
    "--leader-elect=false",
    `--secure-port=${port}`,
    "--bind-address=127.0.0.1",
    `--tls-cert-file=${dir}/tls.crt`,
    `--tls-private-key-file=${dir}/tls.key`,
    "--metrics-authorization=none",
    "--cluster-name=rotation",
    "--controllers=service",
  ], {
    ANKRA_CLOUD_TOKEN_FILE: `${secret}/token`,
    ANKRA_CLOUD_API_URL: cloud.simulator.url,
    ANKRA_CLOUD_NETWORK_ID: "net-1",
  });
  let readiness: ReturnType<typeof sampleReadiness> | undefined;
  try {
    await replica.waitFor(/the Ankra Cloud API accepts the token/);
    const first = await createService();
    readiness = sampleReadiness(port, tls.ca);
    await eventually(() => readiness!.samples.some((s) => s.status === 200), 10_000, "/readyz green");

    // Rotated, then revoked: the documented order.
    assert.equal(
      (await fetch(control, { method: "POST", body: JSON.stringify({ token: SECOND_TOKEN, scope: "read_write" }) }))
        .status,
      201,
    );
    const swapped = performance.now();
    await writeSecretVolume(secret, { token: SECOND_TOKEN + "\n" });
    const switched = await replica.waitFor(/API token changed \(file .*\/token\), now using it/, 15_000);
    assert.equal((await fetch(`${control}/${TEST_TOKEN}`, { method: "DELETE" })).status, 204);
    const revoked = performance.now();
    const second = await createService();
    const secondAddressed = performance.now();
    const afterSecond = readiness.samples.length;
    assert.ok(
      readiness.samples.every((s) => s.status === 200),
      `/readyz failed during a rotation in the documented order:\n${
        readiness.samples.filter((s) => s.status !== 200).map((s) => s.text).join("\n")
      }`,
    );

    // Revoked before the new Secret arrives: not ready on the first 401, ready again once the file changes.
    assert.equal((await fetch(`${control}/${SECOND_TOKEN}`, { method: "DELETE" })).status, 204);
    const revokedFirst = performance.now();
    const third = uniqueName("rotation");
    services.push(third);
    await kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
      body: { metadata: { name: third }, spec: { type: "LoadBalancer", ports: [{ port: 80 }] } },
    });
    await eventually(
      () => readiness!.samples.slice(afterSecond).some((s) => s.status !== 200),
      15_000,
      "/readyz failing on the revoked token",
    );
    const notReady = readiness.samples.slice(afterSecond).find((s) => s.status !== 200)!;
    assert.match(notReady.text, /\[-\]ankra-cloud-credentials the Ankra Cloud API refuses the token/);
    assert.equal(
      (await fetch(control, { method: "POST", body: JSON.stringify({ token: THIRD_TOKEN, scope: "read_write" }) }))
        .status,
      201,
    );
    const lateSwap = performance.now();
    const afterSwap = readiness.samples.length;
    await writeSecretVolume(secret, { token: THIRD_TOKEN });
    await eventually(
      () => readiness!.samples.slice(afterSwap).some((s) => s.status === 200),
      15_000,
      "/readyz green again",
    );
    const readyAgain = readiness.samples.slice(afterSwap).find((s) => s.status === 200)!.at;
    // Retried as soon as the token changes, not after the work queue's backoff (which had grown to ~10 s here).
    await eventually(
      async () => (await serviceIngress(plane, "default", third)).length > 0,
      5_000,
      "third address within 5 s of the new Secret",
    );
    const thirdAddressed = performance.now();

    const log = replica.lines.map((l) => l.text).join("\n");
    for (const token of [TEST_TOKEN, SECOND_TOKEN, THIRD_TOKEN]) assert.ok(!log.includes(token), "no token in the log");
    assert.equal(
      replica.child.pid > 0 && (await Promise.race([replica.exited, Promise.resolve("running")])),
      "running",
    );
    console.log([
      `first Service address (old token): ${first.seconds} s`,
      `Secret swapped on disk → "API token changed" logged: ${seconds(swapped, switched)} s`,
      `old token revoked → second Service created and addressed: ${second.seconds} s (${
        seconds(revoked, secondAddressed)
      } s after the revocation); /readyz green in all ${afterSecond} samples`,
      `revoked before the new Secret: /readyz red ${seconds(revokedFirst, notReady.at)} s after the revocation`,
      `new Secret on disk → /readyz green: ${seconds(lateSwap, readyAgain)} s; → Service created during the outage ` +
      `addressed: ${seconds(lateSwap, thirdAddressed)} s`,
    ].join("\n"));
  } finally {
    await readiness?.stop();
    // Deleted while the controller runs, so it removes its finalizers.
    for (const name of services) {
      const path = `/api/v1/namespaces/default/services/${name}`;
      await kubeRequest(plane, "DELETE", path);
      await eventually(async () => (await kubeRequest(plane, "GET", path)).status === 404, 20_000).catch(() => {});
    }
    await stop(replica);
    await kubeRequest(plane, "DELETE", `/api/v1/nodes/${node}`);
    await Deno.remove(dir, { recursive: true });
  }
});
