/**
 * The decisions of the systemd-nspawn test harness, without booting anything.
 */
import assert from "node:assert/strict";
import {
  cgroupWrapperScript,
  containerCgroups,
  containerInit,
  isDynamicUid,
  nspawnArgs,
  parseProcessStatus,
  parseProcStat,
  parseSystemctlShow,
} from "../../support/systemd/nspawn_plan.ts";

Deno.test("nspawn boots the root read-only underneath, without asking the host's systemd, on the host's network", () => {
  const args = nspawnArgs({ rootfs: "/cache/root", machine: "ccm-1", stage: "/tmp/stage" });
  for (const flag of ["--boot", "--register=no", "--keep-unit", "--volatile=overlay", "--directory=/cache/root"]) {
    assert.ok(args.includes(flag), flag);
  }
  assert.ok(args.includes("--bind-ro=/tmp/stage:/mnt/stage"));
  assert.ok(!args.some((a) => a.startsWith("--private-network") || a.startsWith("--network")));
});

Deno.test("the container gets its own cgroup in each hierarchy the host mounts, never the hierarchies' roots", () => {
  const hybrid = ["blkio", "cpu", "memory", "systemd", "unified"];
  assert.deepEqual(containerCgroups("ccm-1", hybrid), [
    "/sys/fs/cgroup/systemd/ccm-1",
    "/sys/fs/cgroup/unified/ccm-1",
  ]);
  assert.deepEqual(containerCgroups("ccm-1", ["cgroup.procs", "cgroup.controllers", "init.scope"]), [
    "/sys/fs/cgroup/ccm-1",
  ]);
  const script = cgroupWrapperScript(["/sys/fs/cgroup/systemd/ccm-1", "/sys/fs/cgroup/unified/ccm-1"]);
  assert.equal(
    script,
    `echo $$ > '/sys/fs/cgroup/systemd/ccm-1/cgroup.procs' && echo $$ > '/sys/fs/cgroup/unified/ccm-1/cgroup.procs' && ` +
      `exec "$@" >>"$LOG" 2>&1`,
  );
});

Deno.test("the container's init is nspawn's child named systemd, not one of nspawn's own forks", () => {
  const fork = parseProcStat("101 (systemd-nspawn) S 100 101 100 0 -1");
  const other = parseProcStat("103 (systemd) S 1 103 103 0 -1");
  assert.equal(containerInit([fork], 100), undefined);
  const init = parseProcStat("102 (systemd) S 100 102 102 0 -1");
  assert.equal(containerInit([fork, other, init], 100), 102);
  assert.deepEqual(parseProcStat("7 (a) b (c)) S 1 7 7"), { pid: 7, comm: "a) b (c)", ppid: 1 });
  assert.throws(() => parseProcStat("garbage"), /not a \/proc\/<pid>\/stat line/);
});

Deno.test("systemctl show and /proc/<pid>/status read into the fields a test asserts on", () => {
  assert.deepEqual(parseSystemctlShow("MainPID=42\nExecMainStatus=2\nEnvironment=A=1 B=2\n"), {
    MainPID: "42",
    ExecMainStatus: "2",
    Environment: "A=1 B=2",
  });
  const status =
    "Name:\tdeno\nUid:\t64720\t64720\t64720\t64720\nNoNewPrivs:\t1\nSeccomp:\t2\nCapEff:\t0000000000000000\n";
  assert.deepEqual(parseProcessStatus(status), {
    uid: 64720,
    seccomp: 2,
    noNewPrivileges: true,
    effectiveCapabilities: "0000000000000000",
  });
  assert.throws(() => parseProcessStatus("Name:\tx\n"), /has no Uid: line/);
  assert.ok(isDynamicUid(61184) && isDynamicUid(65519));
  assert.ok(!isDynamicUid(65532) && !isDynamicUid(0) && !isDynamicUid(61183));
});
