/**
 * The checklist as a whole: the order, skips that name what they wait for, the configuration fallback, the
 * output formats, the exit code and the token kept out of the output.
 */
import assert from "node:assert/strict";
import { checklist } from "../../../lib/doctor/checklist.ts";
import type { ChecklistInput } from "../../../lib/doctor/checklist_input.ts";
import { configWithoutCloudSettings, withoutTokenFileFlag } from "../../../lib/doctor/doctor.ts";
import { type CloudFacts, type ClusterFacts, leaseKey } from "../../../lib/doctor/facts.ts";
import { failedRead, fetched } from "../../../lib/doctor/fetched.ts";
import { doctorReport, exitCode, formatJson, formatText, summaryLine } from "../../../lib/doctor/report.ts";
import { registerSecret } from "../../../lib/log.ts";
import { capabilities, k3sArgs, network, node, server } from "./doctor_fixtures.ts";

const SETTINGS = {
  apiUrl: "https://cloud.example",
  highAvailability: "auto" as const,
  leaderElect: true,
  leaseName: "ankra-cloud-ccm",
  leaseNamespace: "kube-system",
  delegatedAuthorization: true,
  clusterName: "kubernetes",
};

const IDS = [
  "configuration",
  "api-reachable",
  "token-valid",
  "token-operate",
  "account-can-create",
  "load-balancer-quota",
  "cluster-name-unique",
  "duplicate-load-balancers",
  "kubernetes-api",
  "nodes-matched",
  "kubelet-external",
  "kube-proxy-node-ips",
  "server-labels",
  "ipv6-renumber",
  "private-network",
  "zone-capabilities",
  "k3s-servicelb",
  "k3s-cloud-controller",
  "node-addresses",
  "node-address-ports",
  "other-cloud-controller",
  "leader-lease",
  "rbac",
];

function healthyCloud(): CloudFacts {
  return {
    reachability: { ok: true, url: "u", status: 401, body: "" },
    zones: fetched([{ name: "de-fsn1" }]),
    servers: fetched([server("srv-1", "worker-1")]),
    networks: fetched([network("net-1", ["srv-1"])]),
    loadBalancers: fetched([]),
    probe: { created: false, failure: { kind: "not_found", status: 404, message: "zone not found" } },
    capabilities: { "de-fsn1": fetched(capabilities(2)) },
  };
}

function healthyCluster(): ClusterFacts {
  return {
    server: "https://k8s:6443",
    source: "/kubeconfig",
    reachability: { ok: true, url: "u", status: 200, body: "" },
    identity: fetched("admin"),
    version: fetched("v1.37.2"),
    nodes: fetched([
      node("worker-1", { k3sNodeArgs: k3sArgs("server", "--disable=servicelb", "--disable-cloud-controller") }),
    ]),
    leases: {
      [leaseKey("kube-system", "cloud-controller-manager")]: fetched(null),
      [leaseKey("kube-system", "k3s-cloud-controller-manager")]: fetched(null),
      [leaseKey("kube-system", "ankra-cloud-ccm")]: fetched(null),
    },
    access: fetched([{ check: { group: "", resource: "nodes", verb: "list" }, allowed: true }]),
    clusterUid: fetched("uid-a"),
    services: fetched([]),
  };
}

function input(extra: Partial<ChecklistInput> = {}): ChecklistInput {
  return {
    warnings: [],
    settings: SETTINGS,
    cloud: healthyCloud(),
    cluster: healthyCluster(),
    now: new Date(),
    ...extra,
  };
}

/** The checks of node-address mode, which a setup of Ankra load balancers skips. */
const NODE_ADDRESS_CHECKS = ["node-addresses", "node-address-ports"];

Deno.test("a healthy cluster: every check passes, in checklist order, exit code 0; node-address mode's say why not", () => {
  const findings = checklist(input());
  assert.deepEqual(findings.map((f) => f.id), IDS);
  for (const finding of findings) {
    if (NODE_ADDRESS_CHECKS.includes(finding.id) || finding.id === "server-labels") continue;
    assert.equal(finding.status, "pass", `${finding.id}: ${finding.result}`);
  }
  const labels = findings.find((f) => f.id === "server-labels")!;
  assert.equal(labels.status, "skip");
  assert.equal(labels.result, "skipped: --node-labels-from-server is not set: no server label is copied");
  for (const id of NODE_ADDRESS_CHECKS) {
    const finding = findings.find((f) => f.id === id)!;
    assert.equal(finding.status, "skip");
    assert.equal(
      finding.result,
      "skipped: node-address mode is not in use: no Service is served on node addresses " +
        "and --default-load-balancer-mode=load-balancer",
    );
  }
  assert.equal(exitCode(doctorReport("v0", findings)), 0);
});

Deno.test("a refused token fails once and skips what needs it, naming why; Kubernetes checks still run", () => {
  const cloud = healthyCloud();
  cloud.zones = failedRead({ kind: "unauthorized", status: 401, message: "list_zones: 401" });
  delete cloud.servers;
  delete cloud.probe;
  const findings = checklist(input({ cloud }));
  const by = Object.fromEntries(findings.map((f) => [f.id, f]));
  assert.equal(by["token-valid"].status, "fail");
  for (const id of ["token-operate", "account-can-create", "load-balancer-quota", "private-network"]) {
    assert.equal(by[id].status, "skip", id);
    assert.match(by[id].result, /refuses the token/);
  }
  assert.equal(by["nodes-matched"].status, "skip");
  assert.equal(by["kubelet-external"].status, "pass");
  assert.equal(by["rbac"].status, "pass");
  assert.equal(exitCode(doctorReport("v0", findings)), 1);
});

Deno.test("a configuration problem is the first finding; the Ankra Cloud checks are skipped, the others run", () => {
  const findings = checklist(input({
    problem: "ANKRA_CLOUD_TOKEN is not set: give the controller an Ankra Cloud API token",
    cloud: undefined,
    cloudSkipped: "the Ankra Cloud settings are not usable (see above)",
  }));
  assert.equal(findings[0].id, "configuration");
  assert.equal(findings[0].status, "fail");
  const by = Object.fromEntries(findings.map((f) => [f.id, f]));
  assert.equal(by["api-reachable"].status, "skip");
  assert.match(by["api-reachable"].result, /the Ankra Cloud settings are not usable/);
  assert.equal(by["kubelet-external"].status, "pass");
  assert.equal(by["k3s-servicelb"].status, "pass");
  assert.equal(by["rbac"].status, "pass");
});

Deno.test("no Kubernetes connection fails its check and skips the node checks", () => {
  const findings = checklist(input({ cluster: undefined, clusterProblem: "not running in a cluster" }));
  const by = Object.fromEntries(findings.map((f) => [f.id, f]));
  assert.equal(by["kubernetes-api"].status, "fail");
  assert.match(by["kubernetes-api"].fix!, /--kubeconfig/);
  for (const id of ["nodes-matched", "kubelet-external", "k3s-servicelb", "other-cloud-controller", "rbac"]) {
    assert.equal(by[id].status, "skip", id);
  }
  assert.equal(by["token-operate"].status, "pass");
});

Deno.test("the command line without the Ankra Cloud settings still gives the Kubernetes settings", () => {
  assert.deepEqual(
    withoutTokenFileFlag([
      "doctor",
      "--ankra-cloud-token-file",
      "/x",
      "--kubeconfig=/k",
      "--ankra_cloud_token_file=/y",
    ]),
    ["doctor", "--kubeconfig=/k"],
  );
  const config = configWithoutCloudSettings(["doctor", "--kubeconfig=/k", "--ankra-cloud-token-file=/missing"], {
    ANKRA_CLOUD_CA_BUNDLE: "/missing.pem",
  });
  assert.equal(config?.kubeconfig, "/k");
  assert.equal(configWithoutCloudSettings(["doctor", "--leader-elect-lease-duration=1s"], {}), undefined);
});

Deno.test("text output: marks, fixes indented under their line, a summary; JSON output: the documented shape", () => {
  const secret = "act_dGhpcy1pcy1hLWRvY3Rvci10ZXN0LXNlY3JldA";
  registerSecret(secret);
  const report = doctorReport("v9.9.9", [
    { id: "a", title: "A", status: "pass", result: "fine" },
    { id: "b", title: "B", status: "fail", result: `token ${secret} refused`, fix: "first\nsecond" },
    { id: "c", title: "C", status: "warn", result: "meh", fix: "do it" },
    { id: "d", title: "D", status: "skip", result: "skipped: later" },
  ]);
  const text = formatText(report, "heading");
  assert.equal(
    text,
    [
      "heading",
      "",
      "✓ A: fine",
      "✗ B: token [REDACTED] refused",
      "    first",
      "    second",
      "! C: meh",
      "    do it",
      "− D: skipped: later",
      "",
      "1 passed, 1 failed, 1 warning, 1 skipped: fix the failures above, then run the doctor again",
      "",
    ].join("\n"),
  );
  const json = JSON.parse(formatJson(report));
  assert.deepEqual(Object.keys(json), ["version", "ok", "findings"]);
  assert.equal(json.version, "v9.9.9");
  assert.equal(json.ok, false);
  assert.deepEqual(json.findings[0], { id: "a", title: "A", status: "pass", result: "fine" });
  assert.deepEqual(Object.keys(json.findings[1]), ["id", "title", "status", "result", "fix"]);
  assert.ok(!formatJson(report).includes(secret));
  assert.equal(
    summaryLine(doctorReport("v", [report.findings[0]])),
    "1 passed, 0 failed, 0 warnings, 0 skipped: ready",
  );
});

Deno.test("cluster-name-unique: another cluster's load balancers with this --cluster-name warn, naming each UID", () => {
  const ours = { "ccm.ankra.cloud/cluster": "kubernetes", "ccm.ankra.cloud/cluster-uid": "uid-a" };
  const cloud = healthyCloud();
  cloud.loadBalancers = fetched([
    { id: "lb-1", labels: ours },
    { id: "lb-2", labels: { "ccm.ankra.cloud/cluster": "kubernetes" } },
    { id: "lb-3", labels: { "ccm.ankra.cloud/cluster": "staging", "ccm.ankra.cloud/cluster-uid": "uid-s" } },
  ]);
  const alone = checklist(input({ cloud })).find((f) => f.id === "cluster-name-unique")!;
  assert.equal(alone.status, "pass", alone.result);
  assert.match(alone.result, /^no other cluster's load balancer carries --cluster-name kubernetes \(2 load balancers/);
  cloud.loadBalancers = fetched([
    { id: "lb-1", labels: ours },
    { id: "lb-9", labels: { ...ours, "ccm.ankra.cloud/cluster-uid": "uid-b" } },
  ]);
  const shared = checklist(input({ cloud })).find((f) => f.id === "cluster-name-unique")!;
  assert.equal(shared.status, "warn");
  assert.match(
    shared.result,
    /^1 other cluster\(s\) run with --cluster-name kubernetes: ccm\.ankra\.cloud\/cluster-uid=uid-b \(lb-9\)/,
  );
  assert.match(shared.fix!, /give each cluster its own --cluster-name/);
  const cluster = healthyCluster();
  delete cluster.clusterUid;
  const unknown = checklist(input({ cloud, cluster })).find((f) => f.id === "cluster-name-unique")!;
  assert.equal(unknown.status, "skip");
  assert.match(unknown.result, /the cluster's UID was not read/);
});
