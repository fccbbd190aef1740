/**
 * The chart's RBAC on the real kube-apiserver, asked as the API server answers it: `kubectl auth can-i
 * --as=system:serviceaccount:<namespace>:ankra-cloud-ccm` (the admin kubeconfig impersonating the controller's
 * ServiceAccount) for what the controller does — and for what it can no longer do: other Leases (node heartbeats in
 * kube-node-lease, kube-controller-manager's and kube-scheduler's leader Leases), `update` on Nodes and Services,
 * events.k8s.io. Then with the ServiceAccount's own token: reading its Lease by a name field selector (the leader
 * election's watch) is allowed, the same list without it and a write to a node's heartbeat Lease are refused.
 *
 * The objects are `helm template` of the chart (serviceaccount.yaml and rbac.yaml) into a namespace of this test,
 * the cluster-scoped names given a suffix of this test so that nothing collides with a Helm release of another test.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { kubectl } from "../support/chart/helm.ts";
import { applyDocs as apply, chartRbac, removeDocs as remove } from "../support/chart/chart_rbac.ts";
import { kubeOk, kubeRequest } from "../support/http/kube_http.ts";

const LEASE = "ankra-cloud-ccm";

/** `kubectl auth can-i …` as the ServiceAccount: "yes" or "no". */
async function canI(account: string, args: string[]): Promise<string> {
  const answer = await kubectl(["auth", "can-i", ...args, `--as=${account}`]);
  return answer.stdout.trim();
}

Deno.test("the chart's role allows what the controller does and no other Lease, no update, no events.k8s.io", async () => {
  const plane = testControlPlane();
  const namespace = uniqueName("ccm-rbac");
  const account = `system:serviceaccount:${namespace}:ankra-cloud-ccm`;
  await kubeOk(plane, "POST", "/api/v1/namespaces", { body: { metadata: { name: namespace } } });
  const file = await apply(await chartRbac(namespace, namespace));
  try {
    const allowed: string[][] = [
      ["get", "nodes"],
      ["list", "nodes"],
      ["watch", "nodes"],
      ["patch", "nodes"],
      ["delete", "nodes"],
      ["patch", "nodes", "--subresource=status"],
      ["get", "services", "-A"],
      ["list", "services", "-A"],
      ["watch", "services", "-A"],
      ["patch", "services", "-A"],
      ["patch", "services", "--subresource=status", "-A"],
      ["list", "endpointslices.discovery.k8s.io", "-A"],
      ["watch", "endpointslices.discovery.k8s.io", "-A"],
      ["create", "events", "-A"],
      ["patch", "events", "-A"],
      ["create", "leases.coordination.k8s.io", "-n", namespace],
      ["get", `leases.coordination.k8s.io/${LEASE}`, "-n", namespace],
      ["update", `leases.coordination.k8s.io/${LEASE}`, "-n", namespace],
      ["list", `leases.coordination.k8s.io/${LEASE}`, "-n", namespace],
      ["watch", `leases.coordination.k8s.io/${LEASE}`, "-n", namespace],
      ["create", "tokenreviews.authentication.k8s.io"],
      ["create", "subjectaccessreviews.authorization.k8s.io"],
      ["get", "namespaces/kube-system"],
    ];
    const refused: string[][] = [
      // Other Leases: node heartbeats, the other controllers' leader Leases, any other name in its namespace.
      ["update", "leases.coordination.k8s.io/worker-1", "-n", "kube-node-lease"],
      ["create", "leases.coordination.k8s.io", "-n", "kube-node-lease"],
      ["get", "leases.coordination.k8s.io", "-n", "kube-node-lease"],
      ["update", "leases.coordination.k8s.io/kube-controller-manager", "-n", "kube-system"],
      ["update", "leases.coordination.k8s.io/kube-scheduler", "-n", "kube-system"],
      ["get", "leases.coordination.k8s.io/kube-controller-manager", "-n", "kube-system"],
      ["update", "leases.coordination.k8s.io/another", "-n", namespace],
      ["get", "leases.coordination.k8s.io/another", "-n", namespace],
      ["list", "leases.coordination.k8s.io", "-n", namespace],
      ["delete", `leases.coordination.k8s.io/${LEASE}`, "-n", namespace],
      // Verbs the code never sends.
      ["update", "nodes"],
      ["update", "nodes", "--subresource=status"],
      ["create", "nodes"],
      ["update", "services", "-A"],
      ["update", "services", "--subresource=status", "-A"],
      ["create", "services", "-A"],
      ["delete", "services", "-A"],
      ["update", "events", "-A"],
      ["create", "events.events.k8s.io", "-A"],
      ["patch", "events.events.k8s.io", "-A"],
      ["get", "endpointslices.discovery.k8s.io", "-A"],
      ["get", "secrets", "-A"],
      ["get", "namespaces/default"],
      ["list", "namespaces"],
      ["get", "configmaps", "-n", namespace],
    ];
    for (const args of allowed) assert.equal(await canI(account, args), "yes", `can-i ${args.join(" ")}`);
    for (const args of refused) assert.equal(await canI(account, args), "no", `can-i ${args.join(" ")} is refused`);

    // The ServiceAccount's own token: what the leader election sends, and what it may not.
    const token = (await kubeOk<{ status: { token: string } }>(
      plane,
      "POST",
      `/api/v1/namespaces/${namespace}/serviceaccounts/ankra-cloud-ccm/token`,
      { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 600 } } },
    )).status.token;
    const leases = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;
    const body = (name: string, ns = namespace) => ({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name, namespace: ns },
      spec: { holderIdentity: "rbac-test", leaseDurationSeconds: 15 },
    });
    assert.equal((await kubeRequest(plane, "POST", leases, { token, body: body(LEASE) })).status, 201);
    const byName = await kubeRequest(plane, "GET", `${leases}?fieldSelector=metadata.name%3D${LEASE}`, { token });
    assert.equal(byName.status, 200, "the leader election's list by name is allowed");
    assert.equal((await kubeRequest(plane, "GET", leases, { token })).status, 403, "a list of every Lease is not");
    const watch = await kubeRequest(
      plane,
      "GET",
      `${leases}?fieldSelector=metadata.name%3D${LEASE}&watch=true&timeoutSeconds=1`,
      { token },
    );
    assert.equal(watch.status, 200, "the leader election's watch by name is allowed");
    const lease = await kubeOk<{ metadata: { resourceVersion: string } }>(plane, "GET", `${leases}/${LEASE}`, {
      token,
    });
    const renewed = await kubeRequest(plane, "PUT", `${leases}/${LEASE}`, {
      token,
      body: { ...body(LEASE), metadata: { name: LEASE, namespace, resourceVersion: lease.metadata.resourceVersion } },
    });
    assert.equal(renewed.status, 200, "its own Lease is renewed");
    const heartbeat = uniqueName("rbac-node");
    await kubeOk(plane, "POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", {
      body: body(heartbeat, "kube-node-lease"),
    });
    try {
      const stolen = await kubeRequest(
        plane,
        "PUT",
        `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${heartbeat}`,
        { token, body: body(heartbeat, "kube-node-lease") },
      );
      assert.equal(stolen.status, 403, "a node's heartbeat Lease cannot be written");
    } finally {
      await kubeRequest(plane, "DELETE", `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${heartbeat}`);
    }
  } finally {
    await remove(file);
    await kubeRequest(plane, "DELETE", `/api/v1/namespaces/${namespace}`);
  }
});

Deno.test("with metricsAuthorization none the chart binds no auth-delegator: no TokenReview, no SubjectAccessReview", async () => {
  const plane = testControlPlane();
  const namespace = uniqueName("ccm-rbac-none");
  const account = `system:serviceaccount:${namespace}:ankra-cloud-ccm`;
  const docs = await chartRbac(namespace, namespace, ["--set", "metricsAuthorization=none"]);
  assert.ok(!docs.some((d) => d.roleRef?.name === "system:auth-delegator"), "no binding to system:auth-delegator");
  await kubeOk(plane, "POST", "/api/v1/namespaces", { body: { metadata: { name: namespace } } });
  const file = await apply(docs);
  try {
    assert.equal(await canI(account, ["create", "tokenreviews.authentication.k8s.io"]), "no");
    assert.equal(await canI(account, ["create", "subjectaccessreviews.authorization.k8s.io"]), "no");
    assert.equal(await canI(account, ["list", "nodes"]), "yes", "the controller's own rights stay");
  } finally {
    await remove(file);
    await kubeRequest(plane, "DELETE", `/api/v1/namespaces/${namespace}`);
  }
});
