/**
 * A real two-node cluster that carries traffic (tests/support/real_cluster/real_cluster.ts): each node in its own
 * network namespace with containerd, kubelet, kube-proxy and the bridge CNI plugin; the simulator's data plane in the
 * `cloud` namespace; the controller in the first node's namespace, first as a process, from the fourth step on as the
 * chart's pod (installed from `chart/` with this checkout's image, killed, upgraded with `helm upgrade`). Requests go
 * from the host (this test process) to the addresses the controller publishes, through the simulator's load balancer,
 * to the nodes' NodePorts and the pods.
 *
 * kube-proxy runs as users run it — restarted when it exits (kube-proxy 1.37 exits when its Node's IPs change; on
 * k3s that is the whole k3s process) — and its exits are counted: node a's kubelet has both families' node IPs, so its
 * kube-proxy never exits; node b's has its IPv4 alone, so its kube-proxy may exit once, at initialisation, when the
 * controller publishes the server's IPv6. After that no step may cost a kube-proxy exit (address refreshes every
 * 10 s, the controller killed and upgraded, the API server restarted, the Ankra API down), except what deleting a
 * Node does by itself (kube-proxy exits when its Node is deleted; the node that joins again is initialised again).
 *
 * Three steps serve Services in node-address mode (`tests/support/real_cluster/real_cluster_node_mode.ts`): on the
 * nodes' public IPv4, with no load balancer, the client's address kept for Local, UDP, source ranges, a node excluded.
 * One step before the first load balancer does what docs/k3s.md's single-server guide says as far as this cluster
 * allows (`tests/support/real_cluster/real_cluster_k3s_guide.ts`): a Traefik-shaped Service on 80 and 443 in
 * node-address mode answered from the host, the doctor run as the guide runs it exiting 0 with a read-only token, no
 * write in the simulator's request log, and a server's new public IPv4 followed by the Service.
 *
 * The last step stops node b's server twice while requests run through the load balancer: announced ahead (the server's
 * active operation), then unannounced, each followed by a power-off of the node (its link down) and a power-on; the
 * announced stop drains the node first and no request fails (`tests/support/real_cluster/real_cluster_planned_stop.ts`).
 *
 * One cluster serves every step (each builds on the one before). Needs root, overlayfs, runc, iptables, skopeo,
 * nsenter, Debian's containernetworking-plugins, Go and gcc (`.ci/run` installs the Debian packages); without them
 * the test is ignored and says why. A failing step prints the kubelets', containerds', kube-proxies', the
 * simulator's and the controller's logs.
 */
import assert from "node:assert/strict";
import { selfSignedServingCertificate } from "../../lib/server/self_signed_certificate.ts";
import { timed } from "../support/chart/helm.ts";
import { kubeOk, serviceIngress } from "../support/http/kube_http.ts";
import { startRealCluster } from "../support/real_cluster/real_cluster.ts";
import { readClusterFacts, realClusterBlockers } from "../support/real_cluster/real_cluster_host.ts";
import { readHostFacts } from "../support/real_node/real_node_host.ts";
import { listPods, podReady, waitFor } from "../support/real_node/real_node_objects.ts";
import { installChartController, ROLLOUT_TAG } from "../support/real_cluster/real_cluster_chart.ts";
import {
  ECHO_PORT,
  echoDeployment,
  echoService,
  lbOfService,
  scale,
} from "../support/real_cluster/real_cluster_workloads.ts";
import { describeNodeEvents, runNodeEvents } from "../support/real_cluster/real_cluster_node_events.ts";
import { describeStopRun, plannedAgainstUnannouncedStop } from "../support/real_cluster/real_cluster_planned_stop.ts";
import { testImageLayout } from "../support/image/test_image.ts";
import { memberStates, requestHostname, startRequestStream } from "../support/real_cluster/real_cluster_traffic.ts";
import type { SupervisedExit } from "../support/real_node/supervised_process.ts";
import { followsTheK3sGuide } from "../support/real_cluster/real_cluster_k3s_guide.ts";
import { stepsInOrder } from "../support/real_node/steps_in_order.ts";
import {
  excludedNodeLeaves,
  localKeepsClientAddress,
  servesOnBothNodes,
  sourceRangesEnforced,
  udpAnswers,
} from "../support/real_cluster/real_cluster_node_mode.ts";

const NS = "default";
const APP = "echo";
const LOCAL = "solo";
const SECURE = "secure";
const PLANNED = "planned";
/** The health check settings the Services ask for (annotations) and the controller's default rise. */
const INTERVAL = 1;
const RISE = 2;

const blockers = realClusterBlockers(await readClusterFacts(readHostFacts()));
if (blockers.length > 0) console.log(`real-cluster test ignored: ${blockers.join("; ")}`);

Deno.test({
  name: "a real two-node cluster in its own network namespaces carries load-balanced traffic to pods on both nodes",
  ignore: blockers.length > 0,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  const tls = await selfSignedServingCertificate("shop.example");
  const cluster = await timed(
    "real cluster start",
    () =>
      startRealCluster({
        certificates: [{ id: "cert-shop", certificate_pem: tls.cert, private_key_pem: tls.key }],
        controllerArgs: ["--node-status-update-frequency=10s"],
      }),
  );
  const plane = cluster.plane;
  const [nodeA, nodeB] = cluster.nodes;
  const exitsOf = () => cluster.nodes.map((n) => n.kubeProxy.exits.length);
  const describe = (exits: readonly SupervisedExit[]) => exits.map((e) => `${e.at} code ${e.code}: ${e.reason}`);
  console.log(
    `kube-proxy exits at initialisation: ${
      cluster.nodes.map((n) => `${n.plan.name} (--node-ip=${n.kubeletNodeIps.join(",")}) ${n.kubeProxy.exits.length}`)
        .join(", ")
    }${cluster.nodes.flatMap((n) => describe(n.kubeProxy.exits)).map((l) => `\n  ${l}`).join("")}`,
  );
  const inOrder = stepsInOrder(t, async () => {
    const pods = await cluster.kubectl(["get", "pods,services,nodes", "-A", "-o", "wide"]).catch(() => undefined);
    console.error(`--- objects\n${pods?.text}\n${await cluster.logs()}`);
  });
  /** Each step checks that it cost no kube-proxy exit, or only those `allowed` names (by node index). */
  const step = (
    name: string,
    body: () => Promise<void>,
    allowed?: (exits: SupervisedExit[][]) => string | undefined,
  ) =>
    inOrder(name, async () => {
      const before = exitsOf();
      await body();
      const during = cluster.nodes.map((n, i) => n.kubeProxy.exits.slice(before[i]));
      const problem = allowed
        ? allowed(during)
        : during.some((e) => e.length > 0)
        ? `kube-proxy exited during the step: ${JSON.stringify(during.map(describe))}`
        : undefined;
      assert.equal(problem, undefined);
    });
  let leftovers: string[] = [];
  try {
    await step(
      "kube-proxy's node IPs: never changed on the node with both families, at most once at initialisation on the other",
      () => {
        assert.deepEqual(describe(nodeA.kubeProxy.exits), [], `${nodeA.plan.name} has --node-ip=<v4>,<v6>`);
        assert.ok(nodeB.kubeProxy.exits.length <= 1, `${nodeB.plan.name}: ${describe(nodeB.kubeProxy.exits)}`);
        for (const exit of nodeB.kubeProxy.exits) assert.match(exit.reason, /NodeIPs changed for the node/);
        return Promise.resolve();
      },
    );

    await step("both nodes are Ready and their pods reach each other across the nodes", async () => {
      await kubeOk(plane, "POST", `/apis/apps/v1/namespaces/${NS}/deployments`, { body: echoDeployment(APP, 2) });
      const pods = await waitFor("two echo pods Ready on different nodes", 120_000, async () => {
        const ready = (await listPods(plane, NS, `app=${APP}`)).filter(podReady);
        return ready.length === 2 && new Set(ready.map((p) => p.spec.nodeName)).size === 2 ? ready : undefined;
      });
      for (const [from, to] of [[pods[0], pods[1]], [pods[1], pods[0]]]) {
        const ip = (to.status as { podIP?: string }).podIP;
        const answer = await cluster.kubectl([
          "exec",
          "-n",
          NS,
          from.metadata.name,
          "--",
          "wget",
          "-q",
          "-O",
          "-",
          `http://${ip}:${ECHO_PORT}/hostname`,
        ]);
        assert.equal(answer.stdout.trim(), to.metadata.name, `pod ${from.metadata.name} → ${ip}: ${answer.text}`);
      }
    });

    await step(
      "the k3s guide's single server: a Traefik-shaped Service on node addresses answers on 80 and 443, the doctor " +
        "exits 0 with a read-only token, nothing is written to Ankra Cloud, a server's new IPv4 is followed",
      () => followsTheK3sGuide(cluster),
    );

    await step(
      "a LoadBalancer Service answers from the host on its IPv6 and IPv4 addresses, with both nodes as members",
      async () => {
        await kubeOk(plane, "POST", `/api/v1/namespaces/${NS}/services`, {
          body: echoService(APP, {
            annotations: {
              "load-balancer.ankra.cloud/ipv4": "true",
              "load-balancer.ankra.cloud/health-check-interval": String(INTERVAL),
            },
          }),
        });
        const ingress = await waitFor("the Service's ingress", 90_000, async () => {
          const addresses = await serviceIngress(plane, NS, APP);
          return addresses.length >= 2 ? addresses : undefined;
        });
        assert.ok(ingress.some((a) => a.includes(":")) && ingress.some((a) => !a.includes(":")), `${ingress}`);
        const podNames = new Set((await listPods(plane, NS, `app=${APP}`)).map((p) => p.metadata.name));
        // A member's first health checks may meet its NodePort before kube-proxy has programmed it (refused; on a
        // fresh machine node b's kube-proxy is still restarting then, at its Node's initialisation): the load balancer
        // takes it out until `rise` checks pass. Every request is asserted once both are up; wait for that, bounded.
        const expected = cluster.topology.nodes.map((n) => n.ip).sort();
        await waitFor("both nodes members and up", 60_000, async (saw) => {
          const members = memberStates(await lbOfService(cluster, APP));
          saw(JSON.stringify(members.map((m) => ({ a: m.address, h: m.health }))));
          return [...new Set(members.map((m) => m.address))].sort().join() === expected.join() &&
            members.every((m) => m.health === "up");
        });
        for (const address of ingress) {
          const answered = await waitFor(`an answer from ${address}`, 60_000, () => requestHostname(address, 80));
          assert.ok(podNames.has(answered), `${address} answered "${answered}", not one of ${[...podNames]}`);
          for (let i = 0; i < 20; i++) {
            const name = await requestHostname(address, 80);
            assert.ok(name && podNames.has(name), `request ${i} to ${address} answered "${name}"`);
          }
        }
        // Both carried traffic: each member has connections (bounded, saying what was there meanwhile).
        await waitFor("both nodes members, up, each with connections", 30_000, async (saw) => {
          const members = memberStates(await lbOfService(cluster, APP));
          saw(JSON.stringify(members.map((m) => ({ a: m.address, h: m.health, c: m.connections_total }))));
          if ([...new Set(members.map((m) => m.address))].sort().join() !== expected.join()) return false;
          await requestHostname(ingress[0], 80, 1_000); // traffic, so a member that comes up gets connections too
          return expected.every((ip) => {
            const mine = members.filter((m) => m.address === ip);
            return mine.every((m) => m.health === "up") && mine.reduce((sum, m) => sum + m.connections_total, 0) > 0;
          });
        });
      },
    );

    await step(
      "ipMode Proxy: a pod's HTTPS request to a TLS Service's address is answered by the load balancer's TLS frontend",
      async () => {
        await kubeOk(plane, "POST", `/api/v1/namespaces/${NS}/services`, {
          body: echoService(SECURE, {
            app: APP,
            port: 443,
            annotations: {
              "load-balancer.ankra.cloud/ipv4": "true",
              "load-balancer.ankra.cloud/tls-ports": "443",
              "load-balancer.ankra.cloud/certificate-ids": "cert-shop",
            },
          }),
        });
        const ipv4 = await waitFor("the TLS Service's IPv4 with ipMode Proxy", 90_000, async () => {
          const service = await kubeOk<{ status: { loadBalancer: { ingress?: { ip: string; ipMode?: string }[] } } }>(
            plane,
            "GET",
            `/api/v1/namespaces/${NS}/services/${SECURE}`,
          );
          const ingress = service.status.loadBalancer.ingress ?? [];
          const v4 = ingress.find((i) => !i.ip.includes(":"));
          return v4 && ingress.every((i) => i.ipMode === "Proxy") ? v4.ip : undefined;
        });
        // kube-proxy leaves an address of ipMode Proxy alone: the pod's connection goes to the load balancer, whose
        // frontend terminates TLS with the seeded certificate (a shortcut to the pod would meet plain HTTP).
        const [pod] = (await listPods(plane, NS, `app=${APP}`)).filter(podReady);
        const answer = await waitFor("an HTTPS answer inside the cluster", 60_000, async () => {
          const out = await cluster.kubectl([
            "exec",
            "-n",
            NS,
            pod.metadata.name,
            "--",
            "curl",
            "-sSkv",
            "--max-time",
            "5",
            `https://${ipv4}/hostname`,
          ]);
          return out.code === 0 ? out.text : undefined;
        });
        assert.match(answer, /subject: CN=shop\.example/, "the load balancer's certificate");
        const podNames = (await listPods(plane, NS, `app=${APP}`)).map((p) => p.metadata.name);
        assert.ok(podNames.some((name) => answer.includes(name)), `a pod answered: ${answer}`);
      },
    );

    await step(
      "scaled to 0 its members go down and requests fail; back to 1 it answers again within rise × interval",
      async () => {
        const [address] = await serviceIngress(plane, NS, APP);
        await scale(cluster, APP, 0);
        await waitFor("every member down", 60_000, async () => {
          const members = memberStates(await lbOfService(cluster, APP));
          return members.length > 0 && members.every((m) => m.health === "down");
        });
        assert.equal(await requestHostname(address, 80, 2_000), undefined, "a request answered with no pod running");
        await scale(cluster, APP, 1);
        const readyAt = await waitFor("one echo pod Ready", 60_000, async () => {
          const ready = (await listPods(plane, NS, `app=${APP}`)).filter(podReady);
          return ready.length === 1 ? performance.now() : undefined;
        });
        await waitFor("an answer again", 30_000, () => requestHostname(address, 80, 1_000));
        const seconds = (performance.now() - readyAt) / 1000;
        console.log(`answered again ${seconds.toFixed(1)} s after the pod was Ready (rise 2 × interval 1 s)`);
        // rise × interval, plus kube-proxy's sync of the new endpoint and one check's timing.
        assert.ok(seconds <= RISE * INTERVAL + 3, `answered only ${seconds.toFixed(1)} s after the pod was Ready`);
      },
    );

    await step(
      "externalTrafficPolicy Local: only the pod's node is a member; moved to the other node, traffic follows",
      async () => {
        const [a, b] = cluster.topology.nodes;
        const deployment = echoDeployment(LOCAL, 1) as ReturnType<typeof echoDeployment> & {
          spec: { template: { spec: { nodeSelector?: Record<string, string> } } };
        };
        deployment.spec.template.spec.nodeSelector = { "kubernetes.io/hostname": a.name };
        await kubeOk(plane, "POST", `/apis/apps/v1/namespaces/${NS}/deployments`, { body: deployment });
        await kubeOk(plane, "POST", `/api/v1/namespaces/${NS}/services`, {
          body: echoService(LOCAL, {
            annotations: { "load-balancer.ankra.cloud/health-check-interval": String(INTERVAL) },
            spec: { externalTrafficPolicy: "Local" },
          }),
        });
        const [address] = await waitFor("the Local Service's ingress", 90_000, async () => {
          const addresses = await serviceIngress(plane, NS, LOCAL);
          return addresses.length > 0 ? addresses : undefined;
        });
        await waitFor(`only ${a.name} a member, and up`, 60_000, async () => {
          const members = memberStates(await lbOfService(cluster, LOCAL));
          return members.length > 0 && members.every((m) => m.address === a.ip && m.health === "up");
        });
        for (let i = 0; i < 10; i++) assert.ok(await requestHostname(address, 80), `request ${i} to ${address}`);
        const before = memberStates(await lbOfService(cluster, LOCAL));
        assert.ok(before.every((m) => m.address === a.ip) && before.some((m) => m.connections_total >= 10));

        // Move the pod: the Deployment's rolling update starts the new pod on b before it stops the one on a.
        const stream = startRequestStream(address, 80, 20);
        const emptyWhileReady: string[] = [];
        await kubeOk(plane, "PATCH", `/apis/apps/v1/namespaces/${NS}/deployments/${LOCAL}`, {
          body: { spec: { template: { spec: { nodeSelector: { "kubernetes.io/hostname": b.name } } } } },
        });
        await waitFor(`only ${b.name} a member, and up`, 120_000, async () => {
          const readyPods = (await listPods(plane, NS, `app=${LOCAL}`)).filter(podReady);
          const members = memberStates(await lbOfService(cluster, LOCAL));
          if (readyPods.length > 0 && members.length === 0) emptyWhileReady.push(new Date().toISOString());
          const onB = readyPods.length === 1 && readyPods[0].spec.nodeName === b.name;
          return onB && members.length > 0 && members.every((m) => m.address === b.ip && m.health === "up");
        });
        const totals = await stream.stop();
        console.log(`moving the Local pod: ${totals.sent} requests, ${totals.failed} failed`);
        assert.deepEqual(emptyWhileReady, [], "a moment with a Ready pod and no member");
        assert.ok(await requestHostname(address, 80), "the moved pod does not answer");
      },
    );

    await step(
      "node-address mode: a Service on both nodes' public IPv4 is answered by pods on both nodes, no load balancer",
      async () => {
        await scale(cluster, APP, 2);
        await waitFor(
          "two echo pods Ready",
          60_000,
          async () => (await listPods(plane, NS, `app=${APP}`)).filter(podReady).length === 2 || undefined,
        );
        await servesOnBothNodes(cluster, APP);
      },
    );

    await step(
      "node-address mode: Local keeps the client's address, UDP answers, source ranges admit the host and drop a pod",
      async () => {
        await localKeepsClientAddress(cluster, LOCAL);
        await udpAnswers(cluster, APP);
        await sourceRangesEnforced(cluster, APP);
      },
    );

    await step(
      "node-address mode: a node excluded from load balancers leaves the ingress, the other keeps answering",
      () => excludedNodeLeaves(cluster),
    );

    await step(
      "requests at 20/s keep being answered while the chart's controller pod is killed, upgraded with helm upgrade, " +
        "the API server restarts and the Ankra API answers 503 for 60 s",
      async () => {
        const [address] = await serviceIngress(plane, NS, APP);
        await scale(cluster, APP, 2);
        await waitFor("two echo pods Ready and both members up", 90_000, async () => {
          const ready = (await listPods(plane, NS, `app=${APP}`)).filter(podReady);
          const members = memberStates(await lbOfService(cluster, APP));
          return ready.length === 2 && members.length > 0 && members.every((m) => m.health === "up");
        });
        const loadBalancerIds = async () =>
          ((await cluster.simulatorState()) as { load_balancers?: { id: string }[] }).load_balancers?.map((lb) => lb.id)
            .sort();
        const before = await loadBalancerIds();
        const chart = await timed("the chart's controller in place of the process", async () => {
          const layout = await testImageLayout();
          return await installChartController(cluster, layout);
        });
        const stream = startRequestStream(address, 80, 20);
        const events: string[] = [];
        const mark = (what: string) => events.push(`${what}: ${stream.failures().length} failed of ${stream.sent()}`);
        await chart.killProcess();
        mark("controller's process killed (restarted, Ready)");
        const holder = await chart.leader(60_000);
        const upgraded = await chart.upgrade(ROLLOUT_TAG);
        assert.equal(upgraded.mostRunning, 1, "never two controllers running at once");
        assert.notEqual(await chart.leader(60_000, holder), holder, "the upgraded pod leads");
        mark("helm upgrade done (new pod leads)");
        await cluster.restartApiserver();
        mark("API server restarted");
        await cluster.simulatorControl("POST", "/faults", [{ operation: "*", status: 503, times: 0 }]);
        const faultEnds = performance.now() + 60_000;
        await waitFor("60 s of 503 answers", 70_000, () => Promise.resolve(performance.now() >= faultEnds));
        await cluster.simulatorControl("DELETE", "/faults");
        mark("503s over");
        await new Promise<void>((resolve) => setTimeout(resolve, 5_000)); // the stream keeps running 5 s more
        const totals = await stream.stop();
        console.log(
          `${events.join("; ")}; in all ${totals.sent} requests, ${totals.failed} failed; ` +
            `the slowest answer took ${totals.slowestMs} ms`,
        );
        assert.ok(totals.sent >= 20 * 60, `only ${totals.sent} requests sent`);
        assert.deepEqual(stream.failures().slice(0, 5), [], `${totals.failed} requests failed`);
        assert.deepEqual(await loadBalancerIds(), before, "the chart's controller took over the same load balancers");
      },
    );

    await step(
      "a node leaving (exclusion label, kubelet stopped, Node deleted) and joining again: the Service keeps answering",
      async () => {
        const [address] = await serviceIngress(plane, NS, APP);
        const { events, notReadySeconds } = await runNodeEvents(cluster, APP, address);
        console.log(
          `node events (node b NotReady ${notReadySeconds.toFixed(1)} s after its kubelet stopped):\n  ` +
            describeNodeEvents(events).join("\n  "),
        );
        for (const e of events) {
          assert.ok(
            e.after.name !== undefined,
            `the Service does not answer after: ${e.what} (${e.after.problem}, ${e.after.ms} ms)`,
          );
        }
      },
      // Deleting node b's Node ends its kube-proxy (as it does on any cluster); the Node that registers again is
      // initialised again, which may change node b's kube-proxy IPs once more. Node a's kube-proxy never exits.
      ([a, b]) => {
        const unexpected = b.filter((e, i) =>
          !(/Node is being deleted/.test(e.reason) ||
            (/NodeIPs changed for the node/.test(e.reason) && b.slice(0, i).every((x) => !/NodeIPs/.test(x.reason))))
        );
        return a.length > 0 || unexpected.length > 0
          ? `kube-proxy exits beyond the Node's deletion and one re-initialisation: node a ${
            JSON.stringify(describe(a))
          }, node b ${JSON.stringify(describe(b))}`
          : undefined;
      },
    );

    await step(
      "a server's stop announced ahead drains its node first: no request fails; the same stop unannounced, compared",
      async () => {
        // externalTrafficPolicy Local: a request the load balancer sends to node a stays there, so what reaches node b
        // is the load balancer's choice alone (with Cluster, node a's kube-proxy also forwards to node b's pod, which
        // only the kubelet's graceful node shutdown takes away before a power-off).
        await kubeOk(plane, "POST", `/api/v1/namespaces/${NS}/services`, {
          body: echoService(PLANNED, {
            app: APP,
            annotations: {
              "load-balancer.ankra.cloud/ipv4": "true",
              "load-balancer.ankra.cloud/health-check-interval": String(INTERVAL),
            },
            spec: { externalTrafficPolicy: "Local" },
          }),
        });
        const address = await waitFor("the Local Service's IPv4", 90_000, async () => {
          const found = (await serviceIngress(plane, NS, PLANNED)).find((a) => !a.includes(":"));
          const members = found ? memberStates(await lbOfService(cluster, PLANNED)) : [];
          const both = new Set(members.filter((m) => m.health === "up").map((m) => m.address)).size === 2;
          return both ? found : undefined;
        });
        // The chart's controller lists servers every 10 s and drains for 30 s: the stop is due 55 s ahead.
        const { announced, unannounced } = await plannedAgainstUnannouncedStop(cluster, PLANNED, APP, address, 55_000);
        console.log(
          `${describeStopRun("announced stop", announced)}\n${describeStopRun("unannounced stop", unannounced)}`,
        );
        assert.equal(announced.failedBefore + announced.failedAfter, 0, describeStopRun("announced", announced, true));
        // Unannounced, every connect to node b times out (5 s) before another member until node b is out; announced,
        // node b is off the load balancer before the power-off and stays off once its server is stopped.
        assert.equal(
          announced.slowAfter,
          0,
          `after an announced power-off no request meets node b: ${describeStopRun("announced", announced, true)}`,
        );
        assert.ok(unannounced.slowAfter > 0, "the unannounced power-off, compared, meets node b");
        assert.ok(announced.drainedAfterS !== undefined, "node b was drained before its server went down");
        assert.ok(announced.removedAfterS !== undefined, "node b was off the load balancer before the power-off");
        await kubeOk(plane, "DELETE", `/api/v1/namespaces/${NS}/services/${PLANNED}`);
      },
    );
  } finally {
    leftovers = await cluster.stop();
  }
  assert.deepEqual(leftovers, [], "the real cluster left things behind on the host");
});
