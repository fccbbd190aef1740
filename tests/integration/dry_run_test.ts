/**
 * `--dry-run` as an operator uses it before moving from the Go controller: it reads everything and plans everything,
 * says what it would do (log and /metrics), and writes nothing — no Ankra Cloud change, no Lease, no event, no patch.
 * The controller runs as a separate process against the real kube-apiserver and the simulator.
 */
import assert from "node:assert/strict";
import { freePort, testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { type Replica, startReplica, stop } from "../support/controller/controller_process.ts";
import { CONTROLLER_LEASE } from "../support/controller/controller_identity.ts";
import { kubeletNode, kubeOk, kubeRequest } from "../support/http/kube_http.ts";
import { moreReads } from "../support/cloud/cloud_passes.ts";
import { eventually } from "../support/wait/eventually.ts";
import { serverSeed, startTestCloud, TEST_TOKEN, type TestCloud, testSeed } from "../support/cloud/simulator.ts";
import { serverAddresses } from "../../lib/provider/node/node_addresses.ts";
import { loadBalancerLabels, loadBalancerName, memberName } from "../../lib/provider/service/load_balancer_names.ts";

const plane = () => testControlPlane();
const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

interface Snapshot {
  versions: Map<string, string>;
  events: number;
  cloudWrites: number;
}

async function snapshot(cloud: TestCloud, nodes: string[], services: string[]): Promise<Snapshot> {
  const versions = new Map<string, string>();
  for (const name of nodes) {
    versions.set(
      `node/${name}`,
      (await kubeOk<{ metadata: { resourceVersion: string } }>(plane(), "GET", `/api/v1/nodes/${name}`)).metadata
        .resourceVersion,
    );
  }
  for (const name of services) {
    const service = await kubeOk<{ metadata: { resourceVersion: string } }>(
      plane(),
      "GET",
      `/api/v1/namespaces/default/services/${name}`,
    );
    versions.set(`service/${name}`, service.metadata.resourceVersion);
  }
  const events = (await kubeOk<{ items: unknown[] }>(plane(), "GET", "/api/v1/events")).items.length;
  const cloudWrites =
    cloud.simulator.sim.log.filter((e) => WRITE_METHODS.has(e.method) && !e.path.startsWith("/_")).length;
  return { versions, events, cloudWrites };
}

function runDryRun(cloud: TestCloud, cluster: string, port: number): Promise<Replica> {
  return startReplica([
    "--dry-run",
    `--cluster-name=${cluster}`,
    `--secure-port=${port}`,
    "--bind-address=127.0.0.1",
    "--metrics-authorization=none",
    "--server-list-period=2s",
  ], { ANKRA_CLOUD_TOKEN: TEST_TOKEN, ANKRA_CLOUD_API_URL: cloud.simulator.url });
}

async function metricsText(port: number): Promise<string> {
  const out = await new Deno.Command("curl", { args: ["-sk", `https://127.0.0.1:${port}/metrics`], stdout: "piped" })
    .output();
  return new TextDecoder().decode(out.stdout);
}

async function assertNothingWritten(cloud: TestCloud, before: Snapshot, after: Snapshot) {
  assert.equal(after.cloudWrites, before.cloudWrites, "no Ankra Cloud write");
  assert.deepEqual([...after.versions], [...before.versions], "every resourceVersion unchanged");
  assert.equal(after.events, before.events, "no event recorded");
  const leaseAnswer = await kubeRequest(
    plane(),
    "GET",
    `/apis/coordination.k8s.io/v1/namespaces/${CONTROLLER_LEASE.namespace}/leases/${CONTROLLER_LEASE.name}`,
  );
  assert.equal(leaseAnswer.status, 404, "no Lease taken");
  void cloud;
}

Deno.test("a dry run against a world the Go controller built reports adoption with only the UID label, writing nothing", async () => {
  const cluster = uniqueName("go");
  await using cloud = await startTestCloud(testSeed());
  const sim = cloud.simulator.sim;
  // Two servers: one in a zone with one compute node (the Go controller made a single VM there), one HA zone.
  const names = [uniqueName("go-node"), uniqueName("go-node")];
  const servers = names.map((hostname, i) =>
    sim.world.addServer({
      hostname,
      zone: i === 0 ? "de-fsn2" : "de-fsn1",
      plan: "standard-2c-4g",
      state: "started",
      labels: {},
      interfaces: [{ network_id: "net-1" }],
    })
  );
  // The Nodes as the Go controller initialised them (providerID, GA and beta labels, addresses IPv6 first).
  for (const [i, name] of names.entries()) {
    const server = servers[i];
    const legs = await cloud.client.listServerInterfaces(server.id);
    const node = kubeletNode(name, {
      providerID: `ankracloud://${server.zone}/${server.id}`,
      labels: {
        "node.kubernetes.io/instance-type": server.plan,
        "beta.kubernetes.io/instance-type": server.plan,
        "topology.kubernetes.io/zone": server.zone,
        "failure-domain.beta.kubernetes.io/zone": server.zone,
        "topology.kubernetes.io/region": "eu-central",
        "failure-domain.beta.kubernetes.io/region": "eu-central",
      },
      addresses: serverAddresses(server, legs),
    }) as { spec: { taints: unknown[] } };
    node.spec.taints = [];
    await kubeOk(plane(), "POST", "/api/v1/nodes", { body: node });
  }
  // Two Services and their load balancers, made with the Go controller's exact calls and bodies.
  const services = [uniqueName("go-single"), uniqueName("go-pair")];
  for (const [i, name] of services.entries()) {
    const created = await kubeOk<{ spec: { ports: { nodePort: number }[] } }>(
      plane(),
      "POST",
      "/api/v1/namespaces/default/services",
      { body: { metadata: { name }, spec: { type: "LoadBalancer", ports: [{ name: "http", port: 80 }] } } },
    );
    const nodePort = created.spec.ports[0].nodePort;
    const { loadBalancer } = await cloud.client.createLoadBalancer({
      zone: i === 0 ? "de-fsn2" : "de-fsn1",
      name: loadBalancerName(cluster, "default", name),
      network_id: "net-1",
      labels: loadBalancerLabels(cluster, "default", name),
      ...(i === 0 ? { high_availability: false } : {}),
      public_ipv4: false,
    });
    const backend = await cloud.client.createBackend(loadBalancer.id, {
      name: "tcp-80",
      mode: "tcp",
      health_check: { type: "tcp", path: "/", expected_status: "200-399", interval_seconds: 2, rise: 2, fall: 3 },
    });
    const members = (await Promise.all(names.map((n) =>
      kubeOk<{ status: { addresses: { type: string; address: string }[] } }>(plane(), "GET", `/api/v1/nodes/${n}`)
    )))
      .map((node, j) => ({
        node: names[j],
        address: node.status.addresses.find((a) =>
          a.type === "InternalIP" && a.address.includes(".")
        )!.address,
      }));
    await cloud.client.replaceMembers(
      loadBalancer.id,
      backend.id,
      members.map((m) => ({ name: memberName(m.node, m.address), address: m.address, port: nodePort })),
    );
    await cloud.client.createFrontend(loadBalancer.id, { name: "tcp-80", port: 80, backend_id: backend.id });
    let running = await cloud.client.getLoadBalancer(loadBalancer.id);
    await eventually(
      async () => {
        running = await cloud.client.getLoadBalancer(loadBalancer.id);
        return running.state === "running";
      },
      5_000,
      `load balancer ${loadBalancer.id} running`,
    );
    // The Go controller's finalizer and status: the load balancer's public IPv6 (one address, also for a pair).
    await kubeOk(plane(), "PATCH", `/api/v1/namespaces/default/services/${name}`, {
      body: { metadata: { finalizers: ["service.kubernetes.io/load-balancer-cleanup"] } },
    });
    await kubeOk(plane(), "PATCH", `/api/v1/namespaces/default/services/${name}/status`, {
      body: { status: { loadBalancer: { ingress: [{ ip: running.public_ipv6 }] } } },
    });
  }
  const before = await snapshot(cloud, names, services);
  const port = freePort();
  const replica = await runDryRun(cloud, cluster, port);
  try {
    // The one change to a Go controller's load balancer: the cluster-uid label, merged with its two labels.
    for (const name of services) {
      await replica.waitFor(
        new RegExp(
          `dry run: would label load balancer \\S+ .*"default/${name}".*"ccm\\.ankra\\.cloud/cluster-uid":"[0-9a-f-]{36}"`,
        ),
        30_000,
      );
    }
    // The pair's status lists both IPv6 addresses here, where the Go controller listed one: the one difference.
    await replica.waitFor(
      new RegExp(`dry run: would set the status of Service default/${services[1]} to \\S+, \\S+`),
      30_000,
    );
    // Two more server lists: the node and lifecycle passes that follow a list have run, and planned nothing else.
    await moreReads(cloud.simulator.sim, { operation: "list_servers" }, { count: 2 });
    const planned = replica.lines.filter((l) => /dry run: would/.test(l.text)).map((l) => l.text);
    // The label is a pass with a change: its finalizer check, condition and event pair come with it, nothing else.
    const adoption = new RegExp(
      `would label load balancer .*cluster-uid|Service default/${services[0]}: (Ensuring|Ensured) load balancer|` +
        `finalizer .* to Service default/${services[0]}|Service default/${services[0]} .*action=write_condition`,
    );
    const unexpected = planned.filter((t) => !t.includes(`Service default/${services[1]}`) && !adoption.test(t));
    assert.deepEqual(unexpected, [], "nothing else would change: no node patch, no other Ankra call");
    const metrics = await metricsText(port);
    assert.match(metrics, /ankra_ccm_dry_run_planned_action\{controller="service",.*action="write_status".*\} 1/);
    const after = await snapshot(cloud, names, services);
    await assertNothingWritten(cloud, before, after);
  } finally {
    await stop(replica);
    for (const name of services) {
      await kubeOk(plane(), "PATCH", `/api/v1/namespaces/default/services/${name}`, {
        body: { metadata: { finalizers: null } },
      });
      await kubeRequest(plane(), "DELETE", `/api/v1/namespaces/default/services/${name}`);
    }
    for (const name of names) await kubeRequest(plane(), "DELETE", `/api/v1/nodes/${name}`);
  }
});

Deno.test("a dry run against a new cluster says what it would create and initialise, and writes nothing", async () => {
  const cluster = uniqueName("new");
  await using cloud = await startTestCloud(testSeed());
  const sim = cloud.simulator.sim;
  const names = [uniqueName("new-node"), uniqueName("new-node")];
  for (const hostname of names) {
    sim.world.addServer(serverSeed({ hostname, zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }));
    await kubeOk(plane(), "POST", "/api/v1/nodes", { body: kubeletNode(hostname) });
  }
  const service = uniqueName("new-web");
  await kubeOk(plane(), "POST", "/api/v1/namespaces/default/services", {
    body: { metadata: { name: service }, spec: { type: "LoadBalancer", ports: [{ name: "http", port: 80 }] } },
  });
  const before = await snapshot(cloud, names, [service]);
  const port = freePort();
  const replica = await runDryRun(cloud, cluster, port);
  try {
    for (const name of names) {
      await replica.waitFor(
        new RegExp(`dry run: would initialise node ${name}: providerID ankracloud://de-fsn1/`),
        30_000,
      );
    }
    // The nodes are not initialised in a dry run, so the Service's load balancer is announced for afterwards.
    await replica.waitFor(
      new RegExp(
        `dry run: would create load balancer k8s-${cluster}-default-${service} for Service default/${service} ` +
          "once its 2 node",
      ),
      30_000,
    );
    const metrics = await metricsText(port);
    assert.match(metrics, /ankra_ccm_dry_run_actions\{controller="cloud-node",action="initialise_node"\} 2/);
    assert.match(metrics, /ankra_ccm_dry_run_actions\{controller="cloud-node",action="patch_node_addresses"\} 2/);
    await moreReads(sim, { operation: "list_servers" }); // the controllers went round once more, still writing nothing
    const after = await snapshot(cloud, names, [service]);
    await assertNothingWritten(cloud, before, after);
    assert.equal(sim.loadBalancers.items.size, 0);
  } finally {
    await stop(replica);
    await kubeRequest(plane(), "DELETE", `/api/v1/namespaces/default/services/${service}`);
    for (const name of names) await kubeRequest(plane(), "DELETE", `/api/v1/nodes/${name}`);
  }
});

Deno.test("a dry run with initialised nodes names the load balancer it would create, with every call's body", async () => {
  const cluster = uniqueName("plan");
  await using cloud = await startTestCloud(testSeed());
  const sim = cloud.simulator.sim;
  const name = uniqueName("plan-node");
  const server = sim.world.addServer(
    serverSeed({ hostname: name, zone: "de-fsn1", interfaces: [{ network_id: "net-1" }] }),
  );
  const node = kubeletNode(name, {
    providerID: `ankracloud://de-fsn1/${server.id}`,
    labels: { "topology.kubernetes.io/zone": "de-fsn1" },
    addresses: serverAddresses(server, await cloud.client.listServerInterfaces(server.id)),
  }) as { spec: { taints: unknown[] } };
  node.spec.taints = [];
  await kubeOk(plane(), "POST", "/api/v1/nodes", { body: node });
  const service = uniqueName("plan-web");
  await kubeOk(plane(), "POST", "/api/v1/namespaces/default/services", {
    body: { metadata: { name: service }, spec: { type: "LoadBalancer", ports: [{ name: "http", port: 80 }] } },
  });
  const before = await snapshot(cloud, [name], [service]);
  const port = freePort();
  const replica = await runDryRun(cloud, cluster, port);
  try {
    await replica.waitFor(
      new RegExp(
        `dry run: would create load balancer k8s-${cluster}-default-${service} in zone de-fsn1 on network net-1 \\(HA pair, public IPv4 false\\)`,
      ),
      30_000,
    );
    await replica.waitFor(/dry run: would create backend tcp-80 on load balancer \(new\) \(mode tcp/, 10_000);
    await replica.waitFor(
      /dry run: would set the members of backend tcp-80 of load balancer \(new\) to 10\.0\.\S+:\d+/,
      10_000,
    );
    await replica.waitFor(/dry run: would create frontend tcp-80 on port 80 of load balancer \(new\)/, 10_000);
    await replica.waitFor(
      new RegExp(
        `dry run: would add finalizer service.kubernetes.io/load-balancer-cleanup to Service default/${service}`,
      ),
      10_000,
    );
    const metrics = await metricsText(port);
    assert.match(metrics, /ankra_ccm_dry_run_actions\{controller="service",action="create_load_balancer"\} 1/);
    await moreReads(sim, { operation: "list_servers" }); // the controllers went round once more, still writing nothing
    await assertNothingWritten(cloud, before, await snapshot(cloud, [name], [service]));
    assert.equal(sim.loadBalancers.items.size, 0);
  } finally {
    await stop(replica);
    await kubeRequest(plane(), "DELETE", `/api/v1/namespaces/default/services/${service}`);
    await kubeRequest(plane(), "DELETE", `/api/v1/nodes/${name}`);
  }
});
