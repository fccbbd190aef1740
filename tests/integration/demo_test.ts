/**
 * The README's main job, `deno task demo`: it runs to a Service address without a Warning on the way and a request to
 * that address answered by a Node through the load balancer, and Ctrl-C at any moment ends it with exit code 0,
 * removing everything it made but the controller's log.
 */
import assert from "node:assert/strict";

const DEMO = new URL("../../scripts/demo.ts", import.meta.url).pathname;

function controlPlaneDirs(): Set<string> {
  const tmp = Deno.env.get("TMPDIR") ?? "/tmp";
  return new Set([...Deno.readDirSync(tmp)].filter((e) => e.name.startsWith("ccm-control-plane-")).map((e) => e.name));
}

Deno.test("the local demo initialises both nodes, gets the Service its address without a Warning from the controller, a request through it answered, and cleans up", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", DEMO],
    env: { DEMO_EXIT_WHEN_READY: "1" },
    stdout: "piped",
    stderr: "null",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  assert.equal(output.code, 0, text);
  assert.match(text, /node worker-1 initialised: ankracloud:\/\/de-fsn1\//);
  assert.match(text, /node worker-2 initialised: ankracloud:\/\/de-fsn1\//);
  assert.match(text, /load balancer k8s-demo-default-web \(\S+\) is creating/);
  assert.match(text, /load balancer k8s-demo-default-web \(\S+\) is running/);
  // An IPv4 Service: its public IPv4 (the loopback range) first, then the IPv6.
  assert.match(text, /Service default\/web has its address: 127\.\d+\.\d+\.\d+, 2001:db8:/);
  assert.match(text, /no Warning events from the controller on the way/);
  const answered = /request to (http:\/\/127\.\S+:8080\/) answered through the load balancer: hello from (worker-[12]) /
    .exec(text);
  assert.ok(answered, `a request through the Service's IPv4 is answered by a Node:\n${text}`);
  assert.ok(text.includes(`  curl ${answered[1]} `), "the demo prints the request for the user to repeat");
  assert.match(text, /\/kubectl --kubeconfig \S+ get nodes,services -o wide/, "the hint uses the kubectl it built");
  const kept = /everything removed except the controller's log: (\S+)/.exec(text)![1];
  assert.match(await Deno.readTextFile(kept), /initialised node/, "the controller's log is kept on purpose");
  await Deno.remove(kept);
  const kubeconfig = /--kubeconfig (\S+)/.exec(text)![1];
  assert.throws(() => Deno.statSync(kubeconfig), "the demo's control plane directory (CA key included) is removed");
});

/** A directory of links to the commands the prerequisites check finds, all but `without`: a PATH for a machine lacking it. */
function pathWithout(without: string): string {
  const dir = Deno.makeTempDirSync({ prefix: "ccm-demo-path-" });
  for (const command of ["bash", "dirname", "id", "go", "npm", "openssl", "haproxy", "cat", "head", "cut", "stat"]) {
    if (command === without) continue;
    const found = (Deno.env.get("PATH") ?? "").split(":").concat(["/usr/sbin", "/sbin"]).map((d) => `${d}/${command}`)
      .find((p) => {
        try {
          return Deno.statSync(p).isFile;
        } catch {
          return false;
        }
      });
    if (found) Deno.symlinkSync(found, `${dir}/${command}`);
  }
  return dir;
}

Deno.test("on a machine without HAProxy the demo stops before building anything and names the command that installs it", async () => {
  const path = pathWithout("haproxy");
  try {
    const started = performance.now();
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", DEMO],
      env: { PATH: path, PREREQUISITES_SBIN_DIRS: "" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const seconds = (performance.now() - started) / 1000;
    const stdout = new TextDecoder().decode(output.stdout);
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 1, `${stdout}\n${stderr}`);
    assert.match(stderr, /haproxy \(Debian package haproxy\): the simulator's load balancers/);
    assert.match(stderr, /sudo apt-get install -y --no-install-recommends haproxy$/m, "the exact install command");
    assert.match(stderr, /stopped before building anything/);
    assert.doesNotMatch(stdout, /building or finding kube-apiserver/, "nothing is built");
    assert.ok(seconds < 30, `it stops at once (${seconds.toFixed(1)} s)`);
  } finally {
    Deno.removeSync(path, { recursive: true });
  }
});

/** Reads `reader` until `text` matches `until` (or the stream ends, or `timeoutMs` passes). */
async function readUntil(
  reader: ReadableStreamDefaultReader<string>,
  text: { value: string },
  until: RegExp | undefined,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(until?.test(text.value))) {
    const timeout = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), deadline - Date.now()));
    const next = await Promise.race([reader.read(), timeout]);
    if (next === "timeout") return false;
    if (next.done) return until === undefined;
    text.value += next.value;
  }
  return true;
}

Deno.test("Ctrl-C ends the demo with exit code 0 and removes what it made, whenever it comes", async () => {
  for (
    const after of [/Kubernetes API ready/, /Service default\/web of type LoadBalancer created/, /has its address/]
  ) {
    const before = controlPlaneDirs();
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", DEMO],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const text = { value: "" };
    const reached = await readUntil(reader, text, after, 90_000);
    child.kill("SIGINT");
    const ended = await readUntil(reader, text, undefined, 60_000);
    if (!ended) child.kill("SIGKILL");
    const status = await child.status;
    assert.ok(reached, `the demo never printed ${after}:\n${text.value}`);
    assert.ok(ended, `the demo did not end within 60 s of Ctrl-C after ${after}:\n${text.value}`);
    assert.equal(status.code, 0, `Ctrl-C after ${after}: exit ${status.code}\n${text.value}`);
    const left = [...controlPlaneDirs()].filter((d) => !before.has(d));
    assert.deepEqual(left, [], `Ctrl-C after ${after} left ${left.join(", ")}`);
    const kept = /except the controller's log: (\S+)/.exec(text.value)?.[1];
    assert.ok(kept, text.value);
    await Deno.remove(kept).catch(() => {});
  }
});
