/**
 * The systemd unit's own `ExecStart` line runs the controller as two "hosts" would — its `Environment=` defaults, the
 * shipped environment file, `%d` as the credentials directory holding `token` and `kubeconfig`, the launcher replaced
 * by `deno run main.ts` with the launcher's permissions (lib/runtime_permissions.ts), the same program: one leads and
 * initialises a Node under the least-privilege kubeconfig of `write-kubeconfig.sh`, the other stands by and takes over
 * when the leader gets SIGTERM (exit code 0); `/metrics` answers the admin and refuses the controller's own identity.
 *
 * No systemd manager runs on this machine, so DynamicUser=, LoadCredential= and the sandboxing are exercised here by
 * their effects; tests/real/real_systemd_test.ts runs the unit under a real systemd in a container.
 */
import assert from "node:assert/strict";
import { runCommand } from "../support/systemd/command_output.ts";
import { freePort, testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { eventually } from "../support/wait/eventually.ts";
import { eventsFor, kubeletNode, kubeOk, kubeRequest } from "../support/http/kube_http.ts";
import { serverSeed, startTestCloud, testSeed } from "../support/cloud/simulator.ts";
import { prepareEtc, removeSystemdRbac } from "../support/systemd/systemd_install.ts";
import { prepareHost, readyz, type Service, startService } from "../support/systemd/systemd_service.ts";

Deno.test("the unit's ExecStart runs the controller: two hosts elect one leader, it initialises a node, the other takes over", async () => {
  const plane = testControlPlane();
  const cluster = uniqueName("systemd");
  const nodeName = uniqueName("systemd-node");
  await using cloud = await startTestCloud(testSeed());
  cloud.simulator.sim.world.addServer(
    serverSeed({ hostname: nodeName, zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }),
  );
  const dir = await Deno.makeTempDir({ prefix: "ccm-systemd-" });
  const services: Service[] = [];
  try {
    const etc = await prepareEtc(dir);
    const host = async (name: string, port: number): Promise<Service> => {
      const launch = await prepareHost(dir, name, etc, {
        CLUSTER_NAME: cluster,
        ANKRA_CLOUD_API_URL: cloud.simulator.url,
        EXTRA_ARGS: `--secure-port=${port} --bind-address=127.0.0.1`,
      });
      const service = startService(launch);
      services.push(service);
      return service;
    };

    const portA = freePort();
    const a = await host("host-a", portA);
    await eventually(async () => (await readyz(portA)).includes("[+]leader-election leading"), 30_000, "host A leads");
    await kubeOk(plane, "POST", "/api/v1/nodes", { body: kubeletNode(nodeName) });
    await eventually(
      async () =>
        Boolean(
          (await kubeOk<{ spec: { providerID?: string } }>(plane, "GET", `/api/v1/nodes/${nodeName}`)).spec
            .providerID,
        ),
      30_000,
      "node initialised under the least-privilege kubeconfig",
    );
    await eventually(
      async () => (await eventsFor(plane, nodeName)).some((e) => e.reason === "Synced"),
      10_000,
      "Synced event",
    );

    const portB = freePort();
    const b = await host("host-b", portB);
    await eventually(async () => (await readyz(portB)).includes("[+]leader-election standby"), 30_000, "B stands by");
    assert.match(await readyz(portA), /\[\+\]leader-election leading/);

    // /metrics is delegated: the admin may read it, the controller's own identity may not.
    const metrics = await runCommand("curl", [
      "-sk",
      "-H",
      `Authorization: Bearer ${plane.token}`,
      `https://127.0.0.1:${portA}/metrics`,
    ]);
    assert.match(metrics.stdout, /leader_election_master_status\{name="ankra-cloud-ccm"\} 1/);
    const ownToken = /token: (\S+)/.exec(await Deno.readTextFile(`${etc}/kubeconfig`))![1];
    const refused = await runCommand("curl", [
      "-sk",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      "-H",
      `Authorization: Bearer ${ownToken}`,
      `https://127.0.0.1:${portA}/metrics`,
    ]);
    assert.equal(refused.stdout, "403");

    // systemctl stop: SIGTERM, exit code 0, the Lease released — the standby leads at once.
    a.child.kill("SIGTERM");
    const stoppedA = await a.exited;
    assert.equal(stoppedA.code, 0, a.lines.join("\n"));
    await eventually(async () => (await readyz(portB)).includes("[+]leader-election leading"), 10_000, "B takes over");
    b.child.kill("SIGTERM");
    assert.equal((await b.exited).code, 0, b.lines.join("\n"));
    for (const s of [a, b]) {
      assert.ok(!s.lines.some((l) => /\b(ERROR|error)\b.*(forbidden|Forbidden)/.test(l)), s.lines.join("\n"));
    }
  } finally {
    for (const s of services) {
      try {
        s.child.kill("SIGKILL");
      } catch { /* stopped */ }
      await s.exited;
    }
    await kubeRequest(plane, "DELETE", `/api/v1/nodes/${nodeName}`);
    await kubeRequest(plane, "DELETE", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/ankra-cloud-ccm");
    await Deno.remove(dir, { recursive: true });
    await removeSystemdRbac();
  }
});
