/**
 * Failures that speak up: a token the API refuses makes the process not ready (with the reason) and is logged as an
 * ERROR once; a serving problem is one line naming the flag and exit code 2; one malformed item in a list answer
 * costs that item only. The controller runs as a separate process against the real kube-apiserver and the simulator.
 */
import assert from "node:assert/strict";
import { freePort, testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { startReplica, stop } from "../support/controller/controller_process.ts";
import { kubeletNode, kubeOk, kubeRequest, serviceIngress } from "../support/http/kube_http.ts";
import { eventually } from "../support/controller/node_controllers.ts";
import { serverSeed, startTestCloud, testSeed } from "../support/cloud/simulator.ts";

/** GETs a path of the controller's HTTPS server (its in-memory self-signed certificate: curl -k, as a probe). */
async function fetchInsecure(port: number, path: string): Promise<{ status: number; text: string }> {
  const out = await new Deno.Command("curl", {
    args: ["-sk", "-w", "\n%{http_code}", `https://127.0.0.1:${port}${path}`],
    stdout: "piped",
    stderr: "null",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const at = text.lastIndexOf("\n");
  return { status: Number(text.slice(at + 1)), text: text.slice(0, at) };
}

Deno.test("a token the API refuses makes /readyz fail with the reason, logs one ERROR and shows on /metrics", async () => {
  await using cloud = await startTestCloud();
  const port = freePort();
  const replica = await startReplica([
    "--leader-elect=false",
    `--secure-port=${port}`,
    "--bind-address=127.0.0.1",
    "--metrics-authorization=none",
    "--server-list-period=1s", // the server list keeps asking with the refused token
  ], {
    ANKRA_CLOUD_TOKEN: "act_dGhpcy10b2tlbi1pcy1ub3Qta25vd24tdG8tdGhlLWFwaQ",
    ANKRA_CLOUD_API_URL: cloud.simulator.url,
  });
  try {
    await replica.waitFor(/refuses the token as invalid or expired \(HTTP 401 on list_zones\)/, 20_000);
    const probe = await fetchInsecure(port, "/readyz?verbose");
    assert.equal(probe.status, 503);
    assert.match(probe.text, /\[-\]ankra-cloud-credentials the Ankra Cloud API refuses the token/);
    const metrics = await fetchInsecure(port, "/metrics");
    assert.match(metrics.text, /^ankra_cloud_credentials_accepted 0$/m);
    // Two more refusals after the ERROR: the controllers kept retrying with the token, and said it only once.
    const refused = () => cloud.simulator.sim.log.filter((e) => e.status === 401).length;
    const refusedBefore = refused();
    await eventually(() => refused() >= refusedBefore + 2, 20_000, "two more requests the API refuses");
    const errors = replica.lines.filter((l) => /ERROR.*refuses the token/.test(l.text));
    assert.equal(errors.length, 1, "logged once per change, not on every retry");
    assert.ok(!replica.lines.some((l) => l.text.includes("act_dGhpcy10b2tlbi1")), "the token is never logged");
  } finally {
    await stop(replica);
  }
});

Deno.test("serving problems are one line naming the flag, exit code 2", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: freePort() });
  const port = (taken.addr as Deno.NetAddr).port;
  try {
    const cases: [string[], RegExp][] = [
      [[`--secure-port=${port}`, "--bind-address=127.0.0.1"], /--secure-port \d+: the port is in use/],
      [
        [`--secure-port=${freePort()}`, "--tls-cert-file=/nonexistent/tls.crt", "--tls-private-key-file=/x.key"],
        /--tls-cert-file \/nonexistent\/tls.crt does not exist/,
      ],
      [
        [`--secure-port=${freePort()}`, "--bind-address=203.0.113.9"],
        /--bind-address 203.0.113.9 is not an address of this host/,
      ],
      [[`--secure-port=${freePort()}`, "--bind-address=localhost:80"], /--bind-address must be an IP address/],
    ];
    for (const [args, pattern] of cases) {
      const replica = await startReplica(["--leader-elect=false", ...args]);
      const status = await replica.exited;
      const text = replica.lines.map((l) => l.text).join("\n");
      assert.equal(status.code, 2, `${args.join(" ")} → exit ${status.code}:\n${text}`);
      assert.match(text, pattern);
      assert.ok(!/\bat \S+:\d+:\d+/.test(text), `no stack trace:\n${text}`);
    }
  } finally {
    taken.close();
  }
});

Deno.test("one malformed item in a list answer costs that item only: the other nodes and Services are served", async () => {
  const plane = testControlPlane();
  const prefix = uniqueName("item");
  const names = [0, 1, 2].map((i) => `${prefix}-${i}`);
  await using cloud = await startTestCloud(testSeed({
    servers: names.map((hostname) => serverSeed({ hostname, zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] })),
  }));
  const sim = cloud.simulator.sim;
  // Every list_servers and list_load_balancers answer has its first item spoiled, for the whole test.
  sim.faults.add({ operation: "list_servers", malformed: "item", item_index: 0, times: 0 });
  const lbCreated = await cloud.client.createLoadBalancer({
    zone: "de-fsn1",
    name: "unrelated-load-balancer",
    network_id: "net-1",
    labels: {},
    public_ipv4: false,
  });
  sim.faults.add({ operation: "list_load_balancers", malformed: "item", item_index: 0, times: 0 });
  const service = uniqueName("item-svc");
  for (const name of names) await kubeOk(plane, "POST", "/api/v1/nodes", { body: kubeletNode(name) });
  const replica = await startReplica([
    "--leader-elect=false",
    "--secure-port=0",
    "--server-list-period=2s",
    "--cluster-name=items",
  ], {
    ANKRA_CLOUD_TOKEN: "act_dGVzdC10b2tlbi1vcGVyYXRlLXNjb3BlLXh4eHh4eA",
    ANKRA_CLOUD_API_URL: cloud.simulator.url,
    ANKRA_CLOUD_NETWORK_ID: "net-1",
  });
  try {
    await kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
      body: { metadata: { name: service }, spec: { type: "LoadBalancer", ports: [{ port: 80 }] } },
    });
    // The list is newest first: the spoiled first item is the last server added. The other two are initialised.
    const initialised = async () =>
      (await Promise.all(
        names.map((n) => kubeOk<{ spec: { providerID?: string } }>(plane, "GET", `/api/v1/nodes/${n}`)),
      ))
        .filter((n) => n.spec.providerID).length;
    await eventually(async () => (await initialised()) === 2, 20_000, "two of three nodes initialised");
    await eventually(
      async () => (await serviceIngress(plane, "default", service)).length > 0,
      20_000,
      "Service served",
    );
    await replica.waitFor(/list item from the Ankra Cloud API has the wrong shape.*operation=list_servers.*item=srv-/);
    assert.ok(sim.loadBalancers.items.has(lbCreated.loadBalancer.id), "nothing was deleted because of the bad item");
  } finally {
    await kubeRequest(plane, "DELETE", `/api/v1/namespaces/default/services/${service}`);
    await eventually(
      async () => (await kubeRequest(plane, "GET", `/api/v1/namespaces/default/services/${service}`)).status === 404,
      20_000,
    ).catch(() => {});
    await stop(replica);
    for (const name of names) await kubeRequest(plane, "DELETE", `/api/v1/nodes/${name}`);
  }
});
