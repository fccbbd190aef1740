/**
 * `deploy/systemd/write-kubeconfig.sh`, run against the test control plane as the guide runs it: it writes a 0600
 * kubeconfig whose identity may do what the controller needs and nothing more (`kubectl auth can-i`,
 * SelfSubjectRulesReview), with either kind of token — one requested for a duration, or the one
 * kube-controller-manager puts in a service-account-token Secret.
 */
import assert from "node:assert/strict";
import { loadAll } from "js-yaml";
import { runCommand } from "../support/systemd/command_output.ts";
import { testControlPlane } from "../support/control_plane/control_plane.ts";
import { eventually } from "../support/wait/eventually.ts";
import { toolPath } from "../support/chart/helm.ts";
import { kubeOk, kubeRequest } from "../support/http/kube_http.ts";
import { RBAC, removeSystemdRbac, writeKubeconfig } from "../support/systemd/systemd_install.ts";

Deno.test("write-kubeconfig.sh writes a 0600 kubeconfig that may do exactly what the controller needs", async () => {
  const plane = testControlPlane();
  const dir = await Deno.makeTempDir({ prefix: "ccm-kubeconfig-" });
  const output = `${dir}/etc/kubeconfig`;
  try {
    const written = await writeKubeconfig(output, ["--token-source=request", "--duration=1h"]);
    assert.equal(written.code, 0, written.stderr);
    assert.match(written.stderr, /the token expires \d{4}-\d\d-\d\d/);
    assert.equal((await Deno.stat(output)).mode! & 0o777, 0o600);
    const text = await Deno.readTextFile(output);
    assert.match(text, new RegExp(`server: ${plane.url.replaceAll(".", "\\.")}`));
    assert.match(text, /certificate-authority-data: \S+/);
    const token = /token: (\S+)/.exec(text)![1];
    const kubectl = (args: string[]) => runCommand(toolPath("kubectl"), [`--kubeconfig=${output}`, ...args]);
    const whoami = await kubectl(["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"]);
    assert.equal(whoami.stdout, "system:serviceaccount:kube-system:ankra-cloud-ccm", whoami.stderr);

    // Everything the ClusterRole names, the Role's verbs on the one Lease in kube-system, and the reviews of
    // /metrics callers, are allowed…
    const documents = loadAll(await Deno.readTextFile(RBAC)) as { kind: string; rules?: Rule[] }[];
    const role = documents.find((d) => d.kind === "ClusterRole")!;
    const leaseRole = documents.find((d) => d.kind === "Role")!;
    const expand = (rules: Rule[]) => {
      const found: [verb: string, resource: string, subresource: string, name: string][] = [];
      for (const rule of rules) {
        for (const group of rule.apiGroups) {
          for (const resource of rule.resources) {
            const [base, sub] = resource.split("/");
            for (const name of rule.resourceNames ?? [""]) {
              for (const verb of rule.verbs) found.push([verb, group ? `${base}.${group}` : base, sub ?? "", name]);
            }
          }
        }
      }
      return found;
    };
    const allowed = expand(role.rules!);
    allowed.push(["create", "tokenreviews.authentication.k8s.io", "", ""]);
    allowed.push(["create", "subjectaccessreviews.authorization.k8s.io", "", ""]);
    const inKubeSystem = expand(leaseRole.rules!);
    for (const [verb, resource, subresource, name] of [...allowed, ...inKubeSystem]) {
      const args = [
        "auth",
        "can-i",
        verb,
        name ? `${resource}/${name}` : resource,
        ...(subresource ? [`--subresource=${subresource}`] : []),
        ...(inKubeSystem.some((r) => r[0] === verb && r[1] === resource && r[3] === name) ? ["-n", "kube-system"] : []),
      ];
      const answer = await kubectl(args);
      assert.equal(answer.stdout.trim(), "yes", `can-i ${args.slice(2).join(" ")}: ${answer.stdout}${answer.stderr}`);
    }
    // …and nothing else the controller has no use for.
    const refused: string[][] = [
      ["create", "secrets"],
      ["get", "secrets"],
      ["list", "secrets", "--all-namespaces"],
      ["create", "services"],
      ["delete", "services"],
      ["create", "nodes"],
      ["delete", "leases.coordination.k8s.io"],
      ["update", "leases.coordination.k8s.io/kube-controller-manager", "-n", "kube-system"],
      ["update", "leases.coordination.k8s.io", "-n", "kube-node-lease"],
      ["update", "nodes"],
      ["update", "services"],
      ["create", "pods"],
      ["get", "configmaps"],
      ["create", "serviceaccounts", "--subresource=token"],
      ["impersonate", "users"],
      ["escalate", "clusterroles.rbac.authorization.k8s.io"],
      ["*", "*"],
    ];
    for (const args of refused) {
      const answer = await kubectl(["auth", "can-i", ...args]);
      assert.equal(answer.stdout.trim(), "no", `can-i ${args.join(" ")} must be refused`);
    }
    // Exactly: every rule the API server reports for this identity is one of those — cluster-wide rights in
    // "default", and in kube-system the Role's rights on the Lease (by name) besides.
    // 1.37 lets every authenticated identity read ClusterTrustBundles (system:basic-user); 1.33 does not.
    const minor = Number.parseInt((await kubeOk<{ minor: string }>(plane, "GET", "/version")).minor, 10);
    const everyone = minor >= 37
      ? ["get", "list", "watch"].map((verb) => `${verb} clustertrustbundles.certificates.k8s.io`)
      : [];
    const rightText = ([verb, resource, sub, name]: string[]) =>
      `${verb} ${resource}${sub ? `/${sub}` : ""}${name ? ` ${name}` : ""}`;
    for (const namespace of ["default", "kube-system"]) {
      const review = await kubeOk<{ status: { resourceRules: Rule[] } }>(
        plane,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
        {
          token,
          body: { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectRulesReview", spec: { namespace } },
        },
      );
      const expected = new Set([...allowed, ...(namespace === "kube-system" ? inKubeSystem : [])].map(rightText));
      for (const self of ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]) {
        expected.add(`create ${self}.authorization.k8s.io`); // system:basic-user, every authenticated identity
      }
      expected.add("create selfsubjectreviews.authentication.k8s.io"); // `kubectl auth whoami`, same
      for (const right of everyone) expected.add(right);
      const granted = expand(review.status.resourceRules).map(rightText);
      assert.deepEqual(granted.filter((g) => !expected.has(g)), [], `no right beyond the controller's in ${namespace}`);
      assert.deepEqual([...expected].filter((e) => !granted.includes(e)), [], `every right it needs in ${namespace}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
    await removeSystemdRbac();
  }
});

interface Rule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

Deno.test("write-kubeconfig.sh waits for the token kube-controller-manager puts in the Secret", async () => {
  // The test control plane runs no kube-controller-manager: the test fills in the Secret as its token controller
  // would, with a token bound to that Secret.
  const plane = testControlPlane();
  const dir = await Deno.makeTempDir({ prefix: "ccm-kubeconfig-" });
  const output = `${dir}/kubeconfig`;
  const path = "/api/v1/namespaces/kube-system/secrets/ankra-cloud-ccm-token";
  let stop = false;
  const tokenController = (async () => {
    // Watches for the Secret the script creates (or for the script to have ended without one).
    const secret = await eventually(async () => {
      if (stop) return "stopped";
      const found = await kubeRequest<{ metadata: { uid: string }; data?: Record<string, string> }>(
        plane,
        "GET",
        path,
      );
      return found.status === 200 && !found.body.data?.token && found.body;
    }, { timeoutMs: 90_000, intervalMs: 200, what: "the Secret write-kubeconfig.sh creates" });
    if (secret === "stopped") return;
    const issued = await kubeOk<{ status: { token: string } }>(
      plane,
      "POST",
      "/api/v1/namespaces/kube-system/serviceaccounts/ankra-cloud-ccm/token",
      {
        body: {
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenRequest",
          spec: {
            expirationSeconds: 3600,
            boundObjectRef: {
              kind: "Secret",
              apiVersion: "v1",
              name: "ankra-cloud-ccm-token",
              uid: secret.metadata.uid,
            },
          },
        },
      },
    );
    await kubeOk(plane, "PATCH", path, { body: { data: { token: btoa(issued.status.token) } } });
  })();
  try {
    const written = await writeKubeconfig(output, []);
    assert.equal(written.code, 0, written.stderr);
    assert.match(written.stderr, /token: Secret kube-system\/ankra-cloud-ccm-token/);
    assert.equal((await Deno.stat(output)).mode! & 0o777, 0o600);
    const secret = await kubeOk<{ type: string; metadata: { annotations: Record<string, string> } }>(
      plane,
      "GET",
      path,
    );
    assert.equal(secret.type, "kubernetes.io/service-account-token");
    assert.equal(secret.metadata.annotations["kubernetes.io/service-account.name"], "ankra-cloud-ccm");
    const listNodes = await runCommand(toolPath("kubectl"), [
      `--kubeconfig=${output}`,
      "auth",
      "can-i",
      "list",
      "nodes",
    ]);
    assert.equal(listNodes.stdout.trim(), "yes");
  } finally {
    stop = true;
    await tokenController;
    await Deno.remove(dir, { recursive: true });
    await removeSystemdRbac();
  }
});
