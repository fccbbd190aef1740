/**
 * The chart's ValidatingAdmissionPolicy, run by the real kube-apiserver: rendered with `admissionPolicy.enabled`,
 * applied, and tried with impersonated users (`kubectl --as/--as-group` from the admin kubeconfig). A user outside the
 * allowed users and groups is refused when creating a Service with a `load-balancer.ankra.cloud/*` annotation or
 * adding, changing or removing one, and may still create and change Services without touching them; an allowed user
 * and a member of an allowed group may. Node-address mode is the administrator's to give too: the tenant can neither
 * create a Service of the class `ankra.cloud/node-addresses` (nor turn one into a LoadBalancer of that class) nor set
 * `load-balancer.ankra.cloud/mode`; the allowed user can. The binding's namespace selector (a label of this test) keeps
 * the policy to this test's namespaces, so it touches no other test; a namespace without the label shows that it
 * applies only where it is bound.
 */
import assert from "node:assert/strict";
import { loadAll } from "js-yaml";
import { testControlPlane, uniqueName } from "../support/control_plane/control_plane.ts";
import { helmOk, kubectl, type ToolResult } from "../support/chart/helm.ts";
import { kubeOk, kubeRequest } from "../support/http/kube_http.ts";
import { eventually } from "../support/wait/eventually.ts";

const CHART = new URL("../../chart", import.meta.url).pathname;
const PREFIX = "load-balancer.ankra.cloud/";
const REFUSAL = /may not set, change or remove load-balancer\.ankra\.cloud\/\* annotations on Services/;

interface Doc {
  kind: string;
  metadata: { name: string };
  spec: Record<string, unknown> & { matchResources?: { namespaceSelector?: unknown } };
}

/** The policy and its binding as the chart renders them with `values`. */
async function renderPolicy(values: Record<string, unknown>): Promise<Doc[]> {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(file, JSON.stringify({ api: { token: "x" }, admissionPolicy: values }));
    const text = await helmOk(["template", "t", CHART, "-f", file]);
    return (loadAll(text) as (Doc | null)[]).filter((d): d is Doc =>
      d?.kind.startsWith("ValidatingAdmission") ?? false
    );
  } finally {
    await Deno.remove(file);
  }
}

/** kubectl as `user` (in `groups`), through the admin's impersonation right. */
function as(user: string, groups: string[], args: string[], stdin?: string): Promise<ToolResult> {
  const impersonation = [`--as=${user}`, ...groups.map((g) => `--as-group=${g}`)];
  if (stdin === undefined) return kubectl([...args, ...impersonation]);
  return (async () => {
    const file = await Deno.makeTempFile({ suffix: ".json" });
    try {
      await Deno.writeTextFile(file, stdin);
      return await kubectl([...args.map((a) => a === "-" ? file : a), ...impersonation]);
    } finally {
      await Deno.remove(file);
    }
  })();
}

function service(
  namespace: string,
  name: string,
  annotations: Record<string, string> = {},
  spec: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace, annotations },
    spec: { type: "LoadBalancer", ports: [{ port: 80 }], ...spec },
  });
}

const CLASS_REFUSAL = /may not give a Service spec\.loadBalancerClass ankra\.cloud\/node-addresses/;

Deno.test("the chart renders no admission policy by default; enabled, it is bound in every namespace with Deny", async () => {
  assert.deepEqual(await renderPolicy({}), [], "nothing without admissionPolicy.enabled");
  const docs = await renderPolicy({ enabled: true });
  assert.deepEqual(docs.map((d) => d.kind), ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]);
  assert.deepEqual(docs[1].spec.validationActions, ["Deny"]);
  assert.equal(docs[1].spec.matchResources, undefined, "every namespace without a selector");
});

Deno.test("a user outside the allowed set cannot set or change load-balancer annotations; allowed ones can", async () => {
  const plane = testControlPlane();
  const label = uniqueName("ccm-policy");
  const bound = uniqueName("ccm-policy-in");
  const unbound = uniqueName("ccm-policy-out");
  const tenant = uniqueName("tenant");
  const operator = uniqueName("operator");
  const admins = uniqueName("lb-admins");
  const member = uniqueName("member");
  const docs = await renderPolicy({
    enabled: true,
    allowedUsers: [operator],
    allowedGroups: [admins],
    namespaceSelector: { matchLabels: { [label]: "bound" } },
  });
  const file = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(file, JSON.stringify({ apiVersion: "v1", kind: "List", items: docs }));
  const role = uniqueName("ccm-policy-services");
  try {
    for (const namespace of [bound, unbound]) {
      await kubeOk(plane, "POST", "/api/v1/namespaces", {
        body: { metadata: { name: namespace, labels: namespace === bound ? { [label]: "bound" } : {} } },
      });
      // RBAC lets every one of them work with Services here: the policy, not RBAC, is what refuses.
      await kubeOk(plane, "POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, {
        body: {
          metadata: { name: role },
          rules: [{ apiGroups: [""], resources: ["services"], verbs: ["get", "list", "create", "update", "patch"] }],
        },
      });
      await kubeOk(plane, "POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`, {
        body: {
          metadata: { name: role },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role },
          subjects: [
            { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: tenant },
            { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: operator },
            { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: admins },
          ],
        },
      });
    }
    const applied = await kubectl(["apply", "-f", file]);
    assert.equal(applied.code, 0, applied.text);

    // (The API server compiled the CEL when it accepted the policy; its type-checking warnings come from a
    // controller of kube-controller-manager, which this control plane does not run.)
    // The policy takes effect once the API server has loaded it: a dry run of the tenant's annotated Service.
    const annotated = service(bound, "probe", { [`${PREFIX}edge`]: "edge-1" });
    await eventually(
      async () => {
        const probe = await as(tenant, [], ["create", "--dry-run=server", "-f", "-"], annotated);
        return probe.code !== 0 && REFUSAL.test(probe.text);
      },
      30_000,
      "the policy refusing the tenant",
    );

    // The tenant: refused with an annotation, at creation and by any later change of one.
    const created = await as(
      tenant,
      [],
      ["create", "-f", "-"],
      service(bound, "tenant-svc", { [`${PREFIX}edge`]: "e" }),
    );
    assert.notEqual(created.code, 0, "an annotated Service by the tenant is refused");
    assert.match(created.text, new RegExp(`user ${tenant} may not set, change or remove`));
    const plain = await as(tenant, [], ["create", "-f", "-"], service(bound, "tenant-svc"));
    assert.equal(plain.code, 0, `a Service without them is allowed: ${plain.text}`);
    const other = await as(tenant, [], ["annotate", "-n", bound, "service", "tenant-svc", "example.com/team=blue"]);
    assert.equal(other.code, 0, `another annotation is the tenant's own: ${other.text}`);
    const added = await as(tenant, [], ["annotate", "-n", bound, "service", "tenant-svc", `${PREFIX}network-id=net-9`]);
    assert.notEqual(added.code, 0, "adding one is refused");
    assert.match(added.text, REFUSAL);

    // The allowed user sets one; the tenant may neither change nor remove it, and may still change the rest.
    const byOperator = await as(operator, [], ["annotate", "-n", bound, "service", "tenant-svc", `${PREFIX}edge=e-1`]);
    assert.equal(byOperator.code, 0, `the allowed user sets it: ${byOperator.text}`);
    const changed = await as(tenant, [], [
      "annotate",
      "--overwrite",
      "-n",
      bound,
      "service",
      "tenant-svc",
      `${PREFIX}edge=e-2`,
    ]);
    assert.notEqual(changed.code, 0, "changing it is refused");
    assert.match(changed.text, REFUSAL);
    const removed = await as(tenant, [], ["annotate", "-n", bound, "service", "tenant-svc", `${PREFIX}edge-`]);
    assert.notEqual(removed.code, 0, "removing it is refused");
    assert.match(removed.text, REFUSAL);
    const ports = await as(tenant, [], [
      "patch",
      "-n",
      bound,
      "service",
      "tenant-svc",
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { ports: [{ port: 8080 }] }, metadata: { labels: { tier: "web" } } }),
    ]);
    assert.equal(ports.code, 0, `other changes with the annotation untouched pass: ${ports.text}`);
    const current = await kubeOk<{ metadata: { annotations: Record<string, string> } }>(
      plane,
      "GET",
      `/api/v1/namespaces/${bound}/services/tenant-svc`,
    );
    assert.equal(current.metadata.annotations[`${PREFIX}edge`], "e-1", "the allowed user's value stands");

    // A member of an allowed group may, as may anyone where the policy is not bound.
    const byMember = await as(member, [admins], [
      "annotate",
      "--overwrite",
      "-n",
      bound,
      "service",
      "tenant-svc",
      `${PREFIX}edge-`,
    ]);
    assert.equal(byMember.code, 0, `a member of an allowed group removes it: ${byMember.text}`);
    const elsewhere = await as(tenant, [], ["create", "-f", "-"], service(unbound, "free", { [`${PREFIX}edge`]: "e" }));
    assert.equal(elsewhere.code, 0, `outside the namespace selector the policy does not apply: ${elsewhere.text}`);
  } finally {
    await kubectl(["delete", "--ignore-not-found", "-f", file]);
    await Deno.remove(file);
    // The test control plane runs no namespace controller: a deleted namespace keeps its Services, which a later
    // test's service controller would serve. The Services go first, then the namespaces.
    for (const namespace of [bound, unbound]) {
      const listed = await kubeOk<{ items: { metadata: { name: string } }[] }>(
        plane,
        "GET",
        `/api/v1/namespaces/${namespace}/services`,
      );
      for (const item of listed.items) {
        await kubeRequest(plane, "DELETE", `/api/v1/namespaces/${namespace}/services/${item.metadata.name}`);
      }
      await eventually(
        async () =>
          (await kubeOk<{ items: unknown[] }>(plane, "GET", `/api/v1/namespaces/${namespace}/services`)).items
            .length === 0,
        10_000,
        `the Services of ${namespace} gone`,
      );
      await kubeRequest(plane, "DELETE", `/api/v1/namespaces/${namespace}`);
    }
  }
});

Deno.test("node-address mode is the administrator's: the class and the mode annotation are refused to a tenant", async () => {
  const plane = testControlPlane();
  const label = uniqueName("ccm-policy");
  const namespace = uniqueName("ccm-policy-nodes");
  const tenant = uniqueName("tenant");
  const operator = uniqueName("operator");
  const docs = await renderPolicy({
    enabled: true,
    allowedUsers: [operator],
    allowedGroups: [],
    namespaceSelector: { matchLabels: { [label]: "bound" } },
  });
  const file = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(file, JSON.stringify({ apiVersion: "v1", kind: "List", items: docs }));
  const role = uniqueName("ccm-policy-services");
  try {
    await kubeOk(plane, "POST", "/api/v1/namespaces", {
      body: { metadata: { name: namespace, labels: { [label]: "bound" } } },
    });
    await kubeOk(plane, "POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, {
      body: {
        metadata: { name: role },
        rules: [{ apiGroups: [""], resources: ["services"], verbs: ["get", "list", "create", "update", "patch"] }],
      },
    });
    await kubeOk(plane, "POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`, {
      body: {
        metadata: { name: role },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role },
        subjects: [
          { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: tenant },
          { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: operator },
        ],
      },
    });
    const applied = await kubectl(["apply", "-f", file]);
    assert.equal(applied.code, 0, applied.text);
    const classed = (name: string) => service(namespace, name, {}, { loadBalancerClass: "ankra.cloud/node-addresses" });
    await eventually(
      async () => {
        const probe = await as(tenant, [], ["create", "--dry-run=server", "-f", "-"], classed("probe"));
        return probe.code !== 0 && CLASS_REFUSAL.test(probe.text);
      },
      30_000,
      "the policy refusing the tenant the node-address class",
    );

    // The tenant: no Service of the class, no mode annotation, no ClusterIP Service turned into one of the class.
    const created = await as(tenant, [], ["create", "-f", "-"], classed("tenant-dns"));
    assert.notEqual(created.code, 0, "a Service of the class by the tenant is refused");
    assert.match(created.text, new RegExp(`user ${tenant} may not give a Service spec\\.loadBalancerClass`));
    const annotated = await as(
      tenant,
      [],
      ["create", "-f", "-"],
      service(namespace, "tenant-web", {
        [`${PREFIX}mode`]: "node-addresses",
      }),
    );
    assert.notEqual(annotated.code, 0, "the mode annotation by the tenant is refused");
    assert.match(annotated.text, REFUSAL);
    const internal = await as(
      tenant,
      [],
      ["create", "-f", "-"],
      JSON.stringify({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "tenant-internal", namespace },
        spec: { type: "ClusterIP", ports: [{ port: 53, protocol: "UDP" }] },
      }),
    );
    assert.equal(internal.code, 0, `a ClusterIP Service is the tenant's own: ${internal.text}`);
    const promoted = await as(tenant, [], [
      "patch",
      "-n",
      namespace,
      "service",
      "tenant-internal",
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { type: "LoadBalancer", loadBalancerClass: "ankra.cloud/node-addresses" } }),
    ]);
    assert.notEqual(promoted.code, 0, "turning it into a LoadBalancer of the class is refused");
    assert.match(promoted.text, CLASS_REFUSAL);
    const plain = await as(tenant, [], ["create", "-f", "-"], service(namespace, "tenant-lb"));
    assert.equal(plain.code, 0, `a class-less LoadBalancer without annotations is allowed: ${plain.text}`);

    // The allowed user: a Service of the class, and the annotation; the tenant then changes the rest of its Service.
    const byOperator = await as(operator, [], ["create", "-f", "-"], classed("dns"));
    assert.equal(byOperator.code, 0, `the allowed user creates one of the class: ${byOperator.text}`);
    const modeByOperator = await as(operator, [], [
      "annotate",
      "-n",
      namespace,
      "service",
      "tenant-lb",
      `${PREFIX}mode=node-addresses`,
    ]);
    assert.equal(modeByOperator.code, 0, `the allowed user sets the mode: ${modeByOperator.text}`);
    const labelled = await as(tenant, [], ["label", "-n", namespace, "service", "dns", "tier=dns"]);
    assert.equal(labelled.code, 0, `the tenant changes a Service of the class that it keeps: ${labelled.text}`);
    const current = await kubeOk<{ spec: { loadBalancerClass?: string } }>(
      plane,
      "GET",
      `/api/v1/namespaces/${namespace}/services/dns`,
    );
    assert.equal(current.spec.loadBalancerClass, "ankra.cloud/node-addresses");
  } finally {
    await kubectl(["delete", "--ignore-not-found", "-f", file]);
    await Deno.remove(file);
    // The test control plane runs no namespace controller: the Services go first, then the namespace.
    const listed = await kubeOk<{ items: { metadata: { name: string } }[] }>(
      plane,
      "GET",
      `/api/v1/namespaces/${namespace}/services`,
    );
    for (const item of listed.items) {
      await kubeRequest(plane, "DELETE", `/api/v1/namespaces/${namespace}/services/${item.metadata.name}`);
    }
    await eventually(
      async () =>
        (await kubeOk<{ items: unknown[] }>(plane, "GET", `/api/v1/namespaces/${namespace}/services`)).items.length ===
          0,
      10_000,
      `the Services of ${namespace} gone`,
    );
    await kubeRequest(plane, "DELETE", `/api/v1/namespaces/${namespace}`);
  }
});
