/**
 * What the setup needs, as the doctor decides it from the Services (the controller's own mode rule) and the account's
 * load balancers, and the checklist of a setup that serves every Service on node addresses: no load balancer, no
 * private network, no zone, no quota, no token that may operate — each skipped saying why, in the text and in the
 * JSON, and exit code 0 without the operate probe's answer (it is not sent).
 */
import assert from "node:assert/strict";
import { checklist } from "../../../lib/doctor/checklist.ts";
import type { ChecklistInput } from "../../../lib/doctor/checklist_input.ts";
import type { DoctorSettings } from "../../../lib/doctor/doctor_settings.ts";
import { leaseKey, type ServiceFacts } from "../../../lib/doctor/facts.ts";
import { fetched } from "../../../lib/doctor/fetched.ts";
import { doctorReport, exitCode, formatJson, formatText } from "../../../lib/doctor/report.ts";
import { needsFromFacts, ownLoadBalancers, setupNeeds } from "../../../lib/doctor/setup_needs.ts";
import { slimService } from "../../support/fakes/slim_service.ts";
import { k3sArgs, node, server } from "./doctor_fixtures.ts";

const MODE = "load-balancer.ankra.cloud/mode";
const SETTINGS: DoctorSettings = {
  apiUrl: "https://cloud.example",
  highAvailability: "auto",
  leaderElect: true,
  leaseName: "ankra-cloud-ccm",
  leaseNamespace: "kube-system",
  delegatedAuthorization: true,
  clusterName: "one",
};
const NODE_MODE: DoctorSettings = { ...SETTINGS, defaultLoadBalancerMode: "node-addresses" };

function service(name: string, extra: Partial<ServiceFacts> = {}): ServiceFacts {
  return slimService({ namespace: "kube-system", name, ...extra });
}

Deno.test("needs: a load balancer when a Service is on one or a new one would be; node addresses likewise", () => {
  const traefik = service("traefik");
  // The default mode decides for the class-less Service, and for a new one.
  let needs = setupNeeds(NODE_MODE, [traefik], []);
  assert.equal(needs.loadBalancer.needed, false);
  assert.match(
    needs.loadBalancer.why,
    /every LoadBalancer Service is served on node addresses \(1 Service: kube-system\/traefik\)/,
  );
  assert.match(needs.loadBalancer.why, /a new one would be too \(--default-load-balancer-mode=node-addresses\)/);
  assert.equal(needs.nodeAddresses.needed, true);
  assert.equal(needs.operate.needed, false);
  assert.match(needs.operate.why, /writes nothing to Ankra Cloud.*a read-only token is enough/);
  // One Service asks for a load balancer: everything a load balancer needs applies again.
  needs = setupNeeds(NODE_MODE, [traefik, service("shop", { annotations: { [MODE]: "load-balancer" } })], []);
  assert.equal(needs.loadBalancer.needed, true);
  assert.match(needs.loadBalancer.why, /^1 Service on Ankra load balancers \(kube-system\/shop\)$/);
  assert.equal(needs.operate.needed, true);
  // The load-balancer default: a Service of the class is on node addresses, a new one would get a load balancer.
  needs = setupNeeds(SETTINGS, [service("dns", { loadBalancerClass: "ankra.cloud/node-addresses" })], []);
  assert.deepEqual([needs.loadBalancer.needed, needs.nodeAddresses.needed], [true, true]);
  assert.match(needs.loadBalancer.why, /--default-load-balancer-mode=load-balancer: a new LoadBalancer Service/);
  // Not our Services: another class, not LoadBalancer, being deleted.
  needs = setupNeeds(SETTINGS, [
    service("metallb", { loadBalancerClass: "metallb.io/metallb", annotations: { [MODE]: "node-addresses" } }),
    service("internal", { type: "ClusterIP", annotations: { [MODE]: "node-addresses" } }),
    service("going", { annotations: { [MODE]: "node-addresses" }, deletionTimestamp: "2026-01-01T00:00:00Z" }),
  ], []);
  assert.equal(needs.nodeAddresses.needed, false);
  assert.match(needs.nodeAddresses.why, /^no Service is served on node addresses and --default-load-balancer-mode=/);
});

Deno.test("needs: what could not be read counts as needed; this cluster's load balancers need a token that operates", () => {
  const unknown = setupNeeds(NODE_MODE, undefined, undefined);
  assert.equal(unknown.loadBalancer.needed, true);
  assert.match(unknown.loadBalancer.why, /the Services were not listed/);
  assert.equal(unknown.operate.needed, true);
  const leftOver = setupNeeds(NODE_MODE, [service("traefik")], ["lb-1"]);
  assert.equal(leftOver.loadBalancer.needed, false);
  assert.equal(leftOver.operate.needed, true);
  assert.match(leftOver.operate.why, /holds 1 load balancer of this cluster \(lb-1\), which the controller deletes/);
  const unlisted = setupNeeds(NODE_MODE, [service("traefik")], undefined);
  assert.equal(unlisted.operate.needed, true);
  assert.match(unlisted.operate.why, /load balancers were not listed/);
  // Whose load balancers: this cluster's name and UID (or none); not another cluster's, not a released one.
  const labels = (extra: Record<string, string>) => ({ "ccm.ankra.cloud/cluster": "one", ...extra });
  assert.deepEqual(
    ownLoadBalancers(
      [
        { id: "lb-mine", labels: labels({ "ccm.ankra.cloud/cluster-uid": "uid-1" }) },
        { id: "lb-go", labels: labels({}) },
        { id: "lb-twin", labels: labels({ "ccm.ankra.cloud/cluster-uid": "uid-2" }) },
        { id: "lb-kept", labels: labels({ "ccm.ankra.cloud/released": "default.web" }) },
        { id: "lb-other", labels: { "ccm.ankra.cloud/cluster": "two" } },
      ],
      "one",
      "uid-1",
    ),
    ["lb-go", "lb-mine"],
  );
  const facts = needsFromFacts(NODE_MODE, {
    cloud: { loadBalancers: fetched([{ id: "lb-twin", labels: labels({ "ccm.ankra.cloud/cluster-uid": "uid-2" }) }]) },
    cluster: { services: fetched([service("traefik")]), clusterUid: fetched("uid-1") },
  });
  assert.equal(facts.operate.needed, false, "another cluster of the same name has it");
});

/** A one-node k3s cluster with no private network, as the k3s guide sets it up, and a read-only token. */
function k3sSingleNode(): ChecklistInput {
  return {
    warnings: [],
    settings: NODE_MODE,
    cloud: {
      reachability: { ok: true, url: "u", status: 401, body: "" },
      zones: fetched([{ name: "de-fsn1" }]),
      servers: fetched([{ ...server("srv-1", "k3s-1"), public_ipv6: "2001:db8:1:2::1", public_ipv4: "198.51.100.5" }]),
      loadBalancers: fetched([]),
      // Nothing else was read: no network, no zone capabilities, no operate probe.
      capabilities: {},
    },
    cluster: {
      server: "https://k8s:6443",
      source: "/etc/rancher/k3s/k3s.yaml",
      reachability: { ok: true, url: "u", status: 200, body: "" },
      identity: fetched("system:admin"),
      version: fetched("v1.37.2+k3s1"),
      nodes: fetched([
        node("k3s-1", {
          providerID: "ankracloud://de-fsn1/srv-1",
          taints: [],
          ready: "True",
          k3sNodeArgs: k3sArgs("server", "--disable=servicelb", "--disable-cloud-controller"),
        }),
      ]),
      services: fetched([
        service("traefik", {
          ipFamilies: ["IPv4"],
          ports: [{ protocol: "TCP", port: 80 }, { protocol: "TCP", port: 443 }],
        }),
      ]),
      pods: fetched([]),
      leases: {
        [leaseKey("kube-system", "cloud-controller-manager")]: fetched(null),
        [leaseKey("kube-system", "k3s-cloud-controller-manager")]: fetched(null),
        [leaseKey("kube-system", "ankra-cloud-ccm")]: fetched(null),
      },
      access: fetched([{ check: { group: "", resource: "nodes", verb: "list" }, allowed: true }]),
      clusterUid: fetched("uid-1"),
    },
    now: new Date(),
  };
}

Deno.test("a single-node cluster served on node addresses: what does not apply is skipped, saying why; exit 0", () => {
  const findings = checklist(k3sSingleNode());
  const by = Object.fromEntries(findings.map((f) => [f.id, f]));
  for (const id of ["account-can-create", "load-balancer-quota", "private-network", "zone-capabilities"]) {
    assert.equal(by[id].status, "skip", id);
    assert.match(
      by[id].result,
      /^skipped: no Ankra load balancer is needed: every LoadBalancer Service is served on node addresses \(1 Service: kube-system\/traefik\)/,
    );
  }
  for (const id of ["token-operate", "cluster-name-unique"]) {
    assert.equal(by[id].status, "skip", id);
    assert.match(by[id].result, /^skipped: the token need not make changes: node-address mode writes nothing/);
  }
  for (const id of ["node-addresses", "node-address-ports", "nodes-matched", "ipv6-renumber", "token-valid", "rbac"]) {
    assert.equal(by[id].status, "pass", `${id}: ${by[id].result}`);
  }
  assert.match(by["node-addresses"].result, /1 Service in node-address mode \(kube-system\/traefik\)/);
  const report = doctorReport("v0", findings);
  assert.equal(exitCode(report), 0);
  const text = formatText(report);
  assert.match(text, /\n− One private network for load balancers: skipped: no Ankra load balancer is needed: /);
  assert.match(text, /\n− API token may make changes \(operate\): skipped: the token need not make changes: /);
  const json = JSON.parse(formatJson(report));
  const operate = json.findings.find((f: { id: string }) => f.id === "token-operate");
  assert.equal(operate.status, "skip");
  assert.match(operate.result, /a read-only token is enough/);
});
