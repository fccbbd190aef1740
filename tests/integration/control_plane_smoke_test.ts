/**
 * Smoke tests of the test control plane: the Kubernetes behaviour the controllers rely on, proven on the real
 * kube-apiserver + etcd before any controller code touches it.
 */
import assert from "node:assert/strict";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { kubeletNode, kubeOk, kubeRequest } from "../support/http/kube_http.ts";
import { eventually } from "../support/wait/eventually.ts";

const UNINITIALIZED = "node.cloudprovider.kubernetes.io/uninitialized";

interface NodeDoc {
  metadata: { name: string; annotations?: Record<string, string>; resourceVersion: string };
  spec: { providerID?: string; taints?: { key: string; value?: string; effect: string }[] };
  status: { addresses: { type: string; address: string }[]; conditions: { type: string; status: string }[] };
}

Deno.test("the apiserver reports its real version, not the build placeholder", async () => {
  const plane = testControlPlane();
  const version = await kubeOk<{ gitVersion: string; major: string; minor: string }>(plane, "GET", "/version");
  assert.match(version.gitVersion, /^v1\.\d+\.\d+$/);
  assert.equal(version.major, "1");
  assert.ok(Number(version.minor) >= 29, `minor ${version.minor}`);
});

Deno.test("a node registered like an external-cloud-provider kubelet keeps its taint, status and provided IP", async () => {
  const plane = testControlPlane();
  const name = uniqueName("smoke-node");
  await kubeOk(plane, "POST", "/api/v1/nodes", {
    body: kubeletNode(name, {
      providedNodeIp: "10.0.0.5",
      addresses: [{ type: "InternalIP", address: "10.0.0.5" }, { type: "Hostname", address: name }],
    }),
  });
  const node = await kubeOk<NodeDoc>(plane, "GET", `/api/v1/nodes/${name}`);
  assert.ok(node.spec.taints?.some((t) => t.key === UNINITIALIZED && t.value === "true" && t.effect === "NoSchedule"));
  assert.equal(node.metadata.annotations?.["alpha.kubernetes.io/provided-node-ip"], "10.0.0.5");
  assert.deepEqual(node.status.addresses, [
    { type: "InternalIP", address: "10.0.0.5" },
    { type: "Hostname", address: name },
  ]);
  assert.equal(node.status.conditions.find((c) => c.type === "Ready")?.status, "True");
  await kubeOk(plane, "DELETE", `/api/v1/nodes/${name}`);
});

Deno.test("node status addresses are replaced, not merged, by a merge patch or a $patch: replace directive", async () => {
  const plane = testControlPlane();
  const name = uniqueName("smoke-addr");
  await kubeOk(plane, "POST", "/api/v1/nodes", {
    body: kubeletNode(name, {
      addresses: [{ type: "InternalIP", address: "10.0.0.9" }, { type: "Hostname", address: name }],
    }),
  });
  const cloudAddresses = [
    { type: "InternalIP", address: "fd64:1::9" },
    { type: "InternalIP", address: "10.0.0.7" },
    { type: "ExternalIP", address: "2001:db8::9" },
    { type: "Hostname", address: name },
  ];
  // A strategic merge patch without the directive merges by `type` and keeps addresses the cloud no longer has.
  await kubeOk(plane, "PATCH", `/api/v1/nodes/${name}/status`, {
    patch: "strategic",
    body: { status: { addresses: [{ type: "InternalIP", address: "10.0.0.7" }] } },
  });
  let node = await kubeOk<NodeDoc>(plane, "GET", `/api/v1/nodes/${name}`);
  assert.ok(node.status.addresses.some((a) => a.type === "Hostname"), "plain strategic merge keeps other entries");

  await kubeOk(plane, "PATCH", `/api/v1/nodes/${name}/status`, {
    patch: "strategic",
    body: { status: { addresses: [{ $patch: "replace" }, ...cloudAddresses] } },
  });
  node = await kubeOk<NodeDoc>(plane, "GET", `/api/v1/nodes/${name}`);
  assert.deepEqual(node.status.addresses, cloudAddresses);

  const reordered = [cloudAddresses[1], cloudAddresses[0], cloudAddresses[3]];
  await kubeOk(plane, "PATCH", `/api/v1/nodes/${name}/status`, {
    patch: "merge",
    body: { status: { addresses: reordered } },
  });
  node = await kubeOk<NodeDoc>(plane, "GET", `/api/v1/nodes/${name}`);
  assert.deepEqual(node.status.addresses, reordered);
  await kubeOk(plane, "DELETE", `/api/v1/nodes/${name}`);
});

Deno.test("a status patch through the subresource leaves the node's spec alone", async () => {
  const plane = testControlPlane();
  const name = uniqueName("smoke-spec");
  await kubeOk(plane, "POST", "/api/v1/nodes", { body: kubeletNode(name) });
  await kubeOk(plane, "PATCH", `/api/v1/nodes/${name}/status`, {
    body: { spec: { providerID: "ankracloud://de-fsn1/srv-1", taints: [] }, status: { addresses: [] } },
  });
  const node = await kubeOk<NodeDoc>(plane, "GET", `/api/v1/nodes/${name}`);
  assert.equal(node.spec.providerID, undefined);
  assert.ok(node.spec.taints?.some((t) => t.key === UNINITIALIZED));
  assert.deepEqual(node.status.addresses ?? [], []);
  await kubeOk(plane, "DELETE", `/api/v1/nodes/${name}`);
});

Deno.test("a LoadBalancer Service gets a ClusterIP and NodePorts and its status can be written", async () => {
  const plane = testControlPlane();
  const name = uniqueName("smoke-lb");
  const created = await kubeOk<{
    spec: { clusterIP: string; ports: { port: number; nodePort: number }[] };
  }>(plane, "POST", "/api/v1/namespaces/default/services", {
    body: {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name },
      spec: {
        type: "LoadBalancer",
        selector: { app: name },
        ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }, { name: "https", port: 443 }],
      },
    },
  });
  assert.match(created.spec.clusterIP, /^10\.96\.\d+\.\d+$/);
  for (const port of created.spec.ports) {
    assert.ok(port.nodePort >= 30000 && port.nodePort <= 32767, `nodePort ${port.nodePort}`);
  }
  await kubeOk(plane, "PATCH", `/api/v1/namespaces/default/services/${name}/status`, {
    body: { status: { loadBalancer: { ingress: [{ ip: "2001:db8::10", ipMode: "VIP" }, { ip: "203.0.113.10" }] } } },
  });
  const service = await kubeOk<{ status: { loadBalancer: { ingress: { ip: string }[] } } }>(
    plane,
    "GET",
    `/api/v1/namespaces/default/services/${name}`,
  );
  assert.deepEqual(service.status.loadBalancer.ingress.map((i) => i.ip), ["2001:db8::10", "203.0.113.10"]);
  await kubeOk(plane, "DELETE", `/api/v1/namespaces/default/services/${name}`);
});

Deno.test("the load-balancer cleanup finalizer holds a deleted Service until it is removed", async () => {
  const plane = testControlPlane();
  const name = uniqueName("smoke-fin");
  const path = `/api/v1/namespaces/default/services/${name}`;
  await kubeOk(plane, "POST", "/api/v1/namespaces/default/services", {
    body: {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, finalizers: ["service.kubernetes.io/load-balancer-cleanup"] },
      spec: { type: "LoadBalancer", ports: [{ port: 80 }] },
    },
  });
  await kubeOk(plane, "DELETE", path);
  const held = await kubeOk<{ metadata: { deletionTimestamp?: string } }>(plane, "GET", path);
  assert.ok(held.metadata.deletionTimestamp, "the Service is marked for deletion but still there");
  await kubeOk(plane, "PATCH", path, { body: { metadata: { finalizers: null } } });
  assert.equal((await kubeRequest(plane, "GET", path)).status, 404);
});

Deno.test("a ServiceAccount token is allowed exactly what its ClusterRole grants", async () => {
  const plane = testControlPlane();
  const name = uniqueName("smoke-sa");
  await kubeOk(plane, "POST", "/api/v1/namespaces/kube-system/serviceaccounts", {
    body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name } },
  });
  await kubeOk(plane, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
    body: {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name },
      rules: [
        { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] },
        { apiGroups: [""], resources: ["services/status"], verbs: ["patch"] },
      ],
    },
  });
  await kubeOk(plane, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    body: {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [{ kind: "ServiceAccount", name, namespace: "kube-system" }],
    },
  });
  const request = await kubeOk<{ status: { token: string } }>(
    plane,
    "POST",
    `/api/v1/namespaces/kube-system/serviceaccounts/${name}/token`,
    { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } } },
  );
  const token = request.status.token;
  assert.ok(token.split(".").length === 3, "a JWT");
  // RBAC changes reach the authorizer's cache within a moment: retry the allowed call briefly.
  await eventually(async () => (await kubeRequest(plane, "GET", "/api/v1/nodes?limit=1", { token })).status === 200, {
    timeoutMs: 5_000,
    intervalMs: 100,
    what: "the service account's node list answered 200",
  });
  assert.equal((await kubeRequest(plane, "GET", "/api/v1/namespaces/kube-system/secrets", { token })).status, 403);
  assert.equal((await kubeRequest(plane, "DELETE", "/api/v1/nodes/nothing", { token })).status, 403);
  assert.equal(
    (await kubeRequest(plane, "PATCH", "/api/v1/namespaces/default/services/nothing", { token, body: {} })).status,
    403,
  );
  assert.equal((await kubeRequest(plane, "GET", "/api/v1/nodes", { token: token + "x" })).status, 401);
});

Deno.test("a Lease can be created and updated, and a stale update is refused with 409", async () => {
  const plane = testControlPlane();
  const name = uniqueName("smoke-lease");
  const base = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
  const now = new Date().toISOString().replace("Z", "000Z");
  const created = await kubeOk<{ metadata: { resourceVersion: string }; spec: Record<string, unknown> }>(
    plane,
    "POST",
    base,
    {
      body: {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name },
        spec: { holderIdentity: "a", leaseDurationSeconds: 15, acquireTime: now, renewTime: now, leaseTransitions: 0 },
      },
    },
  );
  const updated = await kubeOk<{ metadata: { resourceVersion: string }; spec: { holderIdentity: string } }>(
    plane,
    "PUT",
    `${base}/${name}`,
    {
      body: {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name, resourceVersion: created.metadata.resourceVersion },
        spec: { ...created.spec, holderIdentity: "b", leaseTransitions: 1 },
      },
    },
  );
  assert.equal(updated.spec.holderIdentity, "b");
  const stale = await kubeRequest(plane, "PUT", `${base}/${name}`, {
    body: {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name, resourceVersion: created.metadata.resourceVersion },
      spec: { ...created.spec, holderIdentity: "c" },
    },
  });
  assert.equal(stale.status, 409);
  await kubeOk(plane, "DELETE", `${base}/${name}`);
});
