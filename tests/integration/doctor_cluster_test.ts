/**
 * `ankra-cloud-ccm doctor` end to end, its cluster side: the real kube-apiserver, the Ankra Cloud simulator served over
 * TLS and the doctor in-process. Nodes unmatched, ambiguous or of other providers, kubelets without the external
 * provider, nodes on two networks, a zone without failover, k3s servers still running ServiceLB or their cloud
 * controller, another cloud controller's or this controller's Lease held, and an identity lacking permissions are
 * each named; each finding is seen both ways where the test world can make it fail.
 *
 * Every test starts from a cluster without Nodes and without the Leases the doctor reads (test files run one after
 * another, so this touches no other test's objects).
 */
import assert from "node:assert/strict";
import { kubeconfigText, testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import {
  addServer,
  cloudEnv,
  createNode,
  doctor,
  healthyWorld,
  onCleanCluster,
  resetCluster,
  startCloud,
} from "../support/doctor/doctor_world.ts";
import { kubeOk, kubeRequest } from "../support/http/kube_http.ts";
import { testSeed } from "../support/cloud/simulator.ts";

Deno.test(
  "unmatched, ambiguous and foreign nodes are named; a kubelet without the external provider fails",
  onCleanCluster(async () => {
    await using cloud = await startCloud();
    const [a] = await healthyWorld(cloud);
    const twin = uniqueName("twin");
    addServer(cloud, twin, "de-fsn1");
    addServer(cloud, twin, "de-fsn2");
    const nobody = uniqueName("nobody");
    const plain = uniqueName("plain");
    addServer(cloud, plain);
    await createNode(twin);
    await createNode(nobody);
    await createNode(uniqueName("hetzner"), { providerID: "hcloud://4711" });
    await createNode(plain, { external: false });
    const { by } = await doctor(cloudEnv(cloud));
    const matched = by["nodes-matched"];
    assert.equal(matched.status, "fail");
    assert.match(matched.result, new RegExp(`not matched: ${nobody} \\(no server has hostname ${nobody}\\)`));
    assert.match(matched.result, new RegExp(`ambiguous: ${twin} \\(2 servers have hostname ${twin}`));
    assert.match(matched.result, /other providers: hetzner-/);
    assert.ok(!matched.result.includes(`${a}.cluster.example (`), "matched nodes are not listed");
    const kubelet = by["kubelet-external"];
    assert.equal(kubelet.status, "fail");
    assert.match(kubelet.result, new RegExp(`without --cloud-provider=external\\): ${plain}$`));
  }),
);

Deno.test(
  "nodes of other providers alone are a warning, not a failure",
  onCleanCluster(async () => {
    await using cloud = await startCloud();
    await healthyWorld(cloud);
    await createNode(uniqueName("k3s-node"), { providerID: "k3s://elsewhere" });
    const { report, by } = await doctor(cloudEnv(cloud));
    assert.equal(by["nodes-matched"].status, "warn");
    assert.equal(report.ok, true, "warnings do not fail");
  }),
);

Deno.test(
  "nodes on two networks fail the network check; ANKRA_CLOUD_NETWORK_ID is checked instead when set",
  onCleanCluster(async () => {
    await using cloud = await startCloud(testSeed({
      networks: [
        { id: "net-1", name: "private", zone: "de-fsn1", cidr: "10.0.0.0/16", ula_prefix: "fd64:1:0:1::/64" },
        { id: "net-2", name: "other", zone: "de-fsn1", cidr: "10.1.0.0/16", ula_prefix: "fd64:1:0:2::/64" },
      ],
    }));
    const a = uniqueName("net-a");
    const b = uniqueName("net-b");
    addServer(cloud, a, "de-fsn1", ["net-1"]);
    addServer(cloud, b, "de-fsn1", ["net-2"]);
    await createNode(a);
    await createNode(b);
    let { by } = await doctor(cloudEnv(cloud));
    assert.equal(by["private-network"].status, "fail");
    assert.match(
      by["private-network"].result,
      new RegExp(`do not share one Ankra private network \\(${a}: net-1, ${b}: net-2\\)`),
    );
    assert.match(by["private-network"].fix!, /ANKRA_CLOUD_NETWORK_ID/);
    ({ by } = await doctor(cloudEnv(cloud, { ANKRA_CLOUD_NETWORK_ID: "net-1" })));
    assert.equal(by["private-network"].status, "warn", "the controller serves from a and leaves b out of IPv4");
    assert.match(
      by["private-network"].result,
      new RegExp(
        `; but node ${b} \\(server [^)]+\\) has no IPv4 address for the load balancer on network net-1 .* IPv6 only$`,
      ),
    );
    assert.match(by["private-network"].fix!, new RegExp(`attach its server to net-1`));
    ({ by } = await doctor(cloudEnv(cloud, { ANKRA_CLOUD_NETWORK_ID: "net-nope" })));
    assert.equal(by["private-network"].status, "fail");
    assert.match(by["private-network"].result, /net-nope names no network of the account/);
  }),
);

Deno.test(
  "a zone with one compute node warns with the API's reason; asking for single VMs passes",
  onCleanCluster(async () => {
    await using cloud = await startCloud();
    const name = uniqueName("small");
    addServer(cloud, name, "de-fsn2");
    await createNode(name);
    let { by, report } = await doctor(cloudEnv(cloud));
    assert.equal(by["zone-capabilities"].status, "warn");
    assert.equal(
      by["zone-capabilities"].result,
      "de-fsn2: single VM only, no failover (the zone has 1 compute node(s); it needs 2)",
    );
    assert.equal(report.ok, true);
    ({ by } = await doctor(cloudEnv(cloud, { ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY: "false" })));
    assert.equal(by["zone-capabilities"].status, "pass");
    ({ by } = await doctor(cloudEnv(cloud, { ANKRA_CLOUD_LOAD_BALANCER_HIGH_AVAILABILITY: "true" })));
    assert.equal(by["zone-capabilities"].status, "fail");
    ({ by } = await doctor(cloudEnv(cloud, { ANKRA_CLOUD_ZONE: "xx-none1" })));
    assert.equal(by["zone-capabilities"].status, "fail");
    assert.match(by["zone-capabilities"].result, /ANKRA_CLOUD_ZONE xx-none1 is not a zone of the account/);
  }),
);

Deno.test(
  "k3s servers without --disable=servicelb or --disable-cloud-controller fail, each named",
  onCleanCluster(async () => {
    await using cloud = await startCloud();
    await healthyWorld(cloud);
    const lb = uniqueName("k3s-lb");
    const ccm = uniqueName("k3s-ccm");
    addServer(cloud, lb);
    addServer(cloud, ccm);
    await createNode(lb, { k3sArgs: ["--disable-cloud-controller", "--disable", "traefik"] });
    await createNode(ccm, { k3sArgs: ["--disable", "traefik,servicelb"] });
    const { by } = await doctor(cloudEnv(cloud));
    assert.equal(by["k3s-servicelb"].status, "fail");
    assert.match(by["k3s-servicelb"].result, new RegExp(`ServiceLB runs on 1 k3s server .*: ${lb};`));
    assert.match(by["k3s-servicelb"].fix!, /--disable=servicelb/);
    assert.equal(by["k3s-cloud-controller"].status, "fail");
    assert.match(by["k3s-cloud-controller"].result, new RegExp(`: ${ccm};`));
  }),
);

Deno.test(
  "a foreign Lease holder renewing now is a warning; so is this controller's Lease held",
  onCleanCluster(async () => {
    await using cloud = await startCloud();
    await healthyWorld(cloud);
    const plane = testControlPlane();
    const lease = (name: string, holder: string, renewed: Date) => ({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name, namespace: "kube-system" },
      spec: { holderIdentity: holder, leaseDurationSeconds: 15, renewTime: renewed.toISOString().replace("Z", "000Z") },
    });
    const leases = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
    await kubeOk(plane, "POST", leases, { body: lease("cloud-controller-manager", "hcloud-ccm_1", new Date()) });
    await kubeOk(plane, "POST", leases, {
      body: lease("ankra-cloud-ccm", "old-replica_2", new Date(Date.now() - 3_600_000)),
    });
    let { by, report } = await doctor(cloudEnv(cloud));
    assert.equal(by["other-cloud-controller"].status, "warn");
    assert.match(by["other-cloud-controller"].result, /kube-system\/cloud-controller-manager is held by hcloud-ccm_1/);
    assert.equal(by["leader-lease"].status, "pass", "a stale holder does not count");
    assert.equal(report.ok, true);
    await kubeOk(plane, "PUT", `${leases}/ankra-cloud-ccm`, {
      body: {
        ...lease("ankra-cloud-ccm", "live-replica_3", new Date()),
        metadata: {
          name: "ankra-cloud-ccm",
          namespace: "kube-system",
          resourceVersion: (await kubeOk<{ metadata: { resourceVersion: string } }>(
            plane,
            "GET",
            `${leases}/ankra-cloud-ccm`,
          )).metadata.resourceVersion,
        },
      },
    });
    ({ by } = await doctor(cloudEnv(cloud)));
    assert.equal(by["leader-lease"].status, "warn");
    assert.match(by["leader-lease"].result, /kube-system\/ankra-cloud-ccm is held by live-replica_3/);
  }),
);

Deno.test("RBAC of a ServiceAccount with only some permissions: the missing ones are named", async () => {
  await resetCluster();
  await using cloud = await startCloud();
  await healthyWorld(cloud);
  const plane = testControlPlane();
  const name = uniqueName("doctor-partial");
  await kubeOk(plane, "POST", "/api/v1/namespaces/default/serviceaccounts", { body: { metadata: { name } } });
  await kubeOk(plane, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
    body: {
      metadata: { name },
      rules: [
        { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] },
        { apiGroups: [""], resources: ["services"], verbs: ["get", "list", "watch", "patch", "update"] },
        { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "list", "watch"] },
      ],
    },
  });
  await kubeOk(plane, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    body: {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [{ kind: "ServiceAccount", name, namespace: "default" }],
    },
  });
  const dir = await Deno.makeTempDir({ prefix: "doctor-rbac-" });
  try {
    const request = await kubeOk<{ status: { token: string } }>(
      plane,
      "POST",
      `/api/v1/namespaces/default/serviceaccounts/${name}/token`,
      { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 600 } } },
    );
    const kubeconfig = `${dir}/kubeconfig`;
    await Deno.writeTextFile(kubeconfig, kubeconfigText(plane.url, plane.caCert, request.status.token));
    const { by, report } = await doctor(cloudEnv(cloud), [], kubeconfig);
    const rbac = by["rbac"];
    assert.equal(rbac.status, "fail");
    assert.match(rbac.result, new RegExp(`^system:serviceaccount:default:${name} lacks 13 permissions: `));
    for (
      const missing of [
        "create events",
        "patch nodes/status",
        "delete nodes",
        "patch services/status",
        "watch endpointslices (discovery.k8s.io)",
        "create leases (coordination.k8s.io) in kube-system",
        "update leases (coordination.k8s.io) named ankra-cloud-ccm in kube-system",
        "create tokenreviews (authentication.k8s.io)",
      ]
    ) assert.ok(rbac.result.includes(missing), `${missing} in ${rbac.result}`);
    assert.ok(!/\b(get|list|watch) nodes\b/.test(rbac.result), "granted permissions are not listed");
    assert.equal(by["nodes-matched"].status, "pass", "the partial identity still reads nodes");
    assert.equal(by["other-cloud-controller"].status, "pass", "and Leases");
    assert.equal(report.ok, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await kubeRequest(plane, "DELETE", `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${name}`);
    await kubeRequest(plane, "DELETE", `/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`);
    await kubeRequest(plane, "DELETE", `/api/v1/namespaces/default/serviceaccounts/${name}`);
    await resetCluster();
  }
});
