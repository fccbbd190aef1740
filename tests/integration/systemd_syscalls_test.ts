/**
 * The released launcher (`scripts/build.sh`), run from the systemd unit's own command line as an unprivileged user
 * under strace while the node and service controllers work, makes only system calls the unit's `SystemCallFilter=`
 * allows, opens only the socket families of `RestrictAddressFamilies=` and never maps memory writable and executable
 * (`MemoryDenyWriteExecute=yes`).
 *
 * No systemd manager runs on this machine, so DynamicUser=, LoadCredential= and the sandboxing are exercised here by
 * their effects; tests/real/real_systemd_test.ts runs the unit under a real systemd in a container.
 */
import assert from "node:assert/strict";
import { runCommand } from "../support/systemd/command_output.ts";
import { freePort, testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { eventually } from "../support/wait/eventually.ts";
import { kubeletNode, kubeOk, kubeRequest, serviceIngress } from "../support/http/kube_http.ts";
import { controllerTarball } from "../support/image/release_build.ts";
import { serverSeed, startTestCloud, testSeed } from "../support/cloud/simulator.ts";
import { prepareEtc, removeSystemdRbac, systemdAnalyze, UNIT } from "../support/systemd/systemd_install.ts";
import { prepareHost, type Service, spawnCaptured } from "../support/systemd/systemd_service.ts";
import { parseUnit } from "../support/systemd/systemd_unit_file.ts";

/** The system calls a `SystemCallFilter=` list allows, from the unit's lines (`systemd-analyze syscall-filter`). */
async function allowedSystemCalls(filterLines: string[]): Promise<Set<string>> {
  const analyze = systemdAnalyze();
  const cache = new Map<string, string[]>();
  const expand = async (item: string): Promise<string[]> => {
    if (!item.startsWith("@")) return [item];
    if (!cache.has(item)) {
      const out = await runCommand(analyze, ["syscall-filter", "--no-pager", item]);
      assert.equal(out.code, 0, out.stderr);
      const names: string[] = [];
      for (const line of out.stdout.split("\n").slice(1)) {
        const entry = /^ {4}(\S+)/.exec(line)?.[1];
        if (entry) names.push(...await expand(entry));
      }
      cache.set(item, names);
    }
    return cache.get(item)!;
  };
  const allowed = new Set<string>();
  for (const [index, line] of filterLines.entries()) {
    const deny = line.startsWith("~");
    assert.ok(index > 0 || !deny, "the first SystemCallFilter= line is an allow list");
    for (const item of line.replace(/^~/, "").split(/\s+/).filter(Boolean)) {
      for (const name of await expand(item)) deny ? allowed.delete(name) : allowed.add(name);
    }
  }
  return allowed;
}

Deno.test({
  name: "the released launcher, run as the unit runs it, stays within its system call filter and address families, " +
    "and never makes memory executable",
  // Runs the launcher as another user (setpriv), which needs root, as CI has.
  ignore: Deno.uid() !== 0,
  async fn() {
    const plane = testControlPlane();
    const dir = await Deno.makeTempDir({ prefix: "ccm-systemd-strace-" });
    await Deno.chmod(dir, 0o755);
    const nodeName = uniqueName("strace-node");
    const serviceName = uniqueName("strace-web");
    await using cloud = await startTestCloud(testSeed());
    cloud.simulator.sim.world.addServer(
      serverSeed({ hostname: nodeName, zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }),
    );
    let service: Service | undefined;
    try {
      // The release tarball (built once per test run), installed read-only as the guide installs it in /opt.
      const tarball = await controllerTarball();
      const base = tarball.directory;
      await Deno.mkdir(`${dir}/opt`);
      const untar = await runCommand("tar", ["-xzf", tarball.path, "-C", `${dir}/opt`]);
      assert.equal(untar.code, 0, untar.stderr);
      await runCommand("chmod", ["-R", "a-w", `${dir}/opt`]);
      const launcher = `${dir}/opt/${base}/bin/ankra-cloud-ccm`;

      const etc = await prepareEtc(dir);
      const port = freePort();
      const launch = await prepareHost(dir, "host", etc, {
        CLUSTER_NAME: uniqueName("strace"),
        // A host name, so name resolution (NSS, /etc/hosts) is traced too.
        ANKRA_CLOUD_API_URL: cloud.simulator.url.replace("127.0.0.1", "localhost"),
        EXTRA_ARGS: `--secure-port=${port} --bind-address=127.0.0.1`,
      });
      // The credentials belong to the service's user, as systemd hands them to a DynamicUser= service.
      await runCommand("chown", ["-R", "65532:65532", launch.credentialsDir]);
      await Deno.chmod(launch.credentialsDir, 0o500);
      await Deno.chmod(`${dir}/host`, 0o755);

      const trace = `${dir}/trace.txt`;
      const argv = [launcher, ...launch.argv.slice(1)];
      service = spawnCaptured("strace", [
        "-f",
        "-qq",
        "-o",
        trace,
        "setpriv",
        "--reuid=65532",
        "--regid=65532",
        "--clear-groups",
        ...argv,
      ], { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", ...launch.env });

      // Exercise the node and service controllers, then stop as systemctl stop does.
      await kubeOk(plane, "POST", "/api/v1/nodes", { body: kubeletNode(nodeName) });
      await eventually(
        async () =>
          Boolean(
            (await kubeOk<{ spec: { providerID?: string } }>(plane, "GET", `/api/v1/nodes/${nodeName}`)).spec
              .providerID,
          ),
        60_000,
        "node initialised by the released launcher",
      );
      await kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
        body: { metadata: { name: serviceName }, spec: { type: "LoadBalancer", ports: [{ port: 80 }] } },
      });
      await eventually(
        async () => (await serviceIngress(plane, "default", serviceName)).length > 0,
        30_000,
        "service address",
      );
      await kubeOk(plane, "DELETE", `/api/v1/namespaces/default/services/${serviceName}`);
      await eventually(
        async () =>
          (await kubeRequest(plane, "GET", `/api/v1/namespaces/default/services/${serviceName}`)).status === 404,
        30_000,
        "load balancer deleted and finalizer removed",
      );
      const lines = (await Deno.readTextFile(trace)).split("\n");
      const pid = Number(/^(\d+)\s/.exec(lines[0])![1]);
      Deno.kill(pid, "SIGTERM");
      const status = await service.exited;
      assert.equal(status.code, 0, service.lines.join("\n"));

      // Only what the launcher and the program do: the lines after setpriv executed the launcher.
      const all = (await Deno.readTextFile(trace)).split("\n");
      const start = all.findIndex((l) => l.startsWith(`${pid} `) && l.includes(`execve("${launcher}"`));
      assert.ok(start >= 0, "the trace shows the launcher being executed");
      const calls = all.slice(start).map((l) => /^\d+\s+([a-z0-9_]+)\(/.exec(l)?.[1]).filter((n) => n !== undefined);
      const used = new Set(calls);
      const unit = parseUnit(await Deno.readTextFile(UNIT)).filter((e) => e.section === "Service");
      const allowed = await allowedSystemCalls(unit.filter((e) => e.key === "SystemCallFilter").map((e) => e.value));
      assert.deepEqual([...used].filter((n) => !allowed.has(n)).sort(), [], "system calls outside SystemCallFilter=");
      assert.ok(!used.has("io_uring_setup"));

      const families = new Set(unit.find((e) => e.key === "RestrictAddressFamilies")!.value.split(/\s+/));
      const opened = new Set(all.slice(start).flatMap((l) => /\ssocket\((AF_[A-Z0-9]+)/.exec(l)?.[1] ?? []));
      assert.deepEqual(
        [...opened].filter((f) => !families.has(f)),
        [],
        "socket families outside RestrictAddressFamilies=",
      );

      assert.equal(unit.find((e) => e.key === "MemoryDenyWriteExecute")?.value, "yes");
      const executable = all.slice(start).filter((l) =>
        (/\smmap\(.*PROT_WRITE\|PROT_EXEC|\smmap\(.*PROT_EXEC\|PROT_WRITE/.test(l)) ||
        /\s(pkey_)?mprotect\(.*PROT_EXEC/.test(l) || /\sshmat\(/.test(l)
      );
      assert.deepEqual(executable, [], "MemoryDenyWriteExecute=yes would refuse these");
    } finally {
      if (service) {
        try {
          service.child.kill("SIGKILL");
        } catch { /* stopped */ }
        await service.exited;
      }
      await kubeRequest(plane, "DELETE", `/api/v1/nodes/${nodeName}`);
      await kubeRequest(plane, "DELETE", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/ankra-cloud-ccm");
      await Deno.remove(dir, { recursive: true });
      await removeSystemdRbac();
    }
  },
});
