/**
 * `ankra-cloud-ccm cleanup` end to end (`main.ts cleanup` as a process, the real kube-apiserver, the simulator): a
 * cluster with three load balancers and members on a combined edge, beside another cluster with the same
 * `--cluster-name` and a hand-made edge member. The dry run prints the plan and changes nothing; with the kubeconfig,
 * the cluster's load balancers go, its edge members go, its Services lose the finalizer, and everything of the other
 * cluster and the hand-made member stay; by name alone, two clusters with the name make it stop and name both, and
 * `--cluster-uid` picks the other one.
 */
import { CLUSTER_UID_LABEL } from "../../lib/ankra_names.ts";
import assert from "node:assert/strict";
import { isNotFound } from "../../lib/cloud/errors.ts";
import { loadBalancerLabels } from "../../lib/provider/service/load_balancer_names.ts";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { eventually } from "../support/wait/eventually.ts";
import { startServiceController } from "../support/controller/service_controller.ts";
import {
  createNodes,
  createService,
  deleteNodes,
  deleteService,
  FINALIZER,
  getService,
  ingressIps,
  NS,
} from "../support/controller/service_fixtures.ts";
import { createLabelledLoadBalancer, TEST_TOKEN, testSeed } from "../support/cloud/simulator.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

/** `main.ts cleanup` with `args` against the simulator at `apiUrl`; its exit code and output. */
async function cleanup(apiUrl: string, args: string[]) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, "cleanup", ...args],
    env: { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_TOKEN_FILE: "", ANKRA_CLOUD_API_URL: apiUrl },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, text: decoder.decode(output.stdout) + decoder.decode(output.stderr) };
}

Deno.test("cleanup removes a cluster's load balancers and edge members, and nothing of another cluster", async () => {
  await using env = await startServiceController({
    seed: testSeed({
      edges: [{
        id: "edge-1",
        network_id: "net-1",
        roles: ["load_balancer"],
        placement: "combined",
        members: [{ name: "hand-made", frontend_port: 8443, address: "10.0.0.99", port: 443 }],
      }],
    }),
  });
  const { sim, url } = env.cloud.simulator;
  const nodes = await createNodes(1);
  const names = [uniqueName("a"), uniqueName("b"), uniqueName("c")];
  const onEdge = uniqueName("edge");
  for (const name of names) await createService(name);
  await createService(onEdge, { annotations: { "load-balancer.ankra.cloud/edge": "edge-1" } });
  try {
    for (const name of [...names, onEdge]) {
      await eventually(async () => ingressIps(await getService(name)).length > 0, 20_000, `${name}'s address`);
    }
    const ours = [...sim.loadBalancers.items.keys()];
    assert.equal(ours.length, 3);
    const twin = await createLabelledLoadBalancer(env.cloud, "k8s-test-default-twin", {
      ...loadBalancerLabels("test", NS, names[0]),
      [CLUSTER_UID_LABEL]: "uid-of-another-cluster",
    });
    // The cluster is torn down without deleting its Services: the controller stops first.
    await env.stopController();
    const kubeconfig = `--kubeconfig=${testControlPlane().kubeconfigPath}`;

    const dry = await cleanup(url, ["--cluster-name=test", kubeconfig, "--dry-run"]);
    assert.equal(dry.code, 0, dry.text);
    for (const id of ours) assert.match(dry.text, new RegExp(`would delete load balancer ${id} `));
    assert.match(dry.text, /would remove 1 member\(s\) of this cluster from edge edge-1 \(.*\), keep 1/);
    assert.match(dry.text, /left alone: 1 load balancer\(s\) of another cluster with --cluster-name test/);
    assert.equal(sim.count("delete_load_balancer"), 0, "a dry run changes nothing");

    const done = await cleanup(url, ["--cluster-name=test", kubeconfig]);
    assert.equal(done.code, 0, done.text);
    assert.match(done.text, /done: 3 load balancer\(s\) deleting, 1 edge\(s\) updated/);
    for (const id of ours) {
      await eventually(
        () => env.cloud.client.getLoadBalancer(id).then(() => false, (cause) => isNotFound(cause)),
        10_000,
        `${id} gone`,
      );
    }
    assert.ok((await env.cloud.client.getLoadBalancer(twin)).id, "the other cluster's load balancer stays");
    assert.deepEqual(sim.edges.get("edge-1").members.map((m) => m.name), ["hand-made"]);
    for (const name of [...names, onEdge]) {
      const service = await getService(name);
      assert.ok(
        !(service.metadata?.finalizers ?? []).includes(FINALIZER),
        `${name} can be deleted without a controller`,
      );
      assert.deepEqual(ingressIps(service), [], `${name}'s status is cleared`);
    }

    const again = await cleanup(url, ["--cluster-name=test", kubeconfig]);
    assert.match(again.text, /nothing of this cluster is left in the account/);

    // By name alone: the other cluster's load balancer is all that carries the name now, so it is the one chosen
    // unless a UID is named. With a second UID present it stops and names both.
    const third = await createLabelledLoadBalancer(env.cloud, "k8s-test-default-third", {
      ...loadBalancerLabels("test", NS, "x"),
      [CLUSTER_UID_LABEL]: "uid-of-a-third-cluster",
    });
    const ambiguous = await cleanup(url, ["--cluster-name=test"]);
    assert.equal(ambiguous.code, 1);
    assert.match(ambiguous.text, /by --cluster-name test alone/);
    assert.match(ambiguous.text, /load balancers of 2 clusters carry --cluster-name test .*--cluster-uid/);
    const named = await cleanup(url, ["--cluster-name=test", "--cluster-uid=uid-of-a-third-cluster"]);
    assert.equal(named.code, 0, named.text);
    assert.match(named.text, new RegExp(`delete load balancer ${third} `));
    assert.ok(!named.text.includes(twin), "only the named cluster's");
  } finally {
    for (const name of [...names, onEdge]) await deleteService(name);
    await deleteNodes(nodes);
  }
});

Deno.test("cleanup needs --cluster-name, and stops without changing anything when the cluster cannot be read", async () => {
  const missing = await cleanup("http://127.0.0.1:1", []);
  assert.equal(missing.code, 2);
  assert.match(missing.text, /cleanup needs --cluster-name/);
  const dir = await Deno.makeTempDir();
  try {
    const kubeconfig = `${dir}/kubeconfig`;
    const plane = testControlPlane();
    await Deno.writeTextFile(
      kubeconfig,
      (await Deno.readTextFile(plane.kubeconfigPath)).replace(plane.url, "https://127.0.0.1:1"),
    );
    const unreachable = await cleanup("http://127.0.0.1:1", ["--cluster-name=test", `--kubeconfig=${kubeconfig}`]);
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.text, /cannot read the cluster .*nothing was changed.*run without --kubeconfig/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
