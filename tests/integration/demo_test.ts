/**
 * The README's main job, `deno task demo`, runs to a Service address and cleans up after itself.
 */
import assert from "node:assert/strict";

Deno.test("the local demo initialises both nodes, gets the Service its address, and cleans up", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL("../../scripts/demo.ts", import.meta.url).pathname],
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
  assert.match(text, /Service default\/web has its address: 2001:db8:/);
  assert.match(text, /demo stopped; everything removed/);
  const kubeconfig = /--kubeconfig (\S+)/.exec(text)![1];
  assert.throws(() => Deno.statSync(kubeconfig), "the demo's control plane directory is removed");
});
