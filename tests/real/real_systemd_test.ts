/**
 * The shipped systemd unit run by a real systemd: a Debian 12 root (scripts/systemd_rootfs.sh) booted with
 * systemd-nspawn, whose PID 1 is systemd 252, on the host's network. Inside it the release tarball is installed in /opt
 * and the unit, the env file, the token and a least-privilege kubeconfig (deploy/systemd/write-kubeconfig.sh) in /etc
 * exactly as docs/systemd.md says; the unit and the env file are the repository's, the env file with the settings an
 * operator appends. The controller talks to the test control plane and the simulator on 127.0.0.1.
 *
 * Needs root and systemd-nspawn (.ci/run installs both); elsewhere the test is ignored with the reason printed.
 * `MemoryMax=` is not checked: see docs/systemd.md.
 *
 * @module
 */
import assert from "node:assert/strict";
import { freePort, testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { kubeletNode, kubeOk, kubeRequest, serviceIngress } from "../support/http/kube_http.ts";
import { eventually } from "../support/controller/node_controllers.ts";
import { bootNspawn, type NspawnMachine, nspawnUnavailable, systemdRootfs } from "../support/systemd/nspawn_machine.ts";
import { isDynamicUid, parseProcessStatus, STAGE_MOUNT } from "../support/systemd/nspawn_plan.ts";
import { controllerTarball } from "../support/image/release_build.ts";
import { serverSeed, startTestCloud, TEST_TOKEN, testSeed } from "../support/cloud/simulator.ts";
import { VERSION } from "../../lib/version.ts";

const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const SYSTEMD_DIR = `${ROOT}/deploy/systemd`;
const UNIT = "ankra-cloud-ccm.service";
const PROBE_UNIT = "ankra-cloud-ccm-probe.service";
const PROBE_OUTPUT = "/run/ankra-cloud-ccm-probe.out";
const CREDENTIALS = `/run/credentials/${UNIT}`;
const LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/ankra-cloud-ccm";
const unavailable = nspawnUnavailable();
if (unavailable) console.log(`real_systemd_test: ignored: ${unavailable}`);

function seconds(since: number): string {
  return `${((performance.now() - since) / 1000).toFixed(1)} s`;
}

async function run(command: string, args: string[], env?: Record<string, string>) {
  const out = await new Deno.Command(command, { args, env, stdout: "piped", stderr: "piped" }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

function kubectl(): string {
  const dir = Deno.env.get("KUBEBUILDER_ASSETS");
  return dir ? `${dir}/kubectl` : "kubectl";
}

async function readyz(port: number): Promise<string> {
  return (await run("curl", ["-sk", "--max-time", "5", `https://127.0.0.1:${port}/readyz?verbose`])).stdout;
}

async function leaseHolder(): Promise<string> {
  const lease = await kubeRequest<{ spec: { holderIdentity?: string } }>(testControlPlane(), "GET", LEASE);
  return lease.status === 200 ? lease.body.spec.holderIdentity ?? "" : "";
}

/** The stage bound at /mnt/stage: the release tarball, the repository's unit and env file, token and kubeconfig. */
async function prepareStage(dir: string, settings: Record<string, string>): Promise<string> {
  const plane = testControlPlane();
  const tarball = await controllerTarball();
  await Deno.copyFile(tarball.path, `${dir}/release.tar.gz`);
  await Deno.copyFile(`${SYSTEMD_DIR}/${UNIT}`, `${dir}/${UNIT}`);
  const lines = Object.entries(settings).map(([key, value]) => `${key}=${value}`).join("\n");
  await Deno.writeTextFile(
    `${dir}/ankra-cloud-ccm.env`,
    `${await Deno.readTextFile(`${SYSTEMD_DIR}/ankra-cloud-ccm.env`)}\n${lines}\n`,
  );
  await Deno.writeTextFile(`${dir}/token`, `${TEST_TOKEN}\n`, { mode: 0o600 });
  const written = await run("sh", [
    `${SYSTEMD_DIR}/write-kubeconfig.sh`,
    `--admin-kubeconfig=${plane.kubeconfigPath}`,
    `--output=${dir}/kubeconfig`,
    "--token-source=request",
    "--duration=1h",
  ], { KUBECTL: kubectl(), PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" });
  assert.equal(written.code, 0, written.stderr);
  return tarball.directory;
}

/** docs/systemd.md sections 1, 2 and 4, run in the container, plus a world-writable directory outside its state. */
function installScript(release: string): string {
  return `set -e
tar -xzf ${STAGE_MOUNT}/release.tar.gz -C /opt
ln -sfn /opt/${release} /opt/ankra-cloud-ccm
/opt/ankra-cloud-ccm/bin/ankra-cloud-ccm --version
install -d -m 0755 /etc/ankra-cloud-ccm
install -m 0644 ${STAGE_MOUNT}/ankra-cloud-ccm.env /etc/ankra-cloud-ccm/ankra-cloud-ccm.env
install -m 0600 ${STAGE_MOUNT}/token /etc/ankra-cloud-ccm/token
install -m 0600 ${STAGE_MOUNT}/kubeconfig /etc/ankra-cloud-ccm/kubeconfig
install -d -m 1777 /srv/open
install -m 0644 ${STAGE_MOUNT}/${UNIT} /etc/systemd/system/${UNIT}
systemctl daemon-reload
systemctl enable --now ${UNIT}
`;
}

/**
 * A copy of the shipped unit whose only change is its command: `probe` runs once under exactly the same sandbox, its
 * output in {@linkcode PROBE_OUTPUT} (a file systemd opens for it, complete when `systemctl start` returns).
 */
function probeUnitScript(probe: string): string {
  return `set -e
cp /etc/systemd/system/${UNIT} /etc/systemd/system/${PROBE_UNIT}
mkdir -p /etc/systemd/system/${PROBE_UNIT}.d
printf '[Service]\\nType=oneshot\\nRestart=no\\nStandardOutput=truncate:%s\\nStandardError=inherit\\nExecStart=\\nExecStart=/bin/sh -c "%s"\\n' \\
  '${PROBE_OUTPUT}' '${probe}' > /etc/systemd/system/${PROBE_UNIT}.d/probe.conf
systemctl daemon-reload
systemctl start ${PROBE_UNIT}
cat ${PROBE_OUTPUT}
`;
}

async function mainPid(machine: NspawnMachine): Promise<number> {
  return Number((await machine.show(UNIT)).MainPID);
}

Deno.test({
  name: "the shipped unit under a real systemd runs the released controller as a dynamic user with its credentials, " +
    "survives kill -9, refuses writes outside its state and stays failed on a bad flag",
  ignore: unavailable !== undefined,
  async fn(t) {
    const started = performance.now();
    const plane = testControlPlane();
    const cluster = uniqueName("real-systemd");
    const nodeName = uniqueName("real-systemd-node");
    const serviceName = uniqueName("real-systemd-web");
    const port = freePort();
    await using cloud = await startTestCloud(testSeed());
    cloud.simulator.sim.world.addServer(
      serverSeed({ hostname: nodeName, zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }),
    );
    const stage = await Deno.makeTempDir({ prefix: "ccm-real-systemd-" });
    let machine: NspawnMachine | undefined;
    let failed = false;
    const step = async (name: string, fn: () => Promise<void>) => {
      if (!await t.step(name, fn)) failed = true;
    };
    try {
      let phase = performance.now();
      const rootfs = await systemdRootfs();
      const release = await prepareStage(stage, {
        CLUSTER_NAME: cluster,
        // A host name, so that name resolution runs inside the sandbox too.
        ANKRA_CLOUD_API_URL: cloud.simulator.url.replace("127.0.0.1", "localhost"),
        EXTRA_ARGS: `--secure-port=${port} --bind-address=127.0.0.1`,
      });
      console.log(`real_systemd_test: root file system and release ready in ${seconds(phase)}`);
      phase = performance.now();
      machine = await bootNspawn(rootfs, stage);
      const box = machine;
      console.log(`real_systemd_test: container booted in ${seconds(phase)}`);

      let pid = 0;
      let uid = 0;
      await step("installed as the guide says, the unit starts the released launcher", async () => {
        const installed = await box.exec(["sh", "-c", installScript(release)]);
        assert.equal(installed.code, 0, installed.stdout + installed.stderr);
        assert.match(installed.stdout, new RegExp(`^ankra-cloud-ccm v?${VERSION.replace(/\./g, "\\.")}$`, "m"));
        await eventually(async () => (await box.show(UNIT)).SubState === "running", 30_000, "service running");
        pid = await mainPid(box);
        const cmdline = await box.execOk(["cat", `/proc/${pid}/cmdline`]);
        assert.ok(cmdline.includes(`--kubeconfig=${CREDENTIALS}/kubeconfig`), cmdline.replaceAll("\0", " "));
      });

      await step("it runs as a dynamic user, under its seccomp filter, with no capabilities", async () => {
        const status = parseProcessStatus(await box.execOk(["cat", `/proc/${pid}/status`]));
        uid = status.uid;
        assert.ok(isDynamicUid(uid), `uid ${uid} is not a DynamicUser= uid`);
        assert.equal(status.seccomp, 2);
        assert.ok(status.noNewPrivileges);
        assert.match(status.effectiveCapabilities, /^0+$/);
        assert.match(await box.execOk(["getent", "passwd", String(uid)]), /^ankra-cloud-ccm:/);
        const owner = await box.execOk(["stat", "-c", "%u %a", `${CREDENTIALS}/token`, `${CREDENTIALS}/kubeconfig`]);
        assert.equal(owner, `${uid} 400\n${uid} 400\n`);
        const seen = await box.execOk(["sh", "-c", `cat /proc/${pid}/cmdline /proc/${pid}/environ`]);
        assert.ok(!seen.includes(TEST_TOKEN), "the token is neither in the command line nor in the environment");
      });

      await step("it leads, initialises a Node and gives a LoadBalancer Service its address", async () => {
        await eventually(async () => (await readyz(port)).includes("[+]leader-election leading"), 30_000, "leading");
        assert.notEqual(await leaseHolder(), "");
        await kubeOk(plane, "POST", "/api/v1/nodes", { body: kubeletNode(nodeName) });
        await eventually(
          async () => {
            const node = await kubeOk<{ spec: { providerID?: string; taints?: { key: string }[] } }>(
              plane,
              "GET",
              `/api/v1/nodes/${nodeName}`,
            );
            return Boolean(node.spec.providerID) &&
              !node.spec.taints?.some((taint) => taint.key === "node.cloudprovider.kubernetes.io/uninitialized");
          },
          30_000,
          "node initialised",
        );
        await kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
          body: { metadata: { name: serviceName }, spec: { type: "LoadBalancer", ports: [{ port: 80 }] } },
        });
        await eventually(
          async () => (await serviceIngress(plane, "default", serviceName)).length > 0,
          30_000,
          "ingress",
        );
        await kubeOk(plane, "DELETE", `/api/v1/namespaces/default/services/${serviceName}`);
        await eventually(
          async () =>
            (await kubeRequest(plane, "GET", `/api/v1/namespaces/default/services/${serviceName}`)).status === 404,
          30_000,
          "load balancer deleted and the finalizer removed with the Service",
        );
      });

      await step(
        "inside its own mount namespace, writes outside its state fail with Read-only file system",
        async () => {
          const write = (path: string) =>
            box.exec([
              "nsenter",
              "-t",
              String(pid),
              "-m",
              "-S",
              String(uid),
              "-G",
              String(uid),
              "sh",
              "-c",
              `: > ${path}`,
            ]);
          // /srv/open is world-writable (mode 1777): there, file permissions cannot be the reason.
          for (const dir of ["/srv/open", "/usr", "/etc/ankra-cloud-ccm", "/opt/ankra-cloud-ccm", "/var/lib"]) {
            const refused = await write(`${dir}/probe`);
            assert.notEqual(refused.code, 0, `${dir} was writable`);
            assert.match(refused.stderr, /Read-only file system/, `${dir}: ${refused.stderr}`);
          }
          const tmp = await write("/tmp/probe");
          assert.equal(tmp.code, 0, `its private /tmp stays writable: ${tmp.stderr}`);
        },
      );

      await step("its system call filter refuses setpriority with EPERM", async () => {
        // Any user may raise its own niceness: without the filter, the dynamic user's nice succeeds silently.
        const unfiltered = await box.exec([
          "setpriv",
          `--reuid=${uid}`,
          `--regid=${uid}`,
          "--clear-groups",
          "nice",
          "-n",
          "5",
          "true",
        ]);
        assert.equal(unfiltered.stderr, "");
        const probe = await box.exec(["sh", "-c", probeUnitScript("nice -n 5 true")]);
        assert.equal(probe.code, 0, probe.stdout + probe.stderr);
        assert.match(probe.stdout, /nice: cannot set niceness: Operation not permitted/);
      });

      await step("killed with SIGKILL, systemd restarts it and it leads again", async () => {
        const before = await leaseHolder();
        const killed = performance.now();
        await box.execOk(["kill", "-9", String(pid)]);
        await eventually(
          async () => {
            const show = await box.show(UNIT);
            return show.NRestarts === "1" && show.SubState === "running" && Number(show.MainPID) !== pid;
          },
          20_000,
          "restarted by systemd",
        );
        console.log(`real_systemd_test: restarted ${seconds(killed)} after kill -9`);
        // The dead instance's Lease has to run out first (15 s).
        await eventually(
          async () => (await readyz(port)).includes("[+]leader-election leading"),
          60_000,
          "leads again",
        );
        const after = await leaseHolder();
        assert.notEqual(after, before, "a new identity holds the Lease");
        console.log(`real_systemd_test: leading again ${seconds(killed)} after kill -9`);
      });

      await step("systemctl stop exits cleanly, releases the Lease and removes the credentials", async () => {
        await box.execOk(["systemctl", "stop", UNIT]);
        const show = await box.show(UNIT);
        assert.equal(`${show.ActiveState}/${show.Result}`, "inactive/success");
        assert.equal(await leaseHolder(), "");
        assert.notEqual((await box.exec(["test", "-e", CREDENTIALS])).code, 0, "credentials removed");
        // Neither the sandbox nor its RBAC refused it anything while it ran.
        const refusals = (await box.journal(UNIT)).split("\n").filter((line) =>
          /not permitted|bad system call|permission denied|forbidden|NotCapable/i.test(line)
        );
        assert.deepEqual(refusals, []);
      });

      await step("a bad flag in EXTRA_ARGS: exit 2, the unit failed and not restarted", async () => {
        await box.execOk(["sh", "-c", "echo EXTRA_ARGS=--no-such-flag >> /etc/ankra-cloud-ccm/ankra-cloud-ccm.env"]);
        await box.exec(["systemctl", "start", UNIT]);
        await eventually(async () => (await box.show(UNIT)).ActiveState === "failed", 30_000, "unit failed");
        const show = await box.show(UNIT);
        // With a restart pending the unit would be activating/auto-restart; failed/failed means none is scheduled.
        assert.deepEqual(
          [show.SubState, show.Result, show.ExecMainStatus, show.NRestarts],
          ["failed", "exit-code", "2", "0"],
        );
        // The journal takes the line a moment after systemd has seen the exit.
        await eventually(
          async () => /unknown flag --no-such-flag/.test(await box.journal(UNIT)),
          10_000,
          "the journal naming the flag",
        );
      });
    } catch (cause) {
      failed = true;
      throw cause;
    } finally {
      if (machine && failed) {
        console.log(`--- journal of ${UNIT} in the container ---\n${await machine.journal(UNIT)}`);
        console.log(`--- journal of ${PROBE_UNIT} ---\n${await machine.journal(PROBE_UNIT)}`);
      }
      if (machine && failed) console.log(`--- nspawn console (${machine.name}) ---\n${await machine.console()}`);
      await machine?.[Symbol.asyncDispose]();
      // Left over only when a step failed: without its controller, only its finalizer keeps it.
      await kubeRequest(plane, "PATCH", `/api/v1/namespaces/default/services/${serviceName}`, {
        body: { metadata: { finalizers: null } },
      });
      await kubeRequest(plane, "DELETE", `/api/v1/namespaces/default/services/${serviceName}`);
      await kubeRequest(plane, "DELETE", `/api/v1/nodes/${nodeName}`);
      await kubeRequest(plane, "DELETE", LEASE);
      await run(kubectl(), [
        `--kubeconfig=${plane.kubeconfigPath}`,
        "delete",
        "--ignore-not-found",
        "--wait=false",
        "-f",
        `${SYSTEMD_DIR}/rbac.yaml`,
      ]);
      await kubeRequest(plane, "DELETE", "/api/v1/namespaces/kube-system/secrets/ankra-cloud-ccm-token");
      await Deno.remove(stage, { recursive: true });
      console.log(`real_systemd_test: ${seconds(started)} in all`);
    }
  },
});
