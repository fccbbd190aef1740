/** The doctor leaves nodes labelled `node.ankra.cloud/managed=false` out of its node checks, as the controller does. */
import assert from "node:assert/strict";
import { checklist } from "../../../lib/doctor/checklist.ts";
import type { ChecklistInput } from "../../../lib/doctor/checklist_input.ts";
import { leaseKey } from "../../../lib/doctor/facts.ts";
import { fetched } from "../../../lib/doctor/fetched.ts";
import { capabilities, k3sArgs, network, node, server } from "./doctor_fixtures.ts";

function input(nodes: ReturnType<typeof node>[]): ChecklistInput {
  return {
    warnings: [],
    settings: {
      apiUrl: "https://cloud.example",
      highAvailability: "auto",
      leaderElect: true,
      leaseName: "ankra-cloud-ccm",
      leaseNamespace: "kube-system",
      delegatedAuthorization: true,
      clusterName: "kubernetes",
    },
    cloud: {
      reachability: { ok: true, url: "u", status: 401, body: "" },
      zones: fetched([{ name: "de-fsn1" }]),
      servers: fetched([server("srv-1", "worker-1")]),
      networks: fetched([network("net-1", ["srv-1"])]),
      loadBalancers: fetched([]),
      probe: { created: false, failure: { kind: "not_found", status: 404, message: "zone not found" } },
      capabilities: { "de-fsn1": fetched(capabilities(2)) },
    },
    cluster: {
      server: "https://k8s:6443",
      source: "/kubeconfig",
      reachability: { ok: true, url: "u", status: 200, body: "" },
      identity: fetched("admin"),
      version: fetched("v1.37.2"),
      nodes: fetched(nodes),
      leases: {
        [leaseKey("kube-system", "cloud-controller-manager")]: fetched(null),
        [leaseKey("kube-system", "k3s-cloud-controller-manager")]: fetched(null),
        [leaseKey("kube-system", "ankra-cloud-ccm")]: fetched(null),
      },
      access: fetched([{ check: { group: "", resource: "nodes", verb: "list" }, allowed: true }]),
    },
    now: new Date(),
  };
}

Deno.test("an on-premises node labelled node.ankra.cloud/managed=false fails no node check", () => {
  const worker = node("worker-1", {
    k3sNodeArgs: k3sArgs("server", "--disable=servicelb", "--disable-cloud-controller"),
  });
  // Registered by a kubelet without --cloud-provider=external (no providerID, no taint), and no server of its name.
  const onPrem = node("rack-7", { providerID: undefined, taints: [] });
  const status = (nodes: ReturnType<typeof node>[]) =>
    Object.fromEntries(checklist(input(nodes)).map((f) => [f.id, f.status]));
  const unlabelled = status([worker, onPrem]);
  assert.equal(unlabelled["nodes-matched"], "fail", "without the label it is a node without a server");
  assert.equal(unlabelled["kubelet-external"], "fail");
  const labelled = status([worker, { ...onPrem, labels: { "node.ankra.cloud/managed": "false" } }]);
  assert.equal(labelled["nodes-matched"], "pass");
  assert.equal(labelled["kubelet-external"], "pass");
});
