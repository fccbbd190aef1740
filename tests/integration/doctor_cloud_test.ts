/**
 * `ankra-cloud-ccm doctor` end to end, its Ankra Cloud side: the real kube-apiserver, the Ankra Cloud simulator served
 * over TLS (its CA in ANKRA_CLOUD_CA_BUNDLE) and the doctor in-process. A healthy setup passes every check; the
 * configuration, the API's certificate and a refused token are each seen failing, with the checks that depend on them
 * skipped and the cluster's checks still run; nothing the doctor does may change either side. A read-only token, the
 * account's billing gates and its load balancer quota are read over the in-process simulator in
 * tests/unit/doctor/doctor_cloud_side_test.ts.
 *
 * Every test starts from a cluster without Nodes and without the Leases the doctor reads (test files run one after
 * another, so this touches no other test's objects).
 */
import assert from "node:assert/strict";
import { CLUSTER_UID_LABEL } from "../../lib/ankra_names.ts";
import { loadBalancerLabels } from "../../lib/provider/service/load_balancer_names.ts";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { kubeOk, kubeRequest } from "../support/http/kube_http.ts";
import {
  cloudEnv,
  createNode,
  doctor,
  healthyWorld,
  onCleanCluster,
  resetCluster,
  startCloud,
  writesOf,
} from "../support/doctor/doctor_world.ts";

Deno.test(
  "a healthy cluster: every check passes, exit code 0, and only the refused probe is not a read",
  onCleanCluster(async () => {
    await using cloud = await startCloud();
    await healthyWorld(cloud);
    const { report, by, text } = await doctor(cloudEnv(cloud));
    for (const finding of report.findings) {
      // Node-address mode is not in use here, nor --node-labels-from-server: their three checks say so.
      const expected = ["node-addresses", "node-address-ports", "server-labels"].includes(finding.id) ? "skip" : "pass";
      assert.equal(finding.status, expected, `${finding.id}: ${finding.result}`);
    }
    assert.match(by["node-addresses"].result, /^skipped: node-address mode is not in use: /);
    assert.equal(report.ok, true);
    assert.equal(report.findings.length, 23);
    assert.match(by["api-reachable"].result, /^https:\/\/127\.0\.0\.1:\d+ answered; TLS verified$/);
    assert.match(by["nodes-matched"].result, /all 2 nodes matched \(1 by providerID, 1 by hostname\)/);
    assert.match(by["private-network"].result, /share net-1/);
    assert.equal(by["zone-capabilities"].result, "de-fsn1: HA pair");
    assert.match(by["rbac"].result, /^test-admin may do all 23 things the controller does$/);
    assert.match(
      text,
      /^ankra-cloud-ccm v[\d.]+ doctor: Ankra Cloud API https:\/\/127\.0\.0\.1:\d+, Kubernetes https:/,
    );
    assert.match(text, /20 passed, 0 failed, 0 warnings, 3 skipped: ready\n$/);
    assert.match(
      by["cluster-name-unique"].result,
      /^no other cluster.s load balancer carries --cluster-name kubernetes/,
    );
    const writes = writesOf(cloud);
    assert.deepEqual(writes.map((w) => [w.operation, w.status]), [["create_load_balancer", 404]]);
    assert.equal(cloud.simulator.sim.loadBalancers.items.size, 0, "the probe created nothing");
  }),
);

Deno.test(
  "a token the API refuses fails, and the checks that need it are skipped; the cluster checks still run",
  onCleanCluster(async () => {
    await using cloud = await startCloud();
    await healthyWorld(cloud);
    const { report, by } = await doctor(
      cloudEnv(cloud, { ANKRA_CLOUD_TOKEN: "act_bm90LWEta25vd24tdG9rZW4teHh4eHh4eHh4" }),
    );
    assert.equal(report.ok, false);
    assert.equal(by["api-reachable"].status, "pass");
    assert.equal(by["token-valid"].status, "fail");
    assert.match(by["token-valid"].result, /invalid or expired \(HTTP 401 on list_zones\)/);
    for (const id of ["token-operate", "account-can-create", "nodes-matched", "private-network", "zone-capabilities"]) {
      assert.equal(by[id].status, "skip", id);
    }
    assert.equal(by["kubelet-external"].status, "pass");
    assert.equal(by["rbac"].status, "pass");
    assert.equal(writesOf(cloud).length, 0, "no probe with a refused token");
  }),
);

Deno.test("an API certificate from an unknown CA fails reachability and points at ANKRA_CLOUD_CA_BUNDLE", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  const env = cloudEnv(cloud);
  delete env.ANKRA_CLOUD_CA_BUNDLE;
  const { report, by } = await doctor(env);
  assert.equal(report.ok, false);
  assert.equal(by["api-reachable"].status, "fail");
  assert.match(by["api-reachable"].result, /^TLS verification failed for https:\/\/127\.0\.0\.1:\d+: .*certificate/);
  assert.match(by["api-reachable"].fix!, /ANKRA_CLOUD_CA_BUNDLE/);
  assert.equal(by["token-valid"].status, "skip");
  assert.equal(cloud.simulator.sim.log.length, 0, "nothing reached the API");
});

Deno.test(
  "without a token the configuration fails first; the Kubernetes checks still run",
  onCleanCluster(async () => {
    await createNode(uniqueName("lonely"));
    const { report, by } = await doctor({});
    assert.equal(report.findings[0].id, "configuration");
    assert.equal(by["configuration"].status, "fail");
    assert.match(by["configuration"].result, /ANKRA_CLOUD_TOKEN is not set/);
    assert.equal(by["api-reachable"].status, "skip");
    assert.equal(by["kubernetes-api"].status, "pass");
    assert.equal(by["kubelet-external"].status, "pass");
    assert.equal(by["k3s-servicelb"].status, "pass");
    assert.equal(by["rbac"].status, "pass");
    assert.equal(by["nodes-matched"].status, "skip");
  }),
);

Deno.test(
  "two load balancers labelled for one Service fail duplicate-load-balancers, naming the one that stays",
  onCleanCluster(async () => {
    await using cloud = await startCloud();
    await healthyWorld(cloud);
    const plane = testControlPlane();
    const name = uniqueName("dup");
    await kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
      body: { metadata: { name }, spec: { type: "LoadBalancer", ports: [{ port: 80 }] } },
    });
    try {
      const uid = (await kubeOk<{ metadata: { uid: string } }>(plane, "GET", "/api/v1/namespaces/kube-system"))
        .metadata.uid;
      const labels = { ...loadBalancerLabels("kubernetes", "default", name), [CLUSTER_UID_LABEL]: uid };
      const create = () =>
        cloud.simulator.sim.loadBalancers.create({
          zone: "de-fsn1",
          name: `k8s-kubernetes-default-${name}`,
          network_id: "net-1",
          labels,
          public_ipv4: false,
        }).lb.id;
      const first = create();
      const second = create();
      const { report, by } = await doctor(cloudEnv(cloud));
      assert.equal(report.ok, false);
      const finding = by["duplicate-load-balancers"];
      assert.equal(finding.status, "fail", finding.result);
      assert.equal(
        finding.result,
        `1 duplicate load balancer, billed and serving nobody: Service default/${name}: ${first} stays (the oldest, ` +
          `as no Service's status shows an address of any of them), ${second} is a duplicate`,
      );
      assert.match(finding.fix!, new RegExp(`delete them in the Ankra Cloud console: ${second}\\.`));
      assert.equal(cloud.simulator.sim.loadBalancers.items.size, 2, "the doctor deletes nothing");
    } finally {
      await kubeRequest(plane, "DELETE", `/api/v1/namespaces/default/services/${name}`);
    }
  }),
);
