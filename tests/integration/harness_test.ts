/**
 * The test harness keeps its promises: a failed start names its logs; an interrupted or killed run leaves no
 * kube-apiserver or etcd behind and no temporary directory.
 */
import assert from "node:assert/strict";
import { findBinaries, startControlPlane } from "../support/control_plane/control_plane.ts";
import { eventually } from "../support/wait/eventually.ts";

const SCRIPT = new URL("../../scripts/with_control_plane.ts", import.meta.url).pathname;

/** PIDs of processes whose command line mentions `text`. */
function processesMentioning(text: string): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`);
      if (cmdline.includes(text) && !cmdline.includes("with_control_plane")) pids.push(Number(entry.name));
    } catch { /* gone */ }
  }
  return pids;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Starts `with_control_plane.ts -- sh -c 'echo $TEST_KUBE_DIR; sleep 120'` and returns once it is ready. */
async function startRunner(): Promise<{ child: Deno.ChildProcess; dir: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", SCRIPT, "--", "sh", "-c", 'echo "dir=$TEST_KUBE_DIR"; exec sleep 120'],
    stdout: "piped",
    stderr: "null",
    stdin: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!/dir=(\S+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`runner ended before it was ready: ${text}`);
    text += value;
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  return { child, dir: /dir=(\S+)/.exec(text)![1] };
}

Deno.test("a control plane that cannot start stops what it started and names its kept logs", async () => {
  const binaries = findBinaries();
  const fake = await Deno.makeTempFile({ prefix: "fake-apiserver-" });
  await Deno.writeTextFile(fake, "#!/bin/sh\necho 'fake apiserver: refusing to start' >&2\nexit 3\n");
  await Deno.chmod(fake, 0o755);
  try {
    await assert.rejects(
      startControlPlane({ binaries: { ...binaries, kubeApiserver: fake } }),
      (error: Error) => {
        assert.match(error.message, /kube-apiserver: kube-apiserver exited/);
        const log = /logs kept in (\S+)\/etcd\.log and (\S+kube-apiserver\.log)/.exec(error.message);
        assert.ok(log, error.message);
        assert.match(Deno.readTextFileSync(log[2]), /refusing to start/);
        assert.deepEqual(processesMentioning(log[1]), [], "etcd was stopped");
        Deno.removeSync(log[1], { recursive: true });
        return true;
      },
    );
  } finally {
    await Deno.remove(fake);
  }
});

Deno.test("an interrupted run stops kube-apiserver and etcd and removes its directory", async () => {
  const { child, dir } = await startRunner();
  assert.equal(processesMentioning(dir).length, 2, "etcd and kube-apiserver run");
  child.kill("SIGINT");
  await child.status;
  assert.deepEqual(processesMentioning(dir), []);
  assert.ok(!exists(dir), `${dir} was removed`);
});

Deno.test("a killed run leaves nothing behind: the watchdog stops the servers", async () => {
  const { child, dir } = await startRunner();
  child.kill("SIGKILL");
  await child.status;
  await eventually(() => processesMentioning(dir).length === 0, {
    timeoutMs: 15_000,
    intervalMs: 200,
    what: "servers outlived the runner: their end",
  });
  await Deno.remove(dir, { recursive: true }).catch(() => {});
});
